//! The options of `sqliosim run`, which are the configuration's overrides: the clap
//! definition the command line is parsed into is the type [`RunSettings::resolve`] reads, so a
//! run option is declared once. `None`, empty or false means not given (the configuration
//! file's value stands). It lives here rather than in `cli` because `config` comes first in the
//! layers; `cli` re-exports it. Pure data: no I/O.
//!
//! [`RunSettings::resolve`]: super::RunSettings::resolve

use super::durability::DurabilityMode;
use super::offer::offer;
use super::settings::IoServiceKind;
use clap::Args;
use std::path::PathBuf;

/// `sqliosim run`. Every option overrides the configuration file.
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// Configuration file (SQLIOSim -cfg). [default: sqliosim.cfg.ini in the working directory
    /// if present, else the built-in 60 s run with a 200 MB data and a 50 MB log file in
    /// ./sqliosim-data/]
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Put the test files in DIR (SQLIOSim -dir); repeatable, each DIR gets its own set. The
    /// configuration's FileN sections are created there by name; without any, sqliosim.mdx and
    /// sqliosim.ldx. [default: relative names beside the configuration file]
    /// A Windows path (`-dir 'D:\'` from a SQLIOSim script) is mapped through --drive-map or
    /// SQLIOSIM_DRIVE_D, as the sqlio and diskspd front ends do; unmapped, it is refused.
    #[arg(long, value_name = "DIR")]
    pub dir: Vec<PathBuf>,
    /// Map a Windows drive letter of --dir to a directory, e.g. --drive-map D=/mnt/d
    /// (repeatable; SQLIOSIM_DRIVE_D=/mnt/d does the same).
    #[arg(long, value_name = "LETTER=DIR")]
    pub drive_map: Vec<String>,
    /// Length of each test cycle (SQLIOSim -d): seconds, or with units d, h, m, s (90s, 5m,
    /// 1h30m, 2d).
    /// [default: TestCycleDuration from the configuration, 300 s; built-in run 60 s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Data file initial size (SQLIOSim -size): MB, or with a K, M, G or T suffix (10G); data
    /// files may grow to twice that, log files get half of it, at most 50 MB. [default:
    /// InitialSize/MaxSize from the configuration]
    #[arg(long, value_name = "MB", value_parser = parse_size)]
    pub size: Option<u64>,
    /// XML error log (SQLIOSim -log). [default: ErrorFile from the configuration,
    /// sqliosim.log.xml, beside the test files]
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Seed for every random choice, to repeat a run. [default: drawn at random and printed]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Write the JSON summary to FILE; `-` writes the final summary to stdout instead (and the
    /// console's lines go to stderr, so stdout is the JSON alone). [default: beside the XML
    /// log, its name with ".xml" replaced by ".json" (sqliosim.log.xml → sqliosim.log.json),
    /// or ".json" appended]
    #[arg(long, value_name = "FILE", conflicts_with = "no_json")]
    pub json: Option<PathBuf>,
    /// Write no JSON summary.
    #[arg(long)]
    pub no_json: bool,
    /// Write the resolved configuration, every key, as an INI file (SQLIOSim -save); the run
    /// still happens unless --dry-run is given.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Number of test cycles; 0 runs until stopped. [default: TestCycles from the configuration, 1]
    #[arg(long, value_name = "N")]
    pub cycles: Option<u32>,
    /// Stop at the first integrity error. [default: StopOnError from the configuration, TRUE]
    #[arg(long, overrides_with = "no_stop_on_error")]
    pub stop_on_error: bool,
    /// Keep going after integrity errors.
    #[arg(long, overrides_with = "stop_on_error")]
    pub no_stop_on_error: bool,
    /// Overwrite existing files that sqliosim did not create.
    #[arg(long)]
    pub force: bool,
    /// Continue with the existing test files instead of creating them afresh.
    #[arg(long)]
    pub resume: bool,
    /// Start afresh although the previous run of this file set did not end cleanly (killed,
    /// crashed, power cut): its data files are replaced, its log, JSON summary, dumps and
    /// journal are kept under its run id. Without it such a run refuses (exit 2) and says to
    /// `verify` or `--resume` first.
    #[arg(long, conflicts_with = "resume")]
    pub discard_previous_run: bool,
    /// Keep the durability journal (sqliosim.journal) in DIR, ideally on another device than
    /// the one under test, so that a device losing writes cannot lose the journal's too.
    /// `verify` and `--resume` need the same --journal-dir. [default: beside the first data
    /// file]
    #[arg(long, value_name = "DIR")]
    pub journal_dir: Option<PathBuf>,
    /// Also send every journal batch to a `sqliosim witness` at ADDR:PORT, off the host under
    /// test, so that a power pull that takes the local journal's last batches cannot take the
    /// truth with it; `verify --witness` judges with it. The run never waits for the witness
    /// (a bounded buffer, resent after a reconnect); at the end it waits --witness-wait.
    #[arg(long, value_name = "ADDR:PORT")]
    pub witness: Option<String>,
    /// The witness's shared token (the file the witness has as --token-file).
    #[arg(long, value_name = "FILE", requires = "witness")]
    pub witness_token_file: Option<PathBuf>,
    /// Seconds the end of the run waits for the witness to acknowledge every batch.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30,
        requires = "witness"
    )]
    pub witness_wait: u64,
    /// Write an evidence bundle (logs, dumps, summary) to FILE (.tar.gz). [default: none]
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// A capacity run beside the simulation, in the same process: `sqliosim bench` options in
    /// one quoted string, e.g. --bench "--file /mnt/x/bench.dat --size 1G --rw read
    /// --duration 30". Its report follows the simulation's. [default: none]
    #[arg(long, value_name = "BENCH OPTIONS", allow_hyphen_values = true)]
    pub bench: Option<String>,
    /// How the simulation's disk I/O is carried: `uring`, one io_uring engine shared by every
    /// thread with MaxOutstandingIO requests in flight at most (psync when the kernel refuses
    /// io_uring); `psync`, the same engine with pread/pwrite helper threads; `sync`, each
    /// thread's own pread/pwrite, MaxOutstandingIO held by a gate. The engine used is printed at
    /// start and recorded in the log and the JSON summary. [default: uring]
    #[arg(long, value_name = "ENGINE", value_parser = offer(parse_engine, &IoServiceKind::NAMES))]
    pub engine: Option<IoServiceKind>,
    /// How a write-through write is made durable, as SQL Server on Linux does it: `ForcedFlush`
    /// (O_DIRECT, then an fdatasync after each write), `FUA` (O_DIRECT|O_DSYNC) or `None`
    /// (O_DIRECT only: durable at sync points alone). Overrides `DurabilityMode`; no effect
    /// with `WriteThrough=FALSE`. [default: DurabilityMode from the configuration, ForcedFlush]
    #[arg(long, value_name = "MODE", value_parser = offer(parse_durability, &DurabilityMode::NAMES))]
    pub durability: Option<DurabilityMode>,
    /// In forced flush, give every write-through data write an fdatasync of its own (the
    /// behaviour before issue #39), instead of one flush shared by the writes of a file that
    /// completed before it started. Sets `ForcedFlushPerWrite=TRUE`. [default: shared flushes]
    #[arg(long)]
    pub forced_flush_per_write: bool,
    /// The host's name in the fleet's inventory (e.g. Ansible's inventory_hostname), recorded in
    /// the JSON summary and the XML log: the fleet report tells hosts apart by it (freshly
    /// imaged machines often share a hostname) and shows it. [default: none; the report then
    /// tells hosts apart by hostname and /etc/machine-id]
    #[arg(long, value_name = "NAME", value_parser = parse_label)]
    pub host_label: Option<String>,
    /// When stdout is not a terminal (a pipe, a file, the journal of a systemd unit), print a
    /// status line every TIME: phase, cycle, elapsed/planned, IOPS, MB/s, p99 latency, in
    /// flight, throttled, findings. Seconds, or with an s, m or h suffix (fio's option). On a
    /// terminal the progress line shows the same. [default: none when not a terminal]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub status_interval: Option<u64>,
    /// Keep FILE current with the run's metrics in the Prometheus text format (for
    /// node_exporter's textfile collector): I/Os and bytes by file and direction, findings by
    /// class, throttled and long I/Os, in flight, phase, cycle and a latency histogram.
    /// Replaced atomically every --status-interval (every 10 s without it) and at the end.
    /// [default: none]
    #[arg(long, value_name = "FILE")]
    pub metrics_textfile: Option<PathBuf>,
    /// Fault injection specification (for tests).
    #[arg(long, value_name = "SPEC", hide = true)]
    pub fault_injection: Option<String>,
    /// Resolve the configuration, print it (and --save it), then stop without simulating.
    #[arg(long)]
    pub dry_run: bool,
}

