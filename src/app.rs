//! Wiring: command line → configuration → run plan → storage, engine, actors → reports.

use crate::bench::error::BenchError;
use crate::cli::{Cli, Command, PassThrough, RunArgs};
use crate::config::{Env, RunSettings};
use crate::exit::Outcome;
use anyhow::Context;
use clap::error::ErrorKind;
use clap::Parser;
use std::ffi::OsString;

mod console;
mod dirs;
mod faults;
mod judge;
mod judge_select;
mod lock;
mod man_examples;
mod manpage;
mod previous;
mod restore;
mod restore_copies;
mod resume_first;
mod run_backend;
mod run_bench;
mod run_outputs;
mod selftest;
mod simrun;
mod stopped;
mod targets;
mod verify;
mod verify_backup;
mod verify_found;
mod verify_lost;
mod witness;

pub use selftest::SelftestArgs;
pub use verify::VerifyArgs;

/// Runs one invocation of the tool with the full argument vector (program name first).
pub fn run(args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    catch_file_size_limit();
    let cli = match Cli::try_parse_from(crate::cli::translate_legacy(args)) {
        Ok(cli) => cli,
        Err(e) => return clap_outcome(e),
    };
    match cli.command {
        Command::Run(a) => run_command(a),
        Command::Bench(a) => crate::bench::run_args(&a).map_err(bench_error),
        Command::Sqlio(p) => {
            crate::bench::sqlio::main(pass("sqliosim sqlio", p)).map_err(bench_error)
        }
        Command::Diskspd(p) => {
            crate::bench::diskspd::main(pass("sqliosim diskspd", p)).map_err(bench_error)
        }
        Command::Report(a) => crate::report::run(*a).map_err(report_error),
        Command::Verify(a) => verify::run(*a),
        Command::Restore(a) => restore::run(*a),
        Command::Selftest(a) => selftest::run(&a),
        Command::Witness(a) => witness::run(&a),
        Command::Completions(a) => manpage::completions(a.shell),
        Command::Man(a) => manpage::man(a.out.as_deref()),
    }
}

/// A file size limit (`ulimit -f`) kills the process with SIGXFSZ, without a word, at the
/// first write beyond it. With the signal caught, that write fails with EFBIG instead, which
/// stops the run with a message naming the file (exit 2).
fn catch_file_size_limit() {
    let caught = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, caught) {
        crate::exit::errln!("sqliosim: warning: cannot catch SIGXFSZ ({e}): a file size limit (ulimit -f) would end the process without a message");
    }
}

/// Help and version are a clean exit; anything else clap rejects is a usage error (exit 2).
fn clap_outcome(e: clap::Error) -> anyhow::Result<Outcome> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            crate::exit::out!("{}", e.render())?;
            Ok(Outcome::Clean)
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            crate::exit::err!("{}", e.render());
            anyhow::bail!("a command is needed, e.g. `sqliosim run` (see the help above)")
        }
        _ => {
            let text = e.render().to_string();
            anyhow::bail!("{}", text.trim_start_matches("error: ").trim_end())
        }
    }
}

/// A capacity run's error as the exit code reads it: a panicked worker is an internal failure
/// (exit 3); a report that could not be written stays the OS error it is, so that a stdout
/// whose reader has gone ends the command quietly; anything else is usage or environment
/// (exit 2).
fn bench_error(e: BenchError) -> anyhow::Error {
    match e {
        BenchError::WorkerPanicked(i) => anyhow::Error::new(crate::exit::Internal(format!(
            "bench worker thread {i} panicked"
        ))),
        BenchError::Output(io) => anyhow::Error::new(io),
        e => anyhow::Error::new(e),
    }
}

/// `sqliosim report`'s error as the exit code reads it: standard output that could not be
/// written stays the `StdoutError` it is (a closed one ends the command quietly); anything
/// else is usage or environment (exit 2).
fn report_error(e: crate::report::CommandError) -> anyhow::Error {
    match e {
        crate::report::CommandError::Stdout(e) => anyhow::Error::new(e),
        e => anyhow::Error::new(e),
    }
}

/// The argument vector for a pass-through subcommand: display name first.
fn pass(name: &str, p: PassThrough) -> Vec<OsString> {
    std::iter::once(OsString::from(name))
        .chain(p.args)
        .collect()
}

/// `sqliosim run`: map Windows `--dir`s, resolve the settings, warn, save, echo, then simulate.
fn run_command(mut args: Box<RunArgs>) -> anyhow::Result<Outcome> {
    let env = Env::detect()?;
    args.dir = dirs::map_windows_dirs(&args.dir, &args.drive_map)?;
    let (settings, warnings) = RunSettings::resolve(&args, &env)?;
    if settings.json_stdout {
        // `--json -`: stdout is the summary alone, as `… --json - | jq` expects.
        crate::exit::console_to_stderr();
    }
    for w in &warnings {
        crate::exit::errln!("sqliosim: warning: {w}");
    }
    if let Some(path) = &settings.save {
        let text = crate::config::to_ini(&settings.config);
        crate::io::safefile::replace(path, text.as_bytes())
            .with_context(|| format!("cannot write the -save file {}", path.display()))?;
        crate::exit::outln!("Configuration saved to {}", path.display())?;
    }
    let echoed = crate::exit::out!("{}", settings.echo());
    if settings.dry_run {
        echoed?;
        return Ok(Outcome::Clean);
    }
    crate::exit::unless_closed(echoed)?;
    let adjusted: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    simrun::run(&settings, &adjusted)
}

/// `sqliosim verify ARGS…` (offline scan); `args[0]` is the display name.
pub fn verify_main(args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    verify::main(args)
}

/// `sqliosim selftest ARGS…`; `args[0]` is the display name.
pub fn selftest_main(args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    selftest::main(args)
}
