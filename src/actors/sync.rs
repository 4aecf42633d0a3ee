//! Sync points: make completed writes durable and record them in the journal, so that after a
//! crash `sqliosim verify` knows which generation every page must hold at least.

use parking_lot::Mutex;

use super::shared::Shared;
use crate::engine::journal::{JournalWriter, Record};
use crate::findings::Severity;
use crate::page::PAGE_SIZE;

/// The journal of a run and what it has recorded so far.
#[derive(Debug)]
pub struct Journal {
    writer: JournalWriter,
    /// Per file index: the generation journaled for each page.
    journaled: Vec<Vec<u64>>,
}

impl Journal {
    /// Wraps a journal just created for `files` files.
    pub fn new(writer: JournalWriter, files: usize) -> Journal {
        Journal {
            writer,
            journaled: vec![Vec::new(); files],
        }
    }
}

/// The journal, if the run keeps one.
pub type JournalSlot = Option<Mutex<Journal>>;

/// Snapshots the completed generations, fdatasyncs every file, then journals what changed.
/// Returns false (after a warning) when the journal could not be written.
pub fn sync_point(sh: &Shared) -> bool {
    let Some(j) = &sh.journal else {
        return true;
    };
    let mut j = j.lock();
    // Snapshot before the fdatasync: every write counted here completed before the sync began,
    // so the sync makes it durable.
    let snapshot: Vec<(usize, Vec<u64>)> = sh
        .data
        .iter()
        .map(|&i| (i, done_generations(sh, i)))
        .collect();
    let logs: Vec<Record> = sh
        .logs
        .iter()
        .map(|l| Record::Log {
            file_id: l.file as u32,
            last_block: l.wal.last_block(),
            durable_end: l.wal.durable_end(),
        })
        .collect();
    for f in &sh.files {
        if let Err(e) = f.storage.sync_data() {
            warn(
                sh,
                &format!("fdatasync of {} failed: {e}", f.path.display()),
            );
            return false;
        }
    }
    let mut records = Vec::new();
    for (i, gens) in snapshot {
        let old = &mut j.journaled[i];
        let changed: Vec<(u64, u64)> = gens
            .iter()
            .enumerate()
            .filter(|(p, g)| **g > 0 && old.get(*p) != Some(*g))
            .map(|(p, g)| (p as u64, *g))
            .collect();
        if !changed.is_empty() {
            records.push(Record::Durable {
                file_id: i as u32,
                pages: changed,
            });
        }
        *old = gens;
    }
    records.extend(logs);
    append(sh, &mut j, &records)
}

/// Journals a new file size and applies it with `apply`, holding the journal meanwhile so that
/// no sync point journals pages of the old size after the new size is recorded. A shrink is
/// journaled before it truncates (after a crash the pages beyond the size are not owed); a
/// grow adds only never-written pages, which nothing owes either.
pub fn resize<T>(sh: &Shared, file: usize, pages: u64, apply: impl FnOnce() -> T) -> T {
    let Some(j) = &sh.journal else {
        return apply();
    };
    let mut j = j.lock();
    if let Some(v) = j.journaled.get_mut(file) {
        v.truncate(pages as usize);
    }
    append(
        sh,
        &mut j,
        &[Record::Resize {
            file_id: file as u32,
            pages,
        }],
    );
    apply()
}

/// Marks the end of a clean run.
pub fn end(sh: &Shared) {
    if sync_point(sh) {
        if let Some(j) = &sh.journal {
            append(sh, &mut j.lock(), &[Record::End]);
        }
    }
}

fn append(sh: &Shared, j: &mut Journal, records: &[Record]) -> bool {
    match j.writer.append(records) {
        Ok(()) => true,
        Err(e) => {
            warn(
                sh,
                &format!(
                    "cannot write the journal {}: {e}",
                    j.writer.path().display()
                ),
            );
            false
        }
    }
}

fn done_generations(sh: &Shared, file: usize) -> Vec<u64> {
    let f = &sh.files[file];
    let pages = f
        .storage
        .len()
        .map(|l| l / PAGE_SIZE as u64)
        .unwrap_or(0)
        .min(f.oracle.pages());
    (0..pages)
        .map(|p| f.oracle.expect(p).min_acceptable())
        .collect()
}

fn warn(sh: &Shared, text: &str) {
    sh.message(Severity::Warning, "Checkpoint", "SyncPoint", text);
}
