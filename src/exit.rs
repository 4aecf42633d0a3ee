//! Process exit codes and the error kinds that map onto them.
//!
//! 0 clean, 1 integrity findings, 2 usage / configuration / environment, 3 internal failure;
//! a run that SIGINT or SIGTERM cut short with nothing found exits 128 + the signal's number
//! (130, 143), as shells report it.
//! Library code returns `anyhow::Error`s; an error is a usage/environment error (exit 2) unless
//! it carries [`Internal`], which marks a broken invariant of the tool itself (exit 3).

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
        Err(err) => {
            eprintln!("sqliosim: error: {err:#}");
            if err.downcast_ref::<Internal>().is_some() {
                ExitCode::from(INTERNAL)
            } else {
                ExitCode::from(USAGE)
            }
        }
    }
}
