//! Process exit codes and the error kinds that map onto them.
//!
//! 0 clean, 1 integrity findings, 2 usage / configuration / environment, 3 internal failure;
//! a run that SIGINT or SIGTERM cut short with nothing found exits 128 + the signal's number
//! (130, 143), as shells report it.
//! A subcommand's result reaches here as an `anyhow::Error` (the library below `app` returns
//! typed errors, which `app` wraps); an error is a usage/environment error (exit 2) unless it
//! is an [`Internal`], which marks a broken invariant of the tool itself (exit 3).
//!
//! Everything the tool prints on stdout goes through [`print()`] (the crate's `exit::out!` and
//! `exit::outln!` macros) or the [`Stdout`] writer, never `println!`, which panics
//! (exit 101) when stdout fails. A closed pipe (`sqliosim … | head -1`) ends the command
//! quietly, as ripgrep does; any other failure (ENOSPC on `> /dev/full`) is an error, exit 2.

use std::io::Write;
use std::process::ExitCode;

/// The run finished and found nothing wrong.
pub const CLEAN: u8 = 0;
/// The run finished (or stopped) and found integrity errors.
pub const FINDINGS: u8 = 1;
/// Bad usage, configuration or environment: nothing was tested.
pub const USAGE: u8 = 2;
/// The tool itself failed (a bug, a panicked worker).
pub const INTERNAL: u8 = 3;

/// What a completed command reports back to `main`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing wrong was found.
    Clean,
    /// Integrity findings were reported.
    Findings,
    /// A signal cut the run short before anything was found; the exit code (128 + the
    /// signal's number: 130 for SIGINT, 143 for SIGTERM).
    Interrupted(u8),
}

impl Outcome {
    /// The process exit code for this outcome.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Clean => CLEAN,
            Outcome::Findings => FINDINGS,
            Outcome::Interrupted(code) => code,
        }
    }
}

/// Marks an error as an internal failure of the tool (exit code 3) rather than a usage or
/// environment problem.
#[derive(Debug, thiserror::Error)]
#[error("internal failure: {0}")]
pub struct Internal(pub String);

/// Maps the result of a command onto the process exit code, printing the error if any.
pub fn to_exit_code(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(err) if stdout_closed(&err) => ExitCode::from(CLEAN),
        Err(err) => {
            errln!("sqliosim: error: {}", error_text(err.as_ref()));
            if err.downcast_ref::<Internal>().is_some() {
                ExitCode::from(INTERNAL)
            } else {
                ExitCode::from(USAGE)
            }
        }
    }
}

/// `err` and its causes, joined by ": " as anyhow's `{:#}` does, but without a cause whose
/// text the message before it already ends with: errors that show their source in their own
/// message (`"{path}: {source}"`) would otherwise print the OS error twice.
pub fn error_text(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let chain = std::iter::successors(Some(err), |e| e.source());
    for cause in chain {
        let part = cause.to_string();
        if text.ends_with(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {0}")]
pub struct StdoutError(pub std::io::Error);

impl StdoutError {
    /// True when the reader of a pipe has gone (EPIPE): nothing more is wanted, not an error.
    pub fn closed(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// For the lines a run prints before and while it works: a stdout whose reader has gone
/// (`sqliosim run … | head -1`) does not stop the test, since its evidence and its exit status
/// are what tell (it used to end the run before it began, exit 0: a pass that tested
/// nothing). Other failures stay errors.
pub fn unless_closed(printed: Result<(), StdoutError>) -> Result<(), StdoutError> {
    match printed {
        Err(e) if e.closed() => Ok(()),
        other => other,
    }
}

/// True when `err` is, or was caused by, writing to a stdout whose reader has gone.
fn stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let inner = cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|e| e.downcast_ref::<StdoutError>());
        cause
            .downcast_ref::<StdoutError>()
            .or(inner)
            .is_some_and(StdoutError::closed)
    })
}

/// Set when stdout carries data (`run --json -`): the console's lines go to stderr instead.
static CONSOLE_ON_STDERR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, what `out!`, `outln!` and [`Stdout`] print goes to stderr, so that stdout
/// carries only what [`print_data`] writes (`sqliosim run --json - | jq`).
pub fn console_to_stderr() {
    CONSOLE_ON_STDERR.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn console_on_stderr() -> bool {
    CONSOLE_ON_STDERR.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes `args` to stdout (or stderr, see [`console_to_stderr`]) and flushes, so a failure is
/// met here (not lost at exit).
pub fn print(args: std::fmt::Arguments<'_>) -> Result<(), StdoutError> {
    if console_on_stderr() {
        let _ = std::io::stderr().lock().write_fmt(args);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// Writes `bytes` (a document asked for on stdout, such as `--json -`) to stdout itself.
pub fn print_data(bytes: &[u8]) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// `print!` that returns a [`StdoutError`] instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => { $crate::exit::print(format_args!($($arg)*)) };
}
pub(crate) use out;

/// `println!` that returns a [`StdoutError`] instead of panicking.
macro_rules! outln {
    () => { $crate::exit::print(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::exit::print(format_args!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use outln;

/// `eprintln!` that never panics: a message to stderr is best effort. `eprintln!` panics
/// (exit 101) when stderr fails, as it does on a closed pipe (`sqliosim … 2>&1 | head -1`);
/// the exit status must still say what happened.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}
pub(crate) use errln;

/// `eprint!` that never panics (see [`errln!`]).
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr().lock(), $($arg)*);
    }};
}
pub(crate) use err;

/// Stdout as a writer for code that takes `&mut dyn Write`: its errors carry a
/// [`StdoutError`], so a closed pipe is told apart from other I/O errors at exit.
#[derive(Debug, Default)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if console_on_stderr() {
            return std::io::stderr().lock().write(buf);
        }
        std::io::stdout().lock().write(buf).map_err(tagged)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if console_on_stderr() {
            return std::io::stderr().lock().flush();
        }
        std::io::stdout().lock().flush().map_err(tagged)
    }
}

fn tagged(e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), StdoutError(e))
}

