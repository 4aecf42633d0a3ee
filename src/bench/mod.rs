//! Capacity runs: `sqliosim bench`, and the SQLIO- and DiskSpd-compatible front ends.

use crate::exit::Outcome;
use std::ffi::OsString;

pub mod diskspd;
pub mod engine;
pub mod sqlio;

/// `sqliosim bench ARGS…`; `args[0]` is the display name ("sqliosim bench").
pub fn main(_args: Vec<OsString>) -> anyhow::Result<Outcome> {
    anyhow::bail!("`sqliosim bench` is not available yet")
}
