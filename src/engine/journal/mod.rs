//! The durability journal: a compact, checksummed, append-only file beside the data files
//! that says, after a crash, which generation each page must hold at least.
//!
//! Contract: a write is durable once an O_DSYNC write completed or a later fdatasync of its
//! file completed. At each sync point (checkpoint, shutdown) the simulation snapshots the
//! completed generations, fdatasyncs the files, then appends the pages whose durable
//! generation changed and the log position, and syncs the journal. A page found older than its
//! journaled generation is therefore a lost write; a newer one was written after the last sync
//! point and may or may not have survived. A torn tail (a crash while appending) is ignored.

mod record;
mod state;

pub use record::{decode_all, Record};
pub use state::JournalState;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
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
}

impl JournalWriter {
    /// Starts a new journal at `path` (replacing an old one) with a Start record.
    pub fn create(path: &Path, run_id: u64, files: Vec<JournalFile>) -> io::Result<JournalWriter> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let mut j = JournalWriter {
            file,
            path: path.to_path_buf(),
        };
        j.append(&[Record::Start { run_id, files }])?;
        Ok(j)
    }

    /// Appends records and makes them durable.
    pub fn append(&mut self, records: &[Record]) -> io::Result<()> {
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend_from_slice(&r.encode());
        }
        self.file.write_all(&bytes)?;
        self.file.sync_data()
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests;