/// The verdict of a command whose last words on stdout had `printed` as their fate: a closed
/// pipe changes nothing, and another stdout failure is reported but never hides a finding,
/// an error or an interruption (it only turns a clean result into exit 2).
pub fn after_printing<E: From<StdoutError>>(
    printed: Result<(), StdoutError>,
    verdict: Result<Outcome, E>,
) -> Result<Outcome, E> {
    match (printed, verdict) {
        (Err(e), Ok(Outcome::Clean)) if !e.closed() => Err(e.into()),
        (Err(e), verdict) => {
            if !e.closed() {
                errln!("sqliosim: error: {e}");
            }
            verdict
        }
        (Ok(()), verdict) => verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> StdoutError {
        StdoutError(std::io::Error::from_raw_os_error(libc::ENOSPC))
    }

    fn closed() -> StdoutError {
        StdoutError(std::io::Error::from_raw_os_error(libc::EPIPE))
    }

    #[test]
    fn a_failed_stdout_never_hides_the_verdict() {
        let f =
            |p, v: Outcome| after_printing::<anyhow::Error>(p, Ok(v)).map_err(|e| e.to_string());
        assert_eq!(f(Err(closed()), Outcome::Findings), Ok(Outcome::Findings));
        assert_eq!(f(Err(full()), Outcome::Findings), Ok(Outcome::Findings));
        assert_eq!(f(Err(closed()), Outcome::Clean), Ok(Outcome::Clean));
        assert_eq!(
            f(Err(full()), Outcome::Interrupted(130)),
            Ok(Outcome::Interrupted(130))
        );
        let e = f(Err(full()), Outcome::Clean).expect_err("a full stdout is an error");
        assert!(e.contains("No space left on device"), "{e}");
    }

    #[test]
    fn a_closed_pipe_is_told_apart_through_io_errors_and_context() {
        let through_io =
            anyhow::Error::from(tagged(std::io::Error::from_raw_os_error(libc::EPIPE)))
                .context("writing the report");
        assert!(stdout_closed(&through_io));
        assert!(stdout_closed(&anyhow::Error::from(closed())));
        assert!(!stdout_closed(&anyhow::Error::from(full())));
        let other_pipe = anyhow::Error::from(std::io::Error::from_raw_os_error(libc::EPIPE));
        assert!(!stdout_closed(&other_pipe), "only stdout's pipe is quiet");
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Shows {
        path: &'static str,
        source: std::io::Error,
    }

    #[test]
    fn an_os_error_shown_by_its_error_is_printed_once() {
        let e = anyhow::Error::from(Shows {
            path: "/x/sqliosim.mdx",
            source: std::io::Error::from_raw_os_error(libc::EACCES),
        })
        .context("cannot open the data file");
        assert_eq!(
            error_text(e.as_ref()),
            "cannot open the data file: /x/sqliosim.mdx: Permission denied (os error 13)"
        );
        assert_eq!(
            format!("{e:#}").matches("os error 13").count(),
            2,
            "anyhow's own form doubles it"
        );
    }
}
