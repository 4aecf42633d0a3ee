//! Command-line definitions (clap). No I/O here.
//!
//! Two spellings are accepted. SQLIOSim.com's single-dash switches (`-cfg FILE -save FILE
//! -log FILE -dir DIR -d SECONDS -size MB`) are rewritten by [`translate_legacy`] into the
//! modern `run` subcommand's long options before clap sees them, so scripts written for
//! SQLIOSim run unchanged. The other subcommands take their arguments raw and parse them
//! themselves.

use crate::config::{IoServiceKind, Overrides};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// SQLIOSim.com's switches and the long options they stand for.
pub const LEGACY_SWITCHES: &[(&str, &str)] = &[
    ("-cfg", "--config"),
    ("-save", "--save"),
    ("-log", "--log"),
    ("-dir", "--dir"),
    ("-d", "--duration"),
    ("-size", "--size"),
];

const LEGACY_HELP: &str = "\
SQLIOSim.com switches are accepted as typed, and mean `sqliosim run`:
  sqliosim -cfg FILE -save FILE -log FILE -dir DIR [-dir DIR…] -d SECONDS -size MB

Exit codes: 0 clean run, 1 integrity errors found, 2 bad usage, configuration or environment,
3 internal failure.";

/// The whole command line.
#[derive(Debug, Parser)]
#[command(
    name = "sqliosim",
    version,
    about = "Storage integrity and stress simulator: SQL Server-like I/O on direct-I/O 8 KB pages, \
             every page stamped and verified (successor to Microsoft's SQLIOSim)",
    after_help = LEGACY_HELP,
    arg_required_else_help = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. `sqlio` and `diskspd` keep their own parsers (they take SQLIO's and
/// DiskSpd's switches as typed); every other subcommand's options live in its own module as a
/// clap `Args` struct embedded here, so `sqliosim help bench` and the completions know them.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the SQLIOSim-style simulation (what SQLIOSim.com's switches do).
    Run(Box<RunArgs>),
    /// Capacity run: IOPS, MB/s and latency percentiles of the storage, optionally over a matrix
    /// of settings.
    Bench(Box<crate::bench::cmd::args::BenchArgs>),
    /// SQLIO-compatible front end (arguments as SQLIO's; `sqliosim sqlio -?` lists them).
    #[command(disable_help_flag = true)]
    Sqlio(PassThrough),
    /// DiskSpd-compatible front end (arguments as DiskSpd's; `sqliosim diskspd -?` lists them).
    #[command(disable_help_flag = true)]
    Diskspd(PassThrough),
    /// Render reports from a finished run's evidence (XML log or JSON summary).
    Report(Box<crate::report::ReportArgs>),
    /// Offline scan: check every page of existing test files.
    Verify(Box<VerifyArgs>),
    /// Check that this machine and build can run sqliosim correctly.
    Selftest(SelftestArgs),
    /// Print a shell completion script to stdout.
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout, or write one page per subcommand with --out.
    Man(ManArgs),
}

/// `sqliosim completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `sqliosim man [--out DIR]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write sqliosim.1 and one sqliosim-SUBCOMMAND.1 page per subcommand into DIR instead of
    /// printing sqliosim.1 to stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Arguments handed over untouched to a subcommand that parses its own.
#[derive(Debug, Args)]
pub struct PassThrough {
    /// Arguments for the subcommand, passed through as given.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<OsString>,
}

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
    #[arg(long, value_name = "DIR")]
    pub dir: Vec<PathBuf>,
    /// Length of each test cycle (SQLIOSim -d): seconds, or with an s, m or h suffix.
    /// [default: TestCycleDuration from the configuration, 300 s; built-in run 60 s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Data file initial size in MB (SQLIOSim -size); data files may grow to twice that, log
    /// files get half of it, at most 50 MB. [default: InitialSize/MaxSize from the configuration]
    #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..))]
    pub size: Option<u64>,
    /// XML error log (SQLIOSim -log). [default: ErrorFile from the configuration,
    /// sqliosim.log.xml, beside the test files]
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Seed for every random choice, to repeat a run. [default: drawn at random and printed]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Write the JSON summary to FILE. [default: beside the XML log, its name with ".xml"
    /// replaced by ".json" (sqliosim.log.xml → sqliosim.log.json), or ".json" appended]
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
    #[arg(long, value_name = "ENGINE", value_parser = parse_engine)]
    pub engine: Option<IoServiceKind>,
    /// Fault injection specification (for tests).
    #[arg(long, value_name = "SPEC", hide = true)]
    pub fault_injection: Option<String>,
    /// Resolve the configuration, print it (and --save it), then stop without simulating.
    #[arg(long)]
    pub dry_run: bool,
}

impl RunArgs {
    /// The command-line values as configuration overrides.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config: self.config.clone(),
            dirs: self.dir.clone(),
            duration_s: self.duration,
            size_mb: self.size,
            log: self.log.clone(),
            seed: self.seed,
            json: self.json.clone(),
            no_json: self.no_json,
            save: self.save.clone(),
            cycles: self.cycles,
            stop_on_error: match (self.stop_on_error, self.no_stop_on_error) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            force: self.force,
            resume: self.resume,
            discard_previous_run: self.discard_previous_run,
            journal_dir: self.journal_dir.clone(),
            bundle: self.bundle.clone(),
            bench: self.bench.clone(),
            fault_injection: self.fault_injection.clone(),
            engine: self.engine,
            dry_run: self.dry_run,
        }
    }
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

