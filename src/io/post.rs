//! Posting a read or write without waiting for it: the request names memory its poster lends
//! until the completion comes back, and the completion lands in the poster's own
//! [`Completions`] queue, tagged with the poster's token, stamped with the time the transfer
//! ended (so latency does not include the time the poster took to collect it).
//!
//! A backend with an asynchronous path (the engine-backed one) hands the request to its I/O
//! service and returns at once; every other backend (direct `sync`, buffered, the in-memory
//! faulty one) does the transfer on the spot and queues its completion, which keeps the
//! poster's logic — collect completions as they come, verify and account on completion — the
//! same whatever carries the I/O.

#![expect(
    unsafe_code,
    reason = "a posted operation holds raw pointers into memory the poster lends until the completion (Send by hand, run_blocking unsafe to call)"
)]

use std::collections::VecDeque;
use std::io;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

/// One finished posted request.
#[derive(Debug)]
pub struct Completion {
    /// The poster's tag for the request.
    pub token: u64,
    /// Bytes moved (fewer than asked only for a read at end of file), or the error.
    pub result: io::Result<usize>,
    /// When the transfer ended.
    pub done_at: Instant,
}

/// Told of each completion as it is queued, on the thread that queues it (the I/O service's,
/// or the poster's own when it polls a ring of its own), before the poster can take it.
pub type OnComplete = std::sync::Arc<dyn Fn(&Completion) + Send + Sync>;

/// A poster's completion queue; shared with whatever carries its requests.
#[derive(Default)]
pub struct Completions {
    queue: Mutex<VecDeque<Completion>>,
    cv: Condvar,
    hook: Mutex<Option<OnComplete>>,
}

impl std::fmt::Debug for Completions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completions")
            .field("queued", &self.queue.lock().len())
            .finish()
    }
}

impl Completions {
    /// Queues a completion and wakes the poster; the hook, if any, hears of it first.
    pub fn push(&self, c: Completion) {
        let hook = self.hook.lock().clone();
        if let Some(h) = hook {
            h(&c);
        }
        self.queue.lock().push_back(c);
        self.cv.notify_one();
    }

    /// Sets (or with `None` removes) what is told of each completion as it is queued: what
    /// must not wait until the poster looks (a durable write's acknowledgement).
    pub fn set_hook(&self, hook: Option<OnComplete>) {
        *self.hook.lock() = hook;
    }

    /// Takes the oldest completion, waiting for one.
    pub fn wait(&self) -> Completion {
        let mut q = self.queue.lock();
        loop {
            if let Some(c) = q.pop_front() {
                return c;
            }
            self.cv.wait(&mut q);
        }
    }

    /// Takes the oldest completion if there is one.
    pub fn try_take(&self) -> Option<Completion> {
        self.queue.lock().pop_front()
    }
}

/// One request to post: a read into, or a write from, consecutive buffers at `offset`.
#[derive(Debug)]
pub struct PostOp {
    /// True for a read.
    pub read: bool,
    /// File offset of the first byte.
    pub offset: u64,
    /// The buffers, in file order; lent by the poster until the completion is queued.
    pub iov: Vec<libc::iovec>,
}

// SAFETY: the iovecs name memory the poster lends until the request's completion is queued;
// whichever thread carries the request may hand it to the kernel meanwhile.
unsafe impl Send for PostOp {}

impl PostOp {
    /// Bytes the request moves.
    pub fn total(&self) -> usize {
        self.iov.iter().map(|v| v.iov_len).sum()
    }

    /// Does the transfer now through `storage`'s blocking calls.
    ///
    /// # Safety
    /// Every iovec must name memory valid for its length, not otherwise used until this
    /// returns.
    pub unsafe fn run_blocking<S: super::Storage + ?Sized>(
        &self,
        storage: &S,
    ) -> io::Result<usize> {
        let total = self.total();
        // SAFETY: the caller guarantees the memory is valid and unaliased for the call.
        let slice = |v: &libc::iovec| unsafe {
            std::slice::from_raw_parts_mut(v.iov_base.cast::<u8>(), v.iov_len)
        };
        match (self.read, self.iov.len()) {
            (true, 1) => storage.read_at(slice(&self.iov[0]), self.offset),
            (true, _) => {
                let mut bufs: Vec<&mut [u8]> = self.iov.iter().map(slice).collect();
                storage.read_vectored_at(&mut bufs, self.offset)
            }
            (false, 1) => storage
                .write_at(slice(&self.iov[0]), self.offset)
                .map(|()| total),
            (false, _) => {
                let bufs: Vec<&[u8]> = self.iov.iter().map(|v| &*slice(v)).collect();
                storage
                    .write_vectored_at(&bufs, self.offset)
                    .map(|()| total)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_come_back_in_order_and_an_empty_queue_says_so() {
        let q = Completions::default();
        assert!(q.try_take().is_none());
        for token in [3, 1] {
            q.push(Completion {
                token,
                result: Ok(8),
                done_at: Instant::now(),
            });
        }
        assert_eq!(q.wait().token, 3);
        assert_eq!(q.try_take().map(|c| c.token), Some(1));
        assert!(q.try_take().is_none());
    }
}
