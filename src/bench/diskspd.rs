//! `sqliosim diskspd`: DiskSpd switches and result layouts.

use crate::exit::Outcome;
use std::ffi::OsString;

/// `sqliosim diskspd ARGS…`; `args[0]` is the display name ("sqliosim diskspd").
pub fn main(_args: Vec<OsString>) -> anyhow::Result<Outcome> {
    anyhow::bail!("`sqliosim diskspd` is not available yet")
}
