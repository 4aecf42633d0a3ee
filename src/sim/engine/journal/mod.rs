//! The durability journal: a compact, checksummed, append-only file beside the data files
//! that says, after a crash, which generation each page must hold at least.
//!
//! Contract: a write is durable once an O_DSYNC write completed or a later fdatasync of its
//! file completed. The journal thread ([`service`]) appends, within milliseconds, every
//! acknowledged O_DSYNC page write and every log flush; at each sync point (checkpoint,
//! shutdown) the simulation snapshots the completed generations, fdatasyncs the files, then
//! journals the pages whose durable generation changed. A page found older than its journaled
//! generation is therefore a lost write; a newer one was written after it was journaled and may
//! or may not have survived. A torn tail (a crash while appending) is ignored. When the file
//! outgrows twice a snapshot of the state it is rewritten as that snapshot
//! ([`JournalWriter::compact`]): written beside, synced, renamed over, directory synced, so a
//! crash at any moment leaves the old journal or the new one.
//!
//! The journal is written and read through the I/O layer only ([`crate::io::AppendFile`] from
//! [`Backend::create_append`], [`Backend::read_whole`]), so the faulty backend can lose or tear
//! its writes too. A journal that is unreadable *before* its end — whole records after bytes
//! that are not one — is damaged, not torn: its device lost or tore a write it had acknowledged
//! as durable ([`Damage`]); only the records before the damage are trusted.
//!
//! Records are framed and encoded with the shared codec ([`crate::codec`]); each frame states
//! its kind ([`RecordKind`]) and the journal's version ([`JournalVersion`]). A journal whose
//! first record states a version this build does not read is refused by its path
//! ([`JournalState::load`], [`LoadError::Foreign`]), never decoded as damage.

// A narrowing cast in an on-disk codec either is checked (`try_from`) or says why its range
// holds (issue #22 §12).
#![warn(clippy::cast_possible_truncation)]

mod bounds;
mod damage;
mod gens;
mod read;
mod record;
pub mod service;
mod state;
mod summary;

pub use damage::{Damage, Flaw};
pub use gens::PageGens;
pub use read::{decode, decode_all, Decoded};
pub use record::{version_of, BackupRecord, Record, RecordKind};

pub use service::{Ack, JournalOptions, JournalService};
pub use state::{JournalState, LoadError};
pub use summary::JournalSummary;

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::io::{AppendFile, Backend, IoError};
use crate::page::FileRole;

/// Journal file name, beside the first data file.
pub const JOURNAL_NAME: &str = "sqliosim.journal";
const MAGIC: [u8; 8] = *b"SQLSIMJR";
/// Bytes of a record's frame header: magic, kind, version, a spare byte, length, CRC32.
const HEADER: usize = 20;

crate::codec::versions! {
    /// The journal's versions this build reads, stated in every record's frame (a journal is
    /// refused by its first frame's, [`version_of`]). Journals written before the frame
    /// stated one hold 0 there and are refused.
    pub enum JournalVersion: "journal", writes V1 {
        /// Each record's frame states the version; a Start gives each file's page bound.
        V1 = 1,
    }
}

/// One file of the set, as the journal knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JournalFile {
    /// File id (index in the set).
    pub file_id: u32,
    /// Data or log.
    pub role: FileRole,
    /// Path.
    pub path: PathBuf,
    /// The most pages the file can have during the run (its MaxSize, or its size when that is
    /// larger): no journaled page or size may be beyond it. `None` (stored as 0) holds the
    /// file to [`MAX_FILE_PAGES`].
    pub max_pages: Option<u64>,
}

/// The bound of a file whose Start entry records none: the largest page number whose byte
/// offset a `u64` holds (a block device as `FileName` can be larger than `MaxSize` allows).
pub const MAX_FILE_PAGES: u64 = u64::MAX / crate::page::PAGE_SIZE as u64;

/// What hands a compaction its records: called once with the sink each record goes to.
pub type RecordSource<'a> = dyn FnMut(&mut dyn FnMut(&Record)) + 'a;

/// The journal being written by a run, through the I/O layer's append-file door (so the
/// faulty backend and faultfs reach it as they reach the data files).
#[derive(Debug)]
pub struct JournalWriter {
    file: Box<dyn AppendFile>,
}

/// Where a compaction writes the new journal before renaming it over the old one.
pub fn compaction_path(journal: &Path) -> PathBuf {
    crate::io::append::replacement_path(journal)
}

impl JournalWriter {
    /// Starts the journal at `path` with `records` (a Start first: a new run's, or the
    /// snapshot a restarted run carries over, [`JournalState::carried_over`]). They replace
    /// the old journal atomically, so a crash at any moment leaves the old journal or the
    /// new one whole, never a journal that holds nothing.
    pub fn create(
        backend: &dyn Backend,
        path: &Path,
        records: &[Record],
    ) -> Result<JournalWriter, IoError> {
        // A compaction a crash interrupted left this; the journal itself is whole.
        backend.remove(&compaction_path(path))?;
        let mut j = JournalWriter {
            file: backend.open_append(path)?,
        };
        j.compact(records).map_err(|source| IoError::Os {
            path: path.to_path_buf(),
            what: "cannot write",
            source,
        })?;
        Ok(j)
    }

    /// Appends records and makes them durable.
    pub fn append(&mut self, records: &[Record]) -> io::Result<()> {
        self.append_bytes(&encode(records))
    }

    /// Appends encoded records ([`encode`]) and makes them durable.
    pub fn append_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.append(bytes)?;
        self.file.sync_data()
    }

    /// Replaces the journal with `records` (a snapshot): written to `….new.<random>`, synced, renamed
    /// over the journal, directory synced; appends go to the new file from then on. Returns
    /// its size. On failure the old journal is kept and still appended to.
    pub fn compact(&mut self, records: &[Record]) -> io::Result<u64> {
        self.compact_from(&mut |emit| records.iter().for_each(&mut *emit))
    }

    /// [`JournalWriter::compact`] with the records `records` hands out, each written as it
    /// comes: a snapshot of a terabyte's pages is never in memory whole.
    pub fn compact_from(&mut self, records: &mut RecordSource<'_>) -> io::Result<u64> {
        self.file.replace(&mut |w| {
            let mut written = Ok(());
            records(&mut |r| {
                if written.is_ok() {
                    written = w.write_all(&r.encode());
                }
            });
            written
        })?;
        Ok(self.file.len())
    }

    /// Cuts off what a failed append left after the last whole record, so that a last small
    /// record (Void) may still fit after ENOSPC.
    pub fn rollback(&mut self) -> io::Result<()> {
        let len = self.file.len();
        self.file.truncate(len)
    }

    /// Bytes in the journal.
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// True before the Start record is written.
    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

/// Records in the journal's encoding, one after the other.
pub fn encode(records: &[Record]) -> Vec<u8> {
    records.iter().flat_map(Record::encode).collect()
}

#[cfg(test)]
mod tests;
