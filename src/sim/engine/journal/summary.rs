//! What the journal did during a run (size, compactions, whether it could be written), as the
//! journal thread counts it and the run summary reports it.

use std::sync::atomic::AtomicU64;

use crate::sync::Mutex;
use serde::Serialize;

/// What the journal did, for the run summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct JournalSummary {
    /// Where it is.
    pub path: String,
    /// Its size at the end, bytes.
    pub bytes: u64,
    /// Largest size it reached, bytes.
    pub max_bytes: u64,
    /// Size of the last snapshot written by a compaction (0: never compacted), bytes.
    pub snapshot_bytes: u64,
    /// Compactions done.
    pub compactions: u64,
    /// Time spent compacting, milliseconds.
    pub compaction_ms: f64,
    /// Batches appended.
    pub batches: u64,
    /// Batch interval, milliseconds: acknowledgements younger than this at a cut may be lost
    /// from the journal.
    pub batch_interval_ms: u64,
    /// Why and when (seconds into the run) the journal stopped being written, if it did.
    pub void: Option<String>,
    /// What the off-host witness (`--witness`) was sent and acknowledged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<crate::witness::WitnessSummary>,
}

/// Counters the thread keeps for the summary.
#[derive(Debug, Default)]
pub(super) struct Status {
    pub(super) bytes: AtomicU64,
    pub(super) max_bytes: AtomicU64,
    pub(super) snapshot_bytes: AtomicU64,
    pub(super) compactions: AtomicU64,
    pub(super) compaction_ns: AtomicU64,
    pub(super) batches: AtomicU64,
    pub(super) void: Mutex<Option<String>>,
}
