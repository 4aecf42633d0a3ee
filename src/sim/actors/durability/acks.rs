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
//! A file on a stack that drops an `O_DSYNC` write's flush (FUSE; `SimFile::flush_after_dsync`)
//! is durable only after an explicit `fdatasync`: the hook syncs the file before it
//! acknowledges such a write (and [`AckBook::settle`] before one the hook did not see), none
//! when the sync fails, as `durability::acknowledged` does for synchronous writers. That sync runs on
//! the thread that heard the completion; it is paid only on such stacks.

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
    tx: Sender<Ack>,
    pending: Mutex<HashMap<u64, Entry>>,
    /// Per data file: its storage when its writes must be fdatasynced before they count.
    flush: Vec<Option<Arc<dyn Storage>>>,
}

impl AckBook {
    /// A book for a flight of `run`, when its completed writes are durable and journaled
    /// (a journal, WriteThrough); `None` otherwise.
    pub fn for_run(run: &Run<'_>) -> Option<Arc<AckBook>> {
        let j = run.journal.as_ref().filter(|_| run.plan.write_through)?;
        let flush = run
            .files
            .iter()
            .map(|f| f.flush_after_dsync.then(|| Arc::clone(&f.storage)))
            .collect();
        Some(Arc::new(AckBook {
            tx: j.service.sender(),
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
        let ack = Ack::Pages {
            file_id,
            first,
            gens,
        };
        if let Err(TrySendError::Full(ack)) = self.tx.try_send(ack) {
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
        let _ = self.tx.send(ack);
    }
}
