//! Evidence: the SQLIOSim-compatible XML log, page dumps, the JSON summary, system
//! information, and `sqliosim report` (terminal summary, HTML page, evidence bundle).
//!
//! During a run, [`Evidence`] is the [`crate::events::EventSink`] that writes the log, the
//! dumps and the JSON summary under the error cap. After (or during) a run, [`reader::load`]
//! reads a log or summary back, cut short or not, for the terminal summary, [`html::render`]
//! and [`bundle::write`]. This module never depends on `actors` or `sched`.

pub mod blockdev;
pub mod bundle;
pub mod cap;
pub mod charts;
mod cli;
pub mod clock;
pub mod console;
pub mod dump;
mod dumptext;
pub mod entry;
pub mod error;
pub mod evidence;
mod finding_xml;
pub mod fleet;
pub mod hresult;
pub mod html;
pub mod html_header;
pub mod io_service;
pub mod json;
mod jsonfix;
pub mod links;
pub mod logparse;
pub mod logw;
pub mod metrics;
pub mod progress;
pub mod reader;
pub mod runstate;
pub mod status;
mod summary_lines;
pub mod sysinfo;
pub mod xml;

pub use cap::DEFAULT_ERROR_CAP;
pub use cli::Args as ReportArgs;
pub use clock::LogClock;
pub use dump::{DumpFiles, DumpWriter};
pub use error::ReportError;
pub use evidence::{Evidence, EvidenceOptions, RunInfo};
pub use io_service::IoServiceInfo;
pub use json::JsonReport;
pub use sysinfo::SystemInfo;

/// `sqliosim report ARGS…`; `args[0]` is the display name ("sqliosim report").
pub fn main(args: Vec<std::ffi::OsString>) -> anyhow::Result<crate::exit::Outcome> {
    cli::main(args)
}

/// `sqliosim report` with its options already parsed (by the top-level command line).
pub fn run(args: ReportArgs) -> anyhow::Result<crate::exit::Outcome> {
    cli::run(args)
}
