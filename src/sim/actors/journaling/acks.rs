//! Durable writes journaled as they complete, not when their actor next looks (issue #21 §4):
//! an asynchronous actor collects its completions when it posts again or waits, and one that
//! pauses (a BulkUpdateUser's BUDelay, a lazy writer between passes) would otherwise leave an
//! `O_DSYNC` write acknowledged by the device and unknown to the journal for the whole pause,
//! far beyond the batch interval `verify` states.
//!
//! A flight's [`AckBook`] is told each write it posts (by token); its hook on the flight's
//! completion queue hears the completions as they are queued — on the hook thread
//! (`io::hook_thread`), to which whatever carries the I/O hands them — and pushes the
//! acknowledgements onto the journal's channel there and then. The hook never waits for the
//! journal: when the channel is full it keeps the acknowledgement, and the actor pushes it
//! (waiting) when it handles the completion ([`AckBook::settle`]). The hook runs before the completion is
//! queued, so it is done with a token before the actor can handle it and reuse the token.
//!
//! A file whose write-through writes are durable only after an explicit `fdatasync`
//! (`SimFile::flush_gate`: forced-flush mode, or FUA mode on a stack that drops an `O_DSYNC`
//! write's flush, FUSE) is flushed by the hook before it acknowledges such a write (and by
//! [`AckBook::settle`] before one the hook did not see), none when the flush fails, as
//! `durability::acknowledged` does for synchronous writers. The hook hears a whole reap pass at
//! once, with a ticket taken after every completion of it, and asks the file's gate for a flush
//! that started after that ticket: one `fdatasync` per file covers the pass (and the same
//! file's writes other queues' hooks hear in that pass, or other threads wait for meanwhile),
//! SQL Server's economy (issue #39); with `ForcedFlushPerWrite` each write gets its own. The
//! hook runs before the completions are queued, so the actor sees a write done only once its
//! flush returned, and the journal hears of it only then: never before, which after a power cut
//! would hold the device to a write nobody had made durable. The book is kept without a journal
//! too when a file must be flushed, so that the flush is issued whether or not anything checks
//! it.
//!
//! Why an `fdatasync` once the write completed rather than an io_uring `IORING_OP_FSYNC`
//! (`IORING_FSYNC_DATASYNC`) linked after the write: both start the flush only after the write
//! completed, so both are correct; the flush here covers every I/O path (psync, sync, the
//! service's ring and a poster's own ring) in one place, and fails the acknowledgement, not the
//! write, when it fails. The flush runs on the hook thread, so the I/O service goes on carrying
//! requests meanwhile, and what completes during a flush is covered by the next one
//! (docs/durability.md, "Durability modes").

use std::collections::HashMap;
use std::sync::Arc;

use crate::sync::Mutex;
use crossbeam::channel::{Sender, TrySendError};

use crate::io::{Completion, FlushGate, OnComplete, Ticket};
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
    /// Per data file: its flush gate when its writes must be flushed before they count.
    flush: Vec<Option<Arc<FlushGate>>>,
}

impl AckBook {
    /// A book for a flight of `run`, when its completed writes are acknowledged one by one
    /// (WriteThrough, not mode None) and either journaled or flushed; `None` otherwise.
    pub fn for_run(run: &Run<'_>) -> Option<Arc<AckBook>> {
        if !run.plan.acks_each_write() {
            return None;
        }
        let flush: Vec<_> = run.files.iter().map(|f| f.flush_gate.clone()).collect();
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
        Arc::new(move |t: Ticket, pass: &[Completion]| book.completed(t, pass))
    }

    /// Write `token` of `gens` from page `first` of data file `file` is being posted.
    pub fn expect(&self, token: u64, file: usize, first: u64, gens: &[u64]) {
        self.pending
            .lock()
            .insert(token, Entry::Posted(file as u32, first, gens.to_vec()));
    }

    /// The hook: the completed writes of a pass, all seen completed before `ticket`, are
    /// flushed (once per file, by the file's gate) and acknowledged to the journal, without
    /// waiting for room on its channel.
    fn completed(&self, ticket: Ticket, pass: &[Completion]) {
        let mut ok = Vec::new();
        {
            let mut pending = self.pending.lock();
            for c in pass {
                if let Some(Entry::Posted(file_id, first, gens)) = pending.remove(&c.token) {
                    if c.result.is_ok() {
                        ok.push((c.token, file_id, first, gens));
                    }
                }
            }
        }
        // The book is not held across the flushes: the actor posts (and books) meanwhile. The
        // tokens taken out cannot be reused before their completions are queued, after this.
        let mut unsent = Vec::new();
        for (token, file_id, first, gens) in ok {
            if !self.flushed(file_id, ticket) {
                continue; // Not durable: not acknowledged.
            }
            let Some(tx) = &self.tx else {
                continue; // Flushed; no journal to tell.
            };
            let ack = Ack::Pages {
                file_id,
                first,
                gens,
            };
            if let Err(TrySendError::Full(ack)) = tx.try_send(ack) {
                unsent.push((token, Entry::Unsent(ack)));
            }
        }
        if !unsent.is_empty() {
            self.pending.lock().extend(unsent);
        }
    }

    /// True once the writes of data file `file_id` seen completed before `ticket` are durable:
    /// at once where the file needs no flush, else after its gate's flush that started after
    /// the ticket (the first write of a pass runs or joins it; the others find it done, unless
    /// per write).
    fn flushed(&self, file_id: u32, ticket: Ticket) -> bool {
        match self.flush.get(file_id as usize) {
            Some(Some(gate)) => gate.cover(ticket).is_ok(),
            _ => true,
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
                // The actor holds the completion: the write completed before this ticket.
                if !self.flushed(file_id, Ticket::now()) {
                    return; // Not durable: not acknowledged.
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
