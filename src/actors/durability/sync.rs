//! Sync points and acknowledgements: what the journal is told, so that after a crash
//! `sqliosim verify` knows which generation every page must hold at least.
//!
//! Acknowledged durability reaches the journal two ways. Continuously: every `O_DSYNC` page
//! write that completes (WriteThrough=TRUE) and every log flush is queued to the journal
//! thread, which makes it durable within its batch interval. At sync points (checkpoints,
//! the end): the generations of every completed write are snapshotted, every file is
//! `fdatasync`ed, and the pages whose generation changed are journaled.

use parking_lot::Mutex;

use super::shared::Shared;
use crate::engine::journal::{Ack, JournalService, Record};
use crate::engine::wal::NO_PREV;
use crate::findings::Severity;
use crate::page::PAGE_SIZE;

/// The journal of a run.
#[derive(Debug)]
pub struct Journal {
    /// The journal thread.
    pub service: JournalService,
    /// Held by sync points and resizes, so that no sync point journals pages of the old size
    /// after a new size is recorded.
    order: Mutex<()>,
}

impl Journal {
    /// Wraps a running journal.
    pub fn new(service: JournalService) -> Journal {
        Journal {
            service,
            order: Mutex::new(()),
        }
    }
}

/// The journal, if the run keeps one.
pub type JournalSlot = Option<Journal>;

/// Queues the acknowledgement of `O_DSYNC` writes of pages `first..` of data file `file` (a
/// push onto the journal thread's channel; no-op without a journal or WriteThrough). Where
/// the stack drops an `O_DSYNC` write's flush (FUSE), the file is fdatasynced first: the
/// write is durable only then, and is not acknowledged when that fails.
pub fn acknowledged(sh: &Shared, file: usize, first: u64, gens: Vec<u64>) {
    if !sh.plan.write_through {
        return;
    }
    let f = &sh.files[file];
    if f.flush_after_dsync {
        if let Err(e) = f.storage.sync_data() {
            warn(
                sh,
                &format!("fdatasync of {} failed: {e}", f.path.display()),
            );
            return;
        }
    }
    if let Some(j) = &sh.journal {
        j.service.ack(Ack::Pages {
            file_id: file as u32,
            first,
            gens,
        });
    }
}

/// Snapshots the completed generations, fdatasyncs every file, then journals what changed.
/// Returns false (after a warning) when a file could not be synced or the journal written.
pub fn sync_point(sh: &Shared) -> bool {
    let Some(j) = &sh.journal else {
        return true;
    };
    let _order = j.order.lock();
    // Snapshot before the fdatasync: every write counted here completed before the sync began,
    // so the sync makes it durable.
    let mut records: Vec<Record> = sh
        .data
        .iter()
        .map(|&i| Record::Durable {
            file_id: i as u32,
            pages: done_generations(sh, i),
        })
        .collect();
    // Only a position this run wrote and flushed: a resumed log's durable end starts at the
    // next lap, where nothing is written yet (what the old run made durable is carried over
    // by the journal itself).
    records.extend(
        sh.logs
            .iter()
            .filter(|l| l.wal.last_block() != NO_PREV)
            .map(|l| Record::Log {
                file_id: l.file as u32,
                last_block: l.wal.last_block(),
                durable_end: l.wal.durable_end(),
            }),
    );
    for f in &sh.files {
        if let Err(e) = f.storage.sync_data() {
            warn(
                sh,
                &format!("fdatasync of {} failed: {e}", f.path.display()),
            );
            return false;
        }
    }
    j.service.commit(records)
}

/// Journals a new file size and applies it with `apply`, holding the journal order meanwhile
/// so that no sync point journals pages of the old size after the new size is recorded. A
/// shrink is journaled before it truncates (after a crash the pages beyond the size are not
/// owed); a grow adds only never-written pages, which nothing owes either.
pub fn resize<T>(sh: &Shared, file: usize, pages: u64, apply: impl FnOnce() -> T) -> T {
    let Some(j) = &sh.journal else {
        return apply();
    };
    let _order = j.order.lock();
    j.service.commit(vec![Record::Resize {
        file_id: file as u32,
        pages,
    }]);
    apply()
}

/// Marks the end of a clean run.
pub fn end(sh: &Shared) {
    if sync_point(sh) {
        if let Some(j) = &sh.journal {
            j.service.commit(vec![Record::End]);
        }
    }
}

/// Writes what the journal thread holds and stops it.
pub fn finish(sh: &Shared) {
    if let Some(j) = &sh.journal {
        j.service.finish();
    }
}

/// (page, generation) of every page of `file` with a completed write.
fn done_generations(sh: &Shared, file: usize) -> Vec<(u64, u64)> {
    let f = &sh.files[file];
    let pages = f
        .storage
        .len()
        .map(|l| l / PAGE_SIZE as u64)
        .unwrap_or(0)
        .min(f.oracle.pages());
    (0..pages)
        .map(|p| (p, f.oracle.expect(p).min_acceptable()))
        .filter(|(_, g)| *g > 0)
        .collect()
}

fn warn(sh: &Shared, text: &str) {
    sh.message(Severity::Warning, "Checkpoint", "SyncPoint", text);
}