/// Parses a `--durability` mode, in any case.
fn parse_durability(text: &str) -> Result<DurabilityMode, String> {
    DurabilityMode::parse(text).ok_or_else(|| {
        format!(
            "{text:?}: expected one of {}",
            DurabilityMode::NAMES.join(", ")
        )
    })
}

/// Parses an `--engine` name; an empty one is refused like any unknown name.
fn parse_engine(text: &str) -> Result<IoServiceKind, String> {
    IoServiceKind::from_name(text).ok_or_else(|| {
        format!(
            "{text:?}: expected one of {}",
            IoServiceKind::NAMES.join(", ")
        )
    })
}

/// A `--host-label`: 1 to 253 printable characters, no spaces (it names a host in tables and
/// in the `--expect-hosts` list of the fleet report).
fn parse_label(text: &str) -> Result<String, String> {
    let ok = (1..=253).contains(&text.chars().count())
        && text
            .chars()
            .all(|c| c.is_ascii_graphic() || (!c.is_ascii() && !c.is_control()));
    match ok {
        true => Ok(text.to_string()),
        false => Err(format!(
            "{text:?}: expected 1 to 253 printable characters without spaces, e.g. an inventory name such as rack1-node3"
        )),
    }
}

/// Parses a `--size`: MB, or a size with a suffix that comes to whole MB, at least 1 MB.
fn parse_size(text: &str) -> Result<u64, String> {
    match super::units::size_mb(text)? {
        0 => Err(format!("{text:?}: the size must be at least 1 MB")),
        mb => Ok(mb),
    }
}

/// Parses a `--duration`: plain seconds, or `90s`, `5m`, `1h30m`, `2d` ([`super::units`]).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    super::units::duration_secs(text)
}

impl RunArgs {
    /// `--stop-on-error` / `--no-stop-on-error` as StopOnError's override (the later wins, as
    /// clap's `overrides_with` leaves only one set).
    pub fn stop_on_error_override(&self) -> Option<bool> {
        match (self.stop_on_error, self.no_stop_on_error) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_go_through_the_one_parser() {
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        assert_eq!(
            parse_duration("0"),
            Err("\"0\": the duration must be at least 1 second".into())
        );
        assert_eq!(parse_size("10G"), Ok(10_240));
        assert!(parse_size("0").is_err());
    }
}
