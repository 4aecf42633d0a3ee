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

mod record;
pub mod service;
mod state;
mod summary;

pub use record::{decode_all, Record};
pub use service::{Ack, JournalOptions, JournalService};
pub use state::JournalState;
pub use summary::JournalSummary;

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::page::FileRole;

/// Journal file name, beside the first data file.
pub const JOURNAL_NAME: &str = "sqliosim.journal";
const MAGIC: [u8; 8] = *b"SQLSIMJR";
const HEADER: usize = 20;

/// One file of the set, as the journal knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JournalFile {
    /// File id (index in the set).
    pub file_id: u32,
    /// Data or log.
    pub role: FileRole,
    /// Path.
    pub path: PathBuf,
}

/// The journal being written by a run.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
    len: u64,
}

/// Where a compaction writes the new journal before renaming it over the old one.
pub fn compaction_path(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

impl JournalWriter {
    /// Starts a new journal at `path` (replacing an old one) with a Start record.
    pub fn create(path: &Path, run_id: u64, files: Vec<JournalFile>) -> io::Result<JournalWriter> {
        // A compaction a crash interrupted left this; the journal itself is whole.
        let _ = std::fs::remove_file(compaction_path(path));
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let mut j = JournalWriter {
            file,
            path: path.to_path_buf(),
            len: 0,
        };
        j.append(&[Record::Start { run_id, files }])?;
        sync_dir(path)?;
        Ok(j)
    }

    /// Appends records and makes them durable.
    pub fn append(&mut self, records: &[Record]) -> io::Result<()> {
        let bytes = encode(records);
        self.file.write_all(&bytes)?;
        self.len += bytes.len() as u64;
        self.file.sync_data()
    }

    /// Replaces the journal with `records` (a snapshot): written to `….new`, synced, renamed
    /// over the journal, directory synced; appends go to the new file from then on. Returns
    /// its size. On failure the old journal is kept and still appended to.
    pub fn compact(&mut self, records: &[Record]) -> io::Result<u64> {
        let new = compaction_path(&self.path);
        let bytes = encode(records);
        let written = (|| {
            let mut f = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&new)?;
            f.write_all(&bytes)?;
            f.sync_data()?;
            Ok::<File, io::Error>(f)
        })();
        let f = match written {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_file(&new);
                return Err(e);
            }
        };
        std::fs::rename(&new, &self.path)?;
        self.file = f;
        self.len = bytes.len() as u64;
        sync_dir(&self.path)?;
        Ok(self.len)
    }

    /// Cuts off what a failed append left after the last whole record, so that a last small
    /// record (Void) may still fit after ENOSPC.
    pub fn rollback(&mut self) -> io::Result<()> {
        self.file.set_len(self.len)?;
        self.file.seek(SeekFrom::Start(self.len)).map(|_| ())
    }

    /// Bytes in the journal.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True before the Start record is written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn encode(records: &[Record]) -> Vec<u8> {
    records.iter().flat_map(Record::encode).collect()
}

/// Makes a new or renamed entry of `file`'s directory durable.
fn sync_dir(file: &Path) -> io::Result<()> {
    match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => File::open(dir)?.sync_all(),
        None => File::open(".")?.sync_all(),
    }
}

#[cfg(test)]
mod tests;
