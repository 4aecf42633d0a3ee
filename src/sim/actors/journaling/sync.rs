//! Sync points, synchronous acknowledgements, resizes and the end: what the journal is told
//! while the run works, so that after a crash `sqliosim verify` knows which generation every
//! page must hold at least.
//!
//! Acknowledged durability reaches the journal two ways. Continuously: every `O_DSYNC` page
//! write that completes (WriteThrough=TRUE) and every log flush is queued to the journal
//! thread, which makes it durable within its batch interval. At sync points (checkpoints,
//! the end): the generations of every completed write are snapshotted, every file is
//! `fdatasync`ed, and the pages whose generation changed are journaled.

use crate::findings::Severity;
use crate::io::Ticket;
use crate::page::PAGE_SIZE;
use crate::sim::actors::context::Run;
use crate::sim::engine::journal::{Ack, Record};
use crate::sim::engine::logblock::NO_PREV;

/// Queues the acknowledgement of write-through writes of pages `first..` of data file `file`
/// (a push onto the journal thread's channel; no-op without a journal, without WriteThrough
/// and in mode None). In forced-flush mode, and in FUA mode where the stack drops an `O_DSYNC`
/// write's flush (FUSE), a flush of the file that started after the write returned must end
/// first, journal or not (the file's [`crate::io::FlushGate`]: this writer's own, or one shared
/// with the file's other writers): the write is durable only then, and is not acknowledged
/// when that flush fails.
pub fn acknowledged(run: &Run<'_>, file: usize, first: u64, gens: Vec<u64>) {
    if !run.plan.acks_each_write() {
        return;
    }
    let f = &run.files[file];
    if let Some(gate) = &f.flush_gate {
        // The write has returned: a flush that starts after this ticket covers it, whether
        // this writer runs it or joins one another writer of the file started (issue #39).
        if let Err(e) = gate.cover(Ticket::now()) {
            warn(
                run,
                &format!("fdatasync of {} failed: {e}", f.path.display()),
            );
            return;
        }
    }
    if let Some(j) = &run.journal {
        j.service.ack(Ack::Pages {
            file_id: file as u32,
            first,
            gens,
        });
    }
}

/// Marks the completed generations that changed, fdatasyncs every file, then journals the
/// marked ones. Returns false (after a warning) when a file could not be synced or the journal
/// written.
///
/// The marks live in the oracle's slots ([`Oracle::snap_changed`], [`Oracle::take_snapped`]),
/// and the pages go to the journal in records of at most `SYNC_CHUNK` pages: a sync point
/// holds no list of the file's pages (it held 16 bytes of every written page, with the
/// allocator's copies about 30, at every checkpoint).
///
/// [`Oracle::snap_changed`]: crate::sim::engine::oracle::Oracle::snap_changed
/// [`Oracle::take_snapped`]: crate::sim::engine::oracle::Oracle::take_snapped
pub fn sync_point(run: &Run<'_>) -> bool {
    let Some(j) = &run.journal else {
        return true;
    };
    let _order = j.order.lock();
    // Marked before the fdatasync: every write marked here completed before the sync began,
    // so the sync makes it durable.
    let data: Vec<(usize, u64)> = run
        .files
        .data
        .iter()
        .map(|&i| (i, synced_pages(run, i)))
        .collect();
    for &(i, pages) in &data {
        run.files[i].oracle.snap_changed(pages);
    }
    // Only a position this run wrote and flushed: a resumed log has written nothing yet (what
    // the old run made durable is carried over by the journal itself).
    let logs: Vec<Record> = run
        .files
        .logs
        .iter()
        .filter(|l| l.wal.last_block() != NO_PREV)
        .map(|l| Record::Log {
            file_id: l.file as u32,
            last_block: l.wal.last_block(),
            durable_end: l.wal.durable_end(),
        })
        .collect();
    // A file with a flush gate (forced flush; FUA where the stack drops an `O_DSYNC` write's
    // flush) is flushed through it: the sync point's ticket, taken after the marks, is covered
    // by a flush that started after it, which the file's writers waiting meanwhile share, and
    // a flush they started after the ticket serves the sync point (issue #39).
    let ticket = Ticket::now();
    for f in &run.files {
        let flushed = match &f.flush_gate {
            Some(gate) => gate.cover(ticket),
            None => f.storage.sync_data(),
        };
        if let Err(e) = flushed {
            // The marks stay: the next sync point journals them after its own fdatasync.
            warn(
                run,
                &format!("fdatasync of {} failed: {e}", f.path.display()),
            );
            return false;
        }
    }
    // Full chunks go at once; the last of each file with the log positions, in one commit as
    // a small file set's sync point always was.
    let mut ok = true;
    let mut last = Vec::new();
    for &(i, pages) in &data {
        let mut chunk = Vec::new();
        run.files[i].oracle.take_snapped(pages, |page, gen| {
            chunk.push((page, gen));
            if chunk.len() == SYNC_CHUNK {
                let full = durable(i, std::mem::take(&mut chunk));
                ok &= j.service.commit(vec![full]);
            }
        });
        if !chunk.is_empty() {
            last.push(durable(i, chunk));
        }
    }
    last.extend(logs);
    ok & j.service.commit(last)
}

/// Most pages in one Durable record of a sync point (1 MiB of (page, generation) pairs).
const SYNC_CHUNK: usize = 65_536;

fn durable(file: usize, pages: Vec<(u64, u64)>) -> Record {
    Record::Durable {
        file_id: file as u32,
        pages,
    }
}

/// Journals a new file size and applies it with `apply`, holding the journal order meanwhile
/// so that no sync point journals pages of the old size after the new size is recorded. A
/// shrink is journaled before it truncates (after a crash the pages beyond the size are not
/// owed); a grow adds only never-written pages, which nothing owes either.
pub fn resize<T>(run: &Run<'_>, file: usize, pages: u64, apply: impl FnOnce() -> T) -> T {
    let Some(j) = &run.journal else {
        return apply();
    };
    let _order = j.order.lock();
    j.service.commit(vec![Record::Resize {
        file_id: file as u32,
        pages,
    }]);
    apply()
}

/// Journals a finished backup: its stream made durable and renamed into place, so the device
/// owes it whole until a later finished backup of its kind replaces it (`verify` holds it to
/// that). Nothing to do without a journal.
pub fn backup_finished(run: &Run<'_>, record: crate::sim::engine::journal::BackupRecord) {
    if let Some(j) = &run.journal {
        j.service.commit(vec![Record::Backup(record)]);
    }
}

/// Marks the end of a clean run.
pub(super) fn end(run: &Run<'_>) {
    if sync_point(run) {
        if let Some(j) = &run.journal {
            j.service.commit(vec![Record::End]);
        }
    }
}

/// Writes what the journal thread holds and stops it.
pub(super) fn finish(run: &Run<'_>) {
    if let Some(j) = &run.journal {
        j.service.finish();
    }
}

/// The pages of `file` a sync point covers: those the file holds now (a page beyond its end,
/// cut off by a shrink or not yet grown into, keeps its mark for a later sync point).
fn synced_pages(run: &Run<'_>, file: usize) -> u64 {
    let f = &run.files[file];
    f.storage
        .len()
        .map(|l| l / PAGE_SIZE as u64)
        .unwrap_or(0)
        .min(f.oracle.pages())
}

fn warn(run: &Run<'_>, text: &str) {
    run.message(Severity::Warning, "Checkpoint", "SyncPoint", text);
}
