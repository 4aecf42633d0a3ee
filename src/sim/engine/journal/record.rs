//! Journal records: what each says, what the journal holds of a finished backup, and the
//! merging of a batch's acknowledgements. Their byte layout and encoding are in `encode`, the
//! decoding of one record in `decode` (a whole journal is read by `journal::read`).

mod decode;
mod encode;
mod kind;

pub use decode::version_of;
pub(super) use decode::{decode_one, frame};
pub use kind::RecordKind;

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::JournalFile;

/// A journal record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A new run: its id and files.
    Start {
        /// Run id.
        run_id: u64,
        /// The files.
        files: Vec<JournalFile>,
    },
    /// These pages of this file are durable at least at these generations.
    Durable {
        /// File id.
        file_id: u32,
        /// (page, generation) pairs.
        pages: Vec<(u64, u64)>,
    },
    /// The file now has this many pages.
    Resize {
        /// File id.
        file_id: u32,
        /// Pages.
        pages: u64,
    },
    /// The log of this file is durable up to here.
    Log {
        /// File id of the log file.
        file_id: u32,
        /// LSN of the last durable block.
        last_block: u64,
        /// End of the durable log.
        durable_end: u64,
    },
    /// The run ended cleanly.
    End,
    /// A batch of acknowledgements was journaled at `time_us`; the journal thread writes one
    /// every `interval_ms` at most, so acknowledgements younger than that may be missing.
    Mark {
        /// Wall-clock time of the batch, microseconds since the Unix epoch.
        time_us: u64,
        /// The batch interval.
        interval_ms: u32,
        /// The batch's number since the last Start: 1, 2, 3… (a snapshot's mark repeats the
        /// last one). A gap means whole batches went missing without a hole — a lost append
        /// followed by appends where it should have been, or older records showing through
        /// (see `damage.rs`). This build never writes 0; a 0 read is not checked.
        batch: u64,
    },
    /// The journal could not be written from `time_us` on: nothing acknowledged afterwards
    /// is held to account.
    Void {
        /// When the write failed, microseconds since the Unix epoch.
        time_us: u64,
        /// The error.
        reason: String,
    },
    /// A backup finished: its stream was made durable and renamed into place, so the device
    /// owes it whole from here on (until a later finished backup replaces it).
    Backup(BackupRecord),
}

/// What the journal holds of the last finished backup of one kind (issue #25 §1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupRecord {
    /// A log backup's stream (`.trn`), else a full backup's (`.bak`).
    pub log: bool,
    /// Which backup of its kind in the run.
    pub backup_no: u64,
    /// Blocks of the stream, its END block included.
    pub blocks: u64,
    /// Bytes of the stream.
    pub bytes: u64,
    /// CRC32 of the blocks' CRCs in order (each little-endian): the stream's fingerprint.
    pub digest: u32,
    /// Where the stream is.
    pub path: PathBuf,
}

impl BackupRecord {
    /// The record of a finished stream at `path` whose blocks carry `crcs` (in order) in
    /// `bytes` bytes.
    pub fn finished(log: bool, backup_no: u64, crcs: &[u32], bytes: u64, path: PathBuf) -> Self {
        BackupRecord {
            log,
            backup_no,
            blocks: crcs.len() as u64,
            bytes,
            digest: Self::digest_of(crcs),
            path,
        }
    }

    /// The fingerprint of a stream whose blocks carry `crcs`, in order.
    pub fn digest_of(crcs: &[u32]) -> u32 {
        let bytes: Vec<[u8; 4]> = crcs.iter().map(|c| c.to_le_bytes()).collect();
        crate::codec::crc32(bytes.as_flattened())
    }
}

/// Merges each run of consecutive Durable records into one per file, keeping the highest
/// generation of each page: replaying them gives the same state (replay keeps the highest
/// generation of a page), and a batch then carries each page at most once, so one batch is never
/// larger than a snapshot however many times a hot page was written while it gathered. Other
/// records (Resize, Log, Start…) stay where they are: a Durable never moves across them.
pub fn coalesce_durable(records: Vec<Record>) -> Vec<Record> {
    let mut out = Vec::with_capacity(records.len());
    let mut run = PagesByFile::new();
    for r in records {
        match r {
            Record::Durable { file_id, pages } => {
                let m = run.entry(file_id).or_default();
                for (p, g) in pages {
                    let e = m.entry(p).or_insert(g);
                    *e = (*e).max(g);
                }
            }
            other => {
                flush_run(&mut run, &mut out);
                out.push(other);
            }
        }
    }
    flush_run(&mut run, &mut out);
    out
}

/// Per file id, per page, the highest generation of a run of Durable records.
type PagesByFile = BTreeMap<u32, BTreeMap<u64, u64>>;

fn flush_run(run: &mut PagesByFile, out: &mut Vec<Record>) {
    for (file_id, pages) in std::mem::take(run) {
        out.push(Record::Durable {
            file_id,
            pages: pages.into_iter().collect(),
        });
    }
}
