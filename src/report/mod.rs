//! Evidence: XML error log, dumps, JSON summary, system information, `sqliosim report`.

use crate::exit::Outcome;
use std::ffi::OsString;

/// `sqliosim report ARGS…`; `args[0]` is the display name ("sqliosim report").
pub fn main(_args: Vec<OsString>) -> anyhow::Result<Outcome> {
    anyhow::bail!("`sqliosim report` is not available yet")
}
