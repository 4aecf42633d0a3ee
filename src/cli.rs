//! Command-line definitions (clap). No I/O here.
//!
//! Two spellings are accepted. SQLIOSim.com's single-dash switches (`-cfg FILE -save FILE
//! -log FILE -dir DIR -d SECONDS -size MB`) are rewritten by [`translate_legacy`] into the
//! modern `run` subcommand's long options before clap sees them, so scripts written for
//! SQLIOSim run unchanged. The other subcommands take their arguments raw and parse them
//! themselves.
//!
//! `run`'s options are [`RunArgs`], defined in `config` (which reads them as the overrides of
//! the configuration file) and re-exported here: one type from the command line to
//! `RunSettings::resolve`.

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

pub use crate::config::RunArgs;

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
    /// Render reports from a finished run's evidence (XML log or JSON summary), from a fleet's,
    /// or from a power-cut campaign's directory.
    Report(Box<crate::report::ReportArgs>),
    /// Offline scan: check every page of existing test files.
    Verify(Box<VerifyArgs>),
    /// Offline restore of a backup stream into copies of its data files, read back and checked.
    Restore(Box<RestoreArgs>),
    /// Check that this machine and build can run sqliosim correctly.
    Selftest(SelftestArgs),
    /// The off-host witness: keeps every run's durable acknowledgements as they are made, for
    /// `verify --witness` after a power pull.
    Witness(WitnessArgs),
    /// Print a shell completion script to stdout.
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout, or write one page per subcommand with --out.
    Man(ManArgs),
}

/// `sqliosim witness` options.
#[derive(Debug, Args)]
pub struct WitnessArgs {
    /// Address to listen on (HOST:PORT, e.g. 0.0.0.0:7468). Anything but loopback needs
    /// --token-file.
    #[arg(long, value_name = "ADDR:PORT", required_unless_present = "list")]
    pub listen: Option<String>,
    /// Directory of the records (one RUNID.witness per run).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// The shared secret every message is authenticated with (HMAC-SHA256); runs and verifies
    /// give the same file with --witness-token-file.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Print the runs the directory holds (run, host, last batch, bytes, gaps, time of the
    /// last record) and exit.
    #[arg(long, conflicts_with = "listen")]
    pub list: bool,
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
    /// Files to scan (data and log files created by sqliosim, and `[BackupUser]` streams): exactly
    /// these, copies included.
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
    /// Also fetch the run's record from the `sqliosim witness` at ADDR:PORT (the run id from
    /// the data files' headers) and hold the files to whichever of it and the local journal
    /// went further; the verdict says which held what was owed.
    #[arg(long, value_name = "ADDR:PORT", conflicts_with = "no_journal")]
    pub witness: Option<String>,
    /// The witness's shared token (the file the witness has as --token-file).
    #[arg(long, value_name = "FILE", requires = "witness")]
    pub witness_token_file: Option<PathBuf>,
    /// XML error log of the scan, with page dumps in dumps/ beside it [default: none: verify
    /// writes nothing unless asked, see docs/security.md].
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Also write a JSON summary of the scan to FILE; `-` writes it to stdout instead (and the
    /// console's lines go to stderr, so stdout is the JSON alone).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Scan even while a run is using the files (its verdict cannot be trusted: pages change
    /// while they are read).
    #[arg(long)]
    pub force: bool,
}

/// `sqliosim restore` options.
#[derive(Debug, Parser)]
#[command(
    about = "Restore a finished backup stream offline (RESTORE DATABASE … WITH MOVE, then a check): the stream is checked, one copy per data file is written, made durable, read back and checked page by page; the copies are kept"
)]
pub struct RestoreArgs {
    /// The backup stream: a `[BackupUser]`'s NAME.bak, or one a rerun kept as NAME.RUNID.bak.
    /// An unfinished stream (no END block, as a `.partial` usually is) is refused.
    #[arg(value_name = "STREAM")]
    pub stream: PathBuf,
    /// Directory of the copies, STREAM-NAME.fileID.restored [default: the stream's directory].
    #[arg(long, value_name = "DIR")]
    pub to: Option<PathBuf>,
    /// Overwrite a regular file of this user at a copy's name that is not a file of sqliosim
    /// (a link, FIFO, directory, device or another user's file is refused all the same).
    #[arg(long)]
    pub force: bool,
    /// Also write a JSON summary to FILE; `-` writes it to stdout instead (and the console's
    /// lines go to stderr).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
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
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
