//! What an offline judgement (`sqliosim verify`, a resume's first check) held the files to and
//! what it counted, for the JSON summary's `judgement` (an addition to schema /2): the record
//! the files were held to (local journal or witness), the witness's lag at the cut, and the
//! page counts the verdict rests on. The campaign report reads it per host and cycle.

use serde::{Deserialize, Serialize};

/// Counts and sources of one judgement.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Judgement {
    /// Data pages checked (header pages excluded).
    pub pages_checked: u64,
    /// Pages the record held the device to: those with a durable generation in it.
    pub pages_owed: u64,
    /// Pages that read as never written (and may).
    pub never_written: u64,
    /// Pages newer than the record knew: writes that landed after its last batch (in flight at
    /// the cut, or acknowledged after the last batch was made durable).
    pub newer_than_journal: u64,
    /// Pages torn as a device may tear a write it never acknowledged (not findings).
    pub allowed_tears: u64,
    /// Log blocks found in the log files.
    pub log_blocks: u64,
    /// The record the files were held to.
    pub journal: JournalSource,
    /// What the witness held, when `--witness` asked it.
    pub witness: Option<WitnessHeld>,
}

/// The record the files were held to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct JournalSource {
    /// "local" (the journal on the host), "witness" (the off-host record) or "none".
    pub source: String,
    /// Its last journal batch (None: no record).
    pub last_batch: Option<u64>,
    /// Time of its last batch mark, µs since the Unix epoch.
    pub last_batch_us: Option<u64>,
    /// Whether it says the run ended cleanly.
    pub clean_shutdown: Option<bool>,
}

/// The witness's record against the local journal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct WitnessHeld {
    /// The witness asked (ADDR:PORT).
    pub addr: String,
    /// The witness's last journal batch of the run (None: it holds no record of the run).
    pub record_batch: Option<u64>,
    /// The local journal's last batch (None: no local journal of the run).
    pub local_batch: Option<u64>,
    /// "witness", "local" or "none": which record the files were held to.
    pub held_to: String,
    /// Owed page generations only the witness held (the local journal lost them with the
    /// host).
    pub owed_only_witness: u64,
    /// Batches the local journal holds after the witness's last one: acknowledged and not
    /// witnessed at the cut (the witness lag), so not judged by the witness.
    pub acked_after_witness_batches: u64,
    /// Owed page generations in those batches.
    pub acked_after_witness_pages: u64,
}
