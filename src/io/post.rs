//! Posting a read or write without waiting for it: the request owns the [`Frame`]s it moves
//! (taken from an [`crate::io::align::BufPool`]), and its [`Completion`] hands them back,
//! landing in the poster's own [`Completions`] queue, tagged with the poster's token, stamped
//! with the time the transfer ended (so latency does not include the time the poster took to
//! collect it).
//!
//! Posting is safe (issue #22 §5): whatever carries the request — the I/O service, a poster's
//! own io_uring, the faulty backend's helper — owns the frames while the kernel may touch
//! them, so no poster can reuse or free that memory early, and the `unsafe` of lending memory
//! to the kernel stays inside `io`. If a ring can no longer be waited on, the frames of its
//! requests are leaked (never handed back, never reused) and the completions carry an error
//! and no frames.
//!
//! How a poster uses it (the flight, and the log writer):
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use sqliosim::io::{BufPool, Completions, PostOp, Storage};
//! # fn demo(storage: &dyn Storage, pool: &Arc<BufPool>) {
//! let done = Arc::new(Completions::default());
//! let mut frames = pool.take_many(2).expect("two free frames");
//! frames.iter_mut().for_each(|f| f.fill(0xA5)); // what to write
//! storage.post(PostOp::write(8192, frames, 8192), &done, 7);
//! let c = done.wait(); // token 7; c.frames are the two frames, back
//! assert_eq!(c.token, 7);
//! drop(c.frames); // back to the pool (or reuse them for the next request)
//! # }
//! ```
//!
//! A backend with an asynchronous path (the service-backed one) hands the request to its I/O
//! service and returns at once; every other backend (direct `sync`, buffered, the in-memory
//! faulty one) does the transfer on the spot and queues its completion, which keeps the
//! poster's logic — collect completions as they come, verify and account on completion — the
//! same whatever carries the I/O.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Instant;

use crate::sync::{Condvar, Mutex};

use super::{Frame, Ticket};

/// One finished posted request.
#[derive(Debug)]
pub struct Completion {
    /// The poster's tag for the request.
    pub token: u64,
    /// Bytes moved (fewer than asked only for a read at end of file), or the error.
    pub result: io::Result<usize>,
    /// When the transfer ended.
    pub done_at: Instant,
    /// The request's frames, in file order, handed back: a read's data is in them. Empty only
    /// when a ring that could not be waited on leaked them (the result is then an error).
    pub frames: Vec<Frame>,
}

/// Told of the completions queued together (the completions of one reap pass, or a single
/// one), on the hook thread (`io::hook_thread`, never the thread that carries the
/// I/O), before the poster can take any. The [`Ticket`] was taken once every
/// one of them had completed, so a flush that starts after it covers them all
/// ([`crate::io::FlushGate`]).
pub type OnComplete = Arc<dyn Fn(Ticket, &[Completion]) + Send + Sync>;

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
    pub fn push(self: &Arc<Self>, c: Completion) {
        self.push_all(vec![c]);
    }

    /// Queues completions that came together (one reap pass) and wakes the poster; the hook,
    /// if any, hears of all of them first, in one call.
    pub fn push_all(self: &Arc<Self>, cs: Vec<Completion>) {
        self.push_seen(Ticket::now(), cs);
    }

    /// As [`Completions::push_all`], for completions all seen completed before `ticket`. With
    /// a hook, the hook and then the queueing run on the hook thread
    /// ([`crate::io::hook_thread`]), so that a hook that waits for a flush holds no I/O.
    pub(crate) fn push_seen(self: &Arc<Self>, ticket: Ticket, cs: Vec<Completion>) {
        if cs.is_empty() {
            return;
        }
        let Some(hook) = self.hook.lock().clone() else {
            self.queue_all(cs);
            return;
        };
        let queue = Arc::clone(self);
        super::hook_thread::run(Box::new(move || {
            // The completions are queued even if the hook panicked (its message is on stderr):
            // the poster waits for them, and a write the hook did not acknowledge stays
            // unacknowledged, which never makes a finding; the thread goes on for the others.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(ticket, &cs)));
            queue.queue_all(cs);
        }));
    }

    fn queue_all(&self, cs: Vec<Completion>) {
        self.queue.lock().extend(cs);
        self.cv.notify_all();
    }

    /// Sets (or with `None` removes) what is told of the completions as they are queued: what
    /// must not wait until the poster looks (a durable write's flush and acknowledgement).
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

