//! `sqliosim sqlio`: SQLIO v1.5 switches and output block.

use crate::exit::Outcome;
use std::ffi::OsString;

/// `sqliosim sqlio ARGS…`; `args[0]` is the display name ("sqliosim sqlio").
pub fn main(_args: Vec<OsString>) -> anyhow::Result<Outcome> {
    anyhow::bail!("`sqliosim sqlio` is not available yet")
}
