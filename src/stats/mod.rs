//! Statistics: per-thread counters, latency histograms and a per-second timeline, merged into
//! a run summary at the end.
//!
//! Each worker thread owns a [`ThreadStats`] and records into it without locks; a monitor thread
//! reads cheap live totals through a shared [`LiveCounters`]. At the end (or at any moment, from
//! clones) the thread stats are merged into a [`RunStats`] and turned into a serialisable
//! [`Summary`], which also renders SQLIOSim's byte-compatible per-file summary lines.
//! The depth figures ([`DepthSummary`]) are read from the lock-free gauges of `control::depth`.
//!
//! One cycle of files stays: a `thread`'s statistics flush themselves into the `board` about once a
//! second, and the board merges them into `run`'s [`RunStats`]; recording stays lock-free, with no
//! callback between them.

mod board;
mod depth;
mod hist;
mod live;
mod op;
mod run;
mod summary;
mod text;
mod thread;
mod timeline;

pub use board::StatsBoard;
pub use depth::{fill_depth_timeline, DepthSummary, PhaseDepth};
pub use hist::{histogram_to_v2_base64, LatencyHistogram};
pub use live::{LiveCounters, LiveSnapshot};
pub use op::OpKind;
pub use run::{FileMeta, RunStats};
pub use summary::{
    ActorSummary, DriveCounters, DriveLevel, FileSpace, FileSummary, Latency, OpTotals, Summary,
    OTHER_FILES,
};
pub use text::{file_summary_lines, SQLIOSIM_SUMMARY_FUNC};
pub use thread::ThreadStats;
pub use timeline::{Timeline, TimelineBucket, TimelinePoint};
