//! Capacity runs: `sqliosim bench`, and the SQLIO- and DiskSpd-compatible front ends.
//!
//! Layout: [`job`] (validated settings), [`target`] (test files and their header), [`worker`]
//! and [`run`] (threads and phases, their I/O on a [`crate::io::aio::Ring`], io_uring, kernel AIO or psync,
//! as the simulation's I/O service uses too), [`latency`] and [`cpu`] (statistics),
//! [`summary`] (figures), then the front ends.

use crate::exit::Outcome;
use error::BenchError;
use std::ffi::OsString;

pub mod cmd;
pub mod cpu;
pub mod direct_unit;
pub mod diskspd;
pub mod error;
pub mod exposure;
mod front;
pub mod inuse;
pub mod job;
mod lane;
pub mod latency;
pub mod out;
mod rendezvous;
pub mod run;
pub mod signals;
pub mod sqlio;
pub mod stamp;
pub mod summary;
pub mod sweep;
pub mod switches;
pub mod target;
pub mod units;
pub mod worker;

/// `sqliosim bench ARGS…`; `args[0]` is the display name ("sqliosim bench").
pub fn main(args: Vec<OsString>) -> Result<Outcome, BenchError> {
    cmd::run_with(&args, &mut crate::exit::Stdout)
}

/// `sqliosim bench` with its options already parsed (by the top-level command line).
pub fn run_args(args: &cmd::args::BenchArgs) -> Result<Outcome, BenchError> {
    cmd::run_parsed(args, &mut crate::exit::Stdout)
}
