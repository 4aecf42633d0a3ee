//! What carries an asynchronous actor's posted requests (issue #15 §3): a [`PostRing`] the
//! actor's thread owns when the file's storage allows one (the service-backed storage on
//! io_uring), else the storage's own [`Storage::post`] (the shared I/O service, psync, the
//! `sync` direct or buffered storage and the in-memory faulty backend). Either way the
//! completions land in one [`Completions`] queue, so the flight handles them the same.
//!
//! With its own ring the thread drives the ring itself: completions come back only when it
//! polls or waits, and are stamped then. The flight polls before every post and waits when it
//! needs a completion; an actor that pauses drains its flight first (see `batch::each_cycle`).
//!
//! A ring is made once per thread and depth, on the first request that can use it, and kept
//! for the thread's next flight (a lazy writer makes a flight per pass): setting up a ring of
//! thousands of entries costs more than a request.

use std::cell::RefCell;
use std::sync::Arc;

use crate::io::{Completion, Completions, PostOp, PostRing, Storage};

thread_local! {
    /// The ring of this thread's last flight, idle and with an empty queue, and its depth.
    static SPARE: RefCell<Option<(PostRing, Arc<Completions>, usize)>> = const { RefCell::new(None) };
}

/// A flight's completion queue and, once made, its own ring.
pub(super) struct Poster {
    queue: Arc<Completions>,
    ring: Option<PostRing>,
    depth: usize,
    /// The ring could not be made: post through the storage from now on.
    refused: bool,
    /// Requests carried by the own ring.
    pub own_posted: u64,
}

impl Poster {
    /// A carrier for a flight of at most `depth` requests in flight.
    pub fn new(depth: usize) -> Poster {
        let spare = SPARE.with(|s| s.borrow_mut().take());
        let (ring, queue) = match spare {
            Some((ring, queue, d)) if d == depth => (Some(ring), queue),
            _ => (None, Arc::new(Completions::default())),
        };
        Poster {
            queue,
            ring,
            depth,
            refused: false,
            own_posted: 0,
        }
    }

    /// Posts `op` on the own ring when `storage` allows one, else through the storage; the
    /// completion, tagged `token` and holding `op`'s frames, comes back through
    /// [`Poster::take`] or [`Poster::wait`]. `Err` (the request posted through the storage)
    /// when a ring could not be made.
    pub fn post(&mut self, storage: &dyn Storage, op: PostOp, token: u64) -> Result<(), String> {
        let mut made = Ok(());
        if let Some(file) = storage.ring_file() {
            if self.ring.is_none() && !self.refused {
                made = self.make_ring();
            }
            if let Some(ring) = self.ring.as_mut() {
                self.own_posted += 1;
                ring.post(&file, op, token);
                return Ok(());
            }
        }
        storage.post(op, &self.queue, token);
        made
    }

    fn make_ring(&mut self) -> Result<(), String> {
        match PostRing::new(self.depth, Arc::clone(&self.queue)) {
            Ok(Some(ring)) => {
                self.ring = Some(ring);
                Ok(())
            }
            Ok(None) => {
                self.refused = true;
                Err("io_uring refused".into())
            }
            Err(e) => {
                self.refused = true;
                Err(e.to_string())
            }
        }
    }

    /// Sets what hears of each completion as it is queued (see [`crate::io::OnComplete`]).
    pub fn on_complete(&self, hook: Option<crate::io::OnComplete>) {
        self.queue.set_hook(hook);
    }

    /// True once requests go through a ring of this thread's own.
    pub fn has_ring(&self) -> bool {
        self.ring.is_some()
    }

    /// A completion already back, if any (the own ring polled when the queue is empty).
    pub fn take(&mut self) -> Option<Completion> {
        if let Some(c) = self.queue.try_take() {
            return Some(c);
        }
        if let Some(ring) = self.ring.as_mut() {
            ring.poll();
        }
        self.queue.try_take()
    }

    /// Waits for a completion; the caller has at least one request in flight.
    pub fn wait(&mut self) -> Completion {
        loop {
            if let Some(c) = self.take() {
                return c;
            }
            match self.ring.as_mut() {
                Some(ring) if ring.in_flight() > 0 => ring.wait(),
                // Everything in flight went through the storage: its carrier pushes.
                _ => return self.queue.wait(),
            }
        }
    }
}

impl Drop for Poster {
    /// Keeps an idle ring for the thread's next flight; the flight has taken every completion
    /// (its own `Drop` waits for them), so the ring holds nothing and the queue is empty.
    fn drop(&mut self) {
        // The queue may serve the thread's next flight: it must not tell this one's hook.
        self.queue.set_hook(None);
        let Some(mut ring) = self.ring.take() else {
            return;
        };
        ring.drain();
        if ring.in_flight() == 0 && self.queue.try_take().is_none() {
            let queue = Arc::clone(&self.queue);
            let depth = self.depth;
            // At thread exit the slot may be gone already; the ring is then simply dropped.
            let _ = SPARE.try_with(|s| *s.borrow_mut() = Some((ring, queue, depth)));
        }
    }
}
