//! Wiring: command line → configuration → run plan → storage, engine, actors → reports.

use std::ffi::OsString;

/// Runs one invocation of the tool with the full argument vector (program name first).
pub fn run(_args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    anyhow::bail!("no command is implemented yet")
}