/// The posted completions of one reap pass, held until the pass ends and then queued queue by
/// queue ([`Completions::push_all`]), so that a queue's hook hears the whole pass at once and
/// its writes of one file share one flush. Dropped, it delivers what it holds.
#[derive(Default)]
pub(crate) struct Pass {
    items: Vec<(Arc<Completions>, Completion)>,
}

impl Pass {
    /// Holds `c` for `to` until the pass ends.
    pub(crate) fn add(&mut self, to: Arc<Completions>, c: Completion) {
        self.items.push((to, c));
    }

    /// Queues what the pass holds, each queue's completions together and in their order.
    pub(crate) fn deliver(&mut self) {
        if self.items.is_empty() {
            return;
        }
        // One ticket for the pass, every completion of it reaped: a flush one queue's hook
        // starts covers the same file's writes of the other queues too.
        let ticket = Ticket::now();
        while let Some((to, _)) = self.items.first() {
            let to = Arc::clone(to);
            let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.items)
                .into_iter()
                .partition(|(q, _)| Arc::ptr_eq(q, &to));
            self.items = rest;
            to.push_seen(ticket, mine.into_iter().map(|(_, c)| c).collect());
        }
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.deliver();
    }
}

/// One request to post: a read into, or a write from, the first `len` bytes of each of its
/// frames, consecutive in the file from `offset`.
#[derive(Debug)]
pub struct PostOp {
    read: bool,
    offset: u64,
    frames: Vec<Frame>,
    len: usize,
    /// Most bytes of one iovec entry: `len` (one entry per frame) unless set smaller.
    iov_unit: usize,
}

/// The iovec entries of `len` bytes cut into pieces of at most `unit` bytes (one piece when
/// `unit` is 0 or at least `len`), as ranges.
pub(crate) fn pieces(len: usize, unit: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let unit = if unit == 0 { len.max(1) } else { unit };
    (0..len).step_by(unit).map(move |s| s..(s + unit).min(len))
}

impl PostOp {
    /// A read of `len` bytes into each of `frames`, in file order from `offset`.
    ///
    /// # Panics
    /// When `len` is larger than a frame (a caller's bug, not an outside fault).
    pub fn read(offset: u64, frames: Vec<Frame>, len: usize) -> PostOp {
        PostOp::new(true, offset, frames, len)
    }

    /// A write of the first `len` bytes of each of `frames`, in file order from `offset`.
    ///
    /// # Panics
    /// As [`PostOp::read`].
    pub fn write(offset: u64, frames: Vec<Frame>, len: usize) -> PostOp {
        PostOp::new(false, offset, frames, len)
    }

    fn new(read: bool, offset: u64, frames: Vec<Frame>, len: usize) -> PostOp {
        assert!(
            frames.iter().all(|f| len <= f.len()),
            "a posted request of {len} bytes per frame, larger than its frames"
        );
        PostOp {
            read,
            offset,
            frames,
            len,
            iov_unit: len,
        }
    }

    /// The same request with iovec entries of at most `unit` bytes (4096 for `IoVec4K`: two
    /// entries per 8 KiB frame); a request of one frame stays one buffer.
    pub fn with_iov_unit(mut self, unit: usize) -> PostOp {
        self.iov_unit = unit.clamp(1, self.len.max(1));
        self
    }

    /// Most bytes of one iovec entry.
    pub(crate) fn iov_unit(&self) -> usize {
        self.iov_unit
    }

    /// True for a read.
    pub fn is_read(&self) -> bool {
        self.read
    }

    /// File offset of the first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes the request moves.
    pub fn total(&self) -> usize {
        self.len * self.frames.len()
    }

    /// Bytes moved from (or into) each frame.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Gives up the frames (to whatever carries the request, which hands them back).
    pub(crate) fn into_frames(self) -> Vec<Frame> {
        self.frames
    }

