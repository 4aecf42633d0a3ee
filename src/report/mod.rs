//! Evidence: the SQLIOSim-compatible XML log, page dumps, the JSON summary, system
//! information, and `sqliosim report` (terminal summary, HTML page, evidence bundle), in one
//! folder per role:
//!
//! - [`sinks`]: what a run writes as it goes. [`Evidence`] is the [`crate::events::EventSink`]
//!   that writes the log, the dumps and the JSON summary under the error cap; the status line
//!   and the metrics textfile are sinks of their own.
//! - [`readers`]: a log or summary read back, cut short or not ([`readers::load::load`]).
//! - [`views`]: the terminal summary, [`views::html::render`] and [`views::bundle::write`].
//! - [`facts`]: system information, block devices, the I/O service.
//! - [`fleet`]: `sqliosim report` over many runs.
//! - [`campaign`]: `sqliosim report CAMPAIGN_DIR`, the power-cycle campaign report: one row
//!   per host per power cut, from the `cut.json`, `verify.json`, `verify.rc` and SMART counts
//!   the campaign playbook leaves.
//!
//! This module never depends on the simulator's actors or driver (`crate::sim::actors`,
//! `crate::sim::driver`).
//!
//! One cycle of folders stays, among `sinks`, `readers`, `facts` and `views`: each format's writer
//! (a sink) and its reader share its types (the JSON summary, the XML log's entries), the sinks
//! reuse the readers' repair and parse of what they wrote and the views' dump links, both the sinks
//! and the views record or show the facts, and the kernel log's facts are stamped with the sinks'
//! clock. Untangling it takes a module per file format, a larger move than a seam.

pub mod campaign;
mod cli;
pub mod error;
pub mod facts;
pub mod fleet;
pub mod readers;
pub mod sinks;
pub mod views;

pub use cli::Args as ReportArgs;
pub use cli::CommandError;
pub use error::ReportError;
pub use facts::io_service::IoServiceInfo;
pub use facts::sysinfo::SystemInfo;
pub use sinks::clock::LogClock;
pub use sinks::dump::{DumpFiles, DumpWriter};
pub use sinks::error_cap::DEFAULT_ERROR_CAP;
pub use sinks::evidence::{Evidence, EvidenceOptions, RunInfo};
pub use sinks::json::JsonReport;

/// `sqliosim report ARGS…`; `args[0]` is the display name ("sqliosim report").
pub fn main(args: Vec<std::ffi::OsString>) -> Result<crate::exit::Outcome, CommandError> {
    cli::main(args)
}

/// `sqliosim report` with its options already parsed (by the top-level command line).
pub fn run(args: ReportArgs) -> Result<crate::exit::Outcome, CommandError> {
    cli::run(args)
}
