//! Durable writes journaled as they complete, not when their actor next looks (issue #21 §4):
//! an asynchronous actor collects its completions when it posts again or waits, and one that
//! pauses (a BulkUpdateUser's BUDelay, a lazy writer between passes) would otherwise leave an
//! `O_DSYNC` write acknowledged by the device and unknown to the journal for the whole pause,
//! far beyond the batch interval `verify` states.
//!
//! A flight's [`AckBook`] is told each write it posts (by token); its hook on the flight's
//! completion queue hears each completion as it is queued — on the I/O service's thread, or
//! the actor's own when it polls a ring of its own — and pushes the acknowledgement onto the
//! journal's channel there and then. The hook never blocks the thread that carries I/O: when
//! the channel is full it keeps the acknowledgement, and the actor pushes it (waiting) when
//! it handles the completion ([`AckBook::settle`]). The hook runs before the completion is
//! queued, so it is done with a token before the actor can handle it and reuse the token.
//!
//! A file whose write-through writes are durable only after an explicit `fdatasync`
//! (`SimFile::flush_after_write`: forced-flush mode, or FUA mode on a stack that drops an
//! `O_DSYNC` write's flush, FUSE) is synced by the hook before it acknowledges such a write
//! (and by [`AckBook::settle`] before one the hook did not see), none when the sync fails, as
//! `durability::acknowledged` does for synchronous writers. The hook runs before the completion
//! is queued, so the actor sees the write done only once it was flushed, and the journal hears
//! of it only after the `fdatasync` returned: never before, which after a power cut would hold
//! the device to a write nobody had made durable. The book is kept without a journal too when
//! a file must be flushed, so that the flush is issued whether or not anything checks it.
//!
//! Why an `fdatasync` once the write completed rather than an io_uring `IORING_OP_FSYNC`
//! (`IORING_FSYNC_DATASYNC`) linked after the write: both start the flush only after the write
//! completed, so both are correct; the flush here covers every I/O path (psync, sync, the
//! service's ring and a poster's own ring) in one place, and fails the acknowledgement, not the
//! write, when it fails. Its cost: the sync runs on the thread that heard the completion (the
//! I/O service's), which then carries no other completion meanwhile; a linked flush would
//! overlap them, and is left for later (docs/durability.md, "Durability modes").

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam::channel::{Sender, TrySendError};
use parking_lot::Mutex;

use crate::io::{Completion, OnComplete, Storage};
use crate::sim::actors::context::Run;
use crate::sim::engine::journal::Ack;

/// A posted write's pages: (file id, first page, generations), or its acknowledgement when
/// the hook could not push it.
enum Entry {
    Posted(u32, u64, Vec<u64>),
    Unsent(Ack),
}

/// The acknowledgements a flight's writes owe the journal.
pub(in crate::sim::actors) struct AckBook {
    /// The journal's channel; `None` without a journal (the book then only flushes).
    tx: Option<Sender<Ack>>,
    pending: Mutex<HashMap<u64, Entry>>,
    /// Per data file: its storage when its writes must be fdatasynced before they count.
    flush: Vec<Option<Arc<dyn Storage>>>,
}

impl AckBook {
    /// A book for a flight of `run`, when its completed writes are acknowledged one by one
    /// (WriteThrough, not mode None) and either journaled or flushed; `None` otherwise.
    pub fn for_run(run: &Run<'_>) -> Option<Arc<AckBook>> {
        if !run.plan.acks_each_write() {
            return None;
        }
        let flush: Vec<_> = run
            .files
            .iter()
            .map(|f| f.flush_after_write.then(|| Arc::clone(&f.storage)))
            .collect();
        let tx = run.journal.as_ref().map(|j| j.service.sender());
        if tx.is_none() && flush.iter().all(Option::is_none) {
            return None;
        }
        Some(Arc::new(AckBook {
            tx,
            pending: Mutex::new(HashMap::new()),
            flush,
        }))
    }

    /// What the flight's completion queue tells of each completion.
    pub fn hook(self: &Arc<Self>) -> OnComplete {
        let book = Arc::clone(self);
        Arc::new(move |c: &Completion| book.completed(c))
    }

    /// Write `token` of `gens` from page `first` of data file `file` is being posted.
    pub fn expect(&self, token: u64, file: usize, first: u64, gens: &[u64]) {
        self.pending
            .lock()
            .insert(token, Entry::Posted(file as u32, first, gens.to_vec()));
    }

    /// The hook: a completed write is acknowledged to the journal now, without waiting.
    fn completed(&self, c: &Completion) {
        let mut pending = self.pending.lock();
        let Some(Entry::Posted(file_id, first, gens)) = pending.remove(&c.token) else {
            return;
        };
        if c.result.is_err() {
            return;
        }
        if let Some(Some(storage)) = self.flush.get(file_id as usize) {
            // Durable only once synced (FUSE): synced here, on the thread that heard the
            // completion, so the acknowledgement is as prompt as on any other stack.
            if storage.sync_data().is_err() {
                return; // Not durable: not acknowledged.
            }
        }
        let Some(tx) = &self.tx else {
            return; // Flushed; no journal to tell.
        };
        let ack = Ack::Pages {
            file_id,
            first,
            gens,
        };
        if let Err(TrySendError::Full(ack)) = tx.try_send(ack) {
            pending.insert(c.token, Entry::Unsent(ack));
        }
    }

    /// The actor handles completion `token` (`ok`: the write succeeded): an acknowledgement
    /// the hook could not push is pushed now (waiting for room, as a synchronous writer does).
    pub fn settle(&self, token: u64, ok: bool) {
        let entry = self.pending.lock().remove(&token);
        let ack = match entry {
            Some(Entry::Unsent(ack)) => ack,
            // Not seen by the hook (a carrier that bypassed the queue): acknowledged now.
            Some(Entry::Posted(file_id, first, gens)) if ok => {
                if let Some(Some(storage)) = self.flush.get(file_id as usize) {
                    if storage.sync_data().is_err() {
                        return; // Not durable: not acknowledged.
                    }
                }
                Ack::Pages {
                    file_id,
                    first,
                    gens,
                }
            }
            _ => return,
        };
        if let Some(tx) = &self.tx {
            let _ = tx.send(ack);
        }
    }
}