    /// Does the transfer now through `storage`'s blocking calls; returns the result and the
    /// frames.
    pub fn run_blocking<S: super::Storage + ?Sized>(
        mut self,
        storage: &S,
    ) -> (io::Result<usize>, Vec<Frame>) {
        let (len, offset, total, unit) = (self.len, self.offset, self.total(), self.iov_unit);
        let frames = &mut self.frames;
        let result = match (self.read, frames.len()) {
            (_, 0) => Ok(0),
            (true, 1) => storage.read_at(&mut frames[0][..len], offset),
            (true, _) => {
                let mut bufs: Vec<&mut [u8]> = frames
                    .iter_mut()
                    .flat_map(|f| f[..len].chunks_mut(unit))
                    .collect();
                storage.read_vectored_at(&mut bufs, offset)
            }
            (false, 1) => storage.write_at(&frames[0][..len], offset).map(|()| total),
            (false, _) => {
                let bufs: Vec<&[u8]> = frames.iter().flat_map(|f| f[..len].chunks(unit)).collect();
                storage.write_vectored_at(&bufs, offset).map(|()| total)
            }
        };
        (result, self.frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_cut_into_iovec_pieces_of_the_unit() {
        let cut = |len, unit| pieces(len, unit).collect::<Vec<_>>();
        assert_eq!(cut(8192, 4096), vec![0..4096, 4096..8192]);
        assert_eq!(cut(8192, 8192), vec![0..8192]);
        assert_eq!(cut(8192, 0), vec![0..8192]);
        assert_eq!(cut(6000, 4096), vec![0..4096, 4096..6000]);
        assert_eq!(cut(0, 4096), Vec::<std::ops::Range<usize>>::new());
    }

    fn done(token: u64) -> Completion {
        Completion {
            token,
            result: Ok(8),
            done_at: Instant::now(),
            frames: Vec::new(),
        }
    }

    #[test]
    fn a_panicking_hook_still_queues_its_completions() {
        let q = Arc::new(Completions::default());
        q.set_hook(Some(Arc::new(|_: Ticket, _: &[Completion]| {
            panic!("a hook that fails (expected by the test)")
        })));
        q.push_all(vec![done(5), done(6)]);
        // The poster gets both, though the hook panicked (before, they were lost: it waited
        // forever); the hook thread goes on for the next batch.
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let mut got = Vec::new();
        while got.len() < 2 && Instant::now() < deadline {
            match q.try_take() {
                Some(c) => got.push(c.token),
                None => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
        assert_eq!(got, vec![5, 6]);
        q.set_hook(Some(Arc::new(|_: Ticket, _: &[Completion]| {})));
        q.push(done(7));
        assert_eq!(q.wait().token, 7);
    }

    #[test]
    fn a_hook_hears_a_pass_at_once_before_any_of_it_is_queued() {
        let (a, b) = (
            Arc::new(Completions::default()),
            Arc::new(Completions::default()),
        );
        let heard = Arc::new(Mutex::new(Vec::new()));
        for q in [&a, &b] {
            let (heard, mine) = (Arc::clone(&heard), Arc::downgrade(q));
            q.set_hook(Some(Arc::new(move |t: Ticket, cs: &[Completion]| {
                let queued = mine.upgrade().is_some_and(|q| !q.queue.lock().is_empty());
                let tokens: Vec<u64> = cs.iter().map(|c| c.token).collect();
                heard.lock().push((t, tokens, queued));
            })));
        }
        let mut pass = Pass::default();
        for (q, token) in [(&a, 1), (&b, 9), (&a, 2), (&a, 3)] {
            pass.add(Arc::clone(q), done(token));
        }
        let before = Ticket::now();
        pass.deliver();
        let tokens: Vec<u64> = (0..3).map(|_| a.wait().token).collect();
        assert_eq!(tokens, vec![1, 2, 3]);
        assert_eq!(b.wait().token, 9);
        let heard = heard.lock();
        assert_eq!(heard.len(), 2, "one call per queue: {heard:?}");
        assert_eq!(
            (heard[0].1.clone(), heard[1].1.clone()),
            (vec![1, 2, 3], vec![9])
        );
        assert!(
            heard.iter().all(|h| !h.2),
            "a completion queued before its hook returned"
        );
        assert_eq!(heard[0].0, heard[1].0, "one ticket for the pass");
        assert!(heard[0].0 >= before);
    }

    #[test]
    fn completions_come_back_in_order_and_an_empty_queue_says_so() {
        let q = Arc::new(Completions::default());
        assert!(q.try_take().is_none());
        for token in [3, 1] {
            q.push(Completion {
                token,
                result: Ok(8),
                done_at: Instant::now(),
                frames: Vec::new(),
            });
        }
        assert_eq!(q.wait().token, 3);
        assert_eq!(q.try_take().map(|c| c.token), Some(1));
        assert!(q.try_take().is_none());
    }
}