/// Parses `60`, `60s`, `5m` or `2h` into seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let factor = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => {
            return Err(format!(
                "{text:?}: expected seconds, or a number with an s, m or h suffix"
            ))
        }
    };
    let n: u64 = digits.parse().map_err(|_| {
        format!("{text:?}: expected a whole number of seconds, e.g. 60, 60s, 5m, 2h")
    })?;
    match n.checked_mul(factor) {
        Some(0) => Err(format!("{text:?}: the duration must be at least 1 second")),
        Some(s) => Ok(s),
        None => Err(format!("{text:?}: too long")),
    }
}

/// Rewrites SQLIOSim.com's single-dash switches into `run` with long options. A first argument
/// that is an option (a legacy switch such as `-cfg`, or a `run` option such as `--dry-run`)
/// means `run`, as SQLIOSim.com has no subcommands; `-?` means `--help`. After `run`, legacy
/// switches are mapped too.
pub fn translate_legacy(args: Vec<OsString>) -> Vec<OsString> {
    let mut it = args.into_iter();
    let Some(program) = it.next() else {
        return Vec::new();
    };
    let rest: Vec<OsString> = it.collect();
    let first = rest
        .first()
        .and_then(|a| a.to_str())
        .map(str::to_ascii_lowercase);
    let mut out = vec![program];
    match first.as_deref() {
        Some("-?" | "/?") => out.push("--help".into()),
        Some("-h" | "--help" | "-v" | "--version") => out.extend(rest),
        Some(f) if f.starts_with('-') => {
            out.push("run".into());
            out.extend(rest.into_iter().map(map_switch));
        }
        Some("run") => out.extend(rest.into_iter().map(map_switch)),
        _ => out.extend(rest),
    }
    out
}

/// The long option a legacy switch stands for (any letter case).
fn legacy_long(arg: &str) -> Option<&'static str> {
    LEGACY_SWITCHES
        .iter()
        .find(|(s, _)| s.eq_ignore_ascii_case(arg))
        .map(|(_, l)| *l)
}

/// One argument, mapped if it is a legacy switch.
fn map_switch(arg: OsString) -> OsString {
    match arg.to_str().and_then(legacy_long) {
        Some(long) => long.into(),
        None => arg,
    }
}

/// `sqliosim verify` options.
#[derive(Debug, Parser)]
#[command(
    about = "Scan a file set offline: every data page and log block, checked against the durability journal when present"
)]
pub struct VerifyArgs {
    /// Directory holding the files (every file with a sqliosim header is scanned; the journal sqliosim.journal is used when present). Repeatable.
    #[arg(long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Files to scan (data and log files created by sqliosim): exactly these, copies included.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// A file to scan (same as a FILE argument), e.g. a copy that `--dir` only names. Repeatable.
    #[arg(long = "file", value_name = "PATH")]
    pub file_opts: Vec<PathBuf>,
    /// Journal to check against [default: sqliosim.journal in --journal-dir, else in the first
    /// --dir that has one, else beside the first file].
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Directory of the journal, when the run had --journal-dir.
    #[arg(long, value_name = "DIR")]
    pub journal_dir: Option<PathBuf>,
    /// Ignore the journal: check only what each page and block says about itself.
    #[arg(long)]
    pub no_journal: bool,
    /// XML error log of the scan, with page dumps in dumps/ beside it [default: none: verify
    /// writes nothing unless asked, see docs/security.md].
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Also write a JSON summary of the scan.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Scan even while a run is using the files (its verdict cannot be trusted: pages change
    /// while they are read).
    #[arg(long)]
    pub force: bool,
}

/// Options of `sqliosim selftest`.
#[derive(Debug, Parser)]
#[command(
    about = "Injects every fault class and shows that each is detected with the right verdict"
)]
pub struct SelftestArgs {
    /// Also inject the faults through a real FUSE mount (faultfs) and the kernel, when FUSE is
    /// available; needs the faultfs binary beside sqliosim or in FAULTFS_BIN.
    #[arg(long)]
    pub fuse: bool,
    /// Seed for every random choice. [default: drawn at random and printed]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn legacy_switches_become_run() {
        let got = translate_legacy(strings(&[
            "sqliosim", "-cfg", "a.ini", "-D", "300", "-dir", "/x", "-size", "5",
        ]));
        let want = strings(&[
            "sqliosim",
            "run",
            "--config",
            "a.ini",
            "--duration",
            "300",
            "--dir",
            "/x",
            "--size",
            "5",
        ]);
        assert_eq!(got, want);
        assert_eq!(
            translate_legacy(strings(&["s", "-?"])),
            strings(&["s", "--help"])
        );
        assert_eq!(
            translate_legacy(strings(&["s", "bench", "-d", "1"])),
            strings(&["s", "bench", "-d", "1"])
        );
        assert_eq!(
            translate_legacy(strings(&["s", "--dry-run", "-cfg", "x"])),
            strings(&["s", "run", "--dry-run", "--config", "x"])
        );
        assert_eq!(
            translate_legacy(strings(&["s", "-V"])),
            strings(&["s", "-V"])
        );
        assert_eq!(
            translate_legacy(strings(&["s", "run", "-log", "x"])),
            strings(&["s", "run", "--log", "x"])
        );
    }

    #[test]
    fn durations_accept_suffixes() {
        assert_eq!(parse_duration("60"), Ok(60));
        assert_eq!(parse_duration("60s"), Ok(60));
        assert_eq!(parse_duration("5m"), Ok(300));
        assert_eq!(parse_duration("2H"), Ok(7200));
        assert_eq!(
            parse_duration("0"),
            Err("\"0\": the duration must be at least 1 second".into())
        );
        assert_eq!(
            parse_duration("5x"),
            Err("\"5x\": expected seconds, or a number with an s, m or h suffix".into())
        );
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
