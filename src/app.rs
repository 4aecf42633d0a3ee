//! Wiring: command line → configuration → run plan → storage, engine, actors → reports.

use std::ffi::OsString;

/// Runs one invocation of the tool with the full argument vector (program name first).
pub fn run(_args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    anyhow::bail!("no command is implemented yet")
}

/// `sqliosim verify ARGS…` (offline scan); `args[0]` is the display name.
pub fn verify_main(_args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    anyhow::bail!("`sqliosim verify` is not available yet")
}

/// `sqliosim selftest ARGS…`; `args[0]` is the display name.
pub fn selftest_main(_args: Vec<OsString>) -> anyhow::Result<crate::exit::Outcome> {
    anyhow::bail!("`sqliosim selftest` is not available yet")
}
