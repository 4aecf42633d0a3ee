//! A poster's own io_uring ([`PostRing`], issue #15 §3): an asynchronous actor submits its
//! posted requests to a ring only its thread uses and reaps their completions itself, so a
//! request crosses no thread — no queue under a mutex, no eventfd wake-up of the service
//! thread, no condition variable on the way back. Measured against the shared service in
//! docs/performance.md ("Request hand-off").
//!
//! The requests are the service's own [`Request`]s, so a completion is read exactly as the
//! service reads it (short transfers continued, EINTR/EAGAIN retried, end of file), and its
//! answer goes to the poster's [`Completions`] queue, as the service's does. The difference is
//! who drives the ring: the poster, when it calls [`PostRing::poll`] or [`PostRing::wait`].
//! A completion is stamped when the poster reaps it, so a poster reaps before every post and
//! whenever it waits; it should not sleep with requests in flight.

#![expect(
    unsafe_code,
    reason = "the ring is handed the frames a posted request owns (Ring::submit_external is unsafe by contract)"
)]

use std::sync::Arc;

use super::request::{stopped, Request, Step};
use super::ring_slots::{drain_or_leak, RingSlots};
use crate::io::aio::{Ring, RingCompletion, RingConfig, RingError, RingKind};
use crate::io::file::FileStorage;
use crate::io::post::{Completions, Pass, PostOp};

/// A file a [`PostRing`] may carry requests on ([`crate::io::Storage::ring_file`]); each
/// request in flight holds a clone, so the descriptor stays open and names the same file until
/// the request completes.
#[derive(Debug, Clone)]
pub struct RingFile(pub(super) Arc<FileStorage>);

impl RingFile {
    /// A handle on `file` (opened as the service-backed backend opens its files).
    pub fn new(file: FileStorage) -> RingFile {
        RingFile(Arc::new(file))
    }
}

/// An io_uring owned by one poster: its posted requests go in and come out on its thread.
pub struct PostRing {
    ring: Ring,
    slots: RingSlots,
    to: Arc<Completions>,
    done: Vec<RingCompletion>,
    /// Why the ring failed, once it has: later requests are answered with this at once.
    failed: Option<String>,
}

impl std::fmt::Debug for PostRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostRing")
            .field("depth", &self.slots.depth())
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

impl PostRing {
    /// A ring of `depth` requests in flight (1..=[`super::IoService::MAX_DEPTH`]) whose
    /// completions go to `to`; `Ok(None)` when the kernel refuses io_uring (the caller keeps
    /// posting through the shared service).
    pub fn new(depth: usize, to: Arc<Completions>) -> Result<Option<PostRing>, RingError> {
        let depth = depth.clamp(1, super::IoService::MAX_DEPTH);
        let cfg = RingConfig {
            kind: RingKind::Uring,
            depth: depth as u32,
            slot_len: 0,
            // `post` sends each request at once itself (with whatever completions are ready).
            submit_batch: depth as u32,
        };
        let ring = Ring::new(&cfg, Arc::from(Vec::new()))?;
        if ring.kind() != RingKind::Uring {
            // io_uring refused: psync helper threads would be a hand-off again.
            return Ok(None);
        }
        Ok(Some(PostRing {
            ring,
            slots: RingSlots::new(depth),
            to,
            done: Vec::with_capacity(depth),
            failed: None,
        }))
    }

    /// Requests submitted and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Submits a read or write of `op`'s frames on `file` to the kernel and returns without
    /// waiting for it; its completion, tagged `token` and holding the frames, is pushed to
    /// this ring's queue by this or a later `post`, `poll` or `wait`. With the ring full,
    /// waits for a completion first. The request owns the frames and the file meanwhile.
    pub fn post(&mut self, file: &RingFile, op: PostOp, token: u64) {
        let empty = op.total() == 0;
        let req = Request::posted(op, Arc::clone(&file.0), &self.to, token);
        if empty {
            return req.answer(Ok(0));
        }
        while self.slots.is_full() && self.failed.is_none() {
            self.reap(1);
        }
        if let Some(why) = &self.failed {
            return req.answer(Err(stopped(why)));
        }
        let i = self.slots.insert(req);
        if let Err(e) = self.send(i) {
            return self.fail(&e);
        }
        // To the kernel now, not with the next poll: the request's latency runs from its post,
        // and the device should not wait while the poster prepares its next request.
        self.reap(0);
    }

    /// Sends what is queued and pushes every completion already there, without waiting.
    pub fn poll(&mut self) {
        self.reap(0);
    }

    /// Sends what is queued and waits until at least one completion has been pushed (at once
    /// when nothing is in flight).
    pub fn wait(&mut self) {
        self.reap(1);
    }

    /// Waits until every request has been answered.
    pub fn drain(&mut self) {
        while self.in_flight() > 0 {
            self.reap(self.in_flight());
        }
    }

    fn reap(&mut self, min: usize) {
        let mut done = std::mem::take(&mut self.done);
        done.clear();
        let reaped = self.ring.reap(min, &mut done);
        // Queued together once all are handled (see the service's loop).
        let mut pass = Pass::default();
        for &c in &done {
            self.complete(c, &mut pass);
        }
        pass.deliver();
        self.done = done;
        if let Err(e) = reaped {
            self.fail(&e);
        }
    }

    /// Sends what is left of request `i`.
    fn send(&mut self, i: usize) -> Result<(), RingError> {
        let op = self.slots.get_mut(i).ext_op(i as u64);
        // SAFETY: the request owns its frames, its iovec list and its file until it is
        // answered, which happens only after its completion is reaped (or after the ring has
        // been drained); if the drain fails they are leaked (`drain_or_leak`).
        unsafe { self.ring.submit_external(op) }
    }

    fn complete(&mut self, c: RingCompletion, pass: &mut Pass) {
        let i = c.user_data as usize;
        // A slot emptied by a failure has been answered already.
        let Some(r) = self.slots.get(i) else {
            return;
        };
        match r.step(c.result) {
            Step::Again => {
                if let Err(e) = self.send(i) {
                    self.fail(&e);
                }
            }
            Step::Done(result) => self.slots.remove(i).answer_in(result, pass),
        }
    }

    /// The ring failed (a system call refused, not a device error on a request): waits until
    /// the kernel holds none of the poster's memory, then answers every request with the
    /// error, as the shared service does when its ring fails.
    fn fail(&mut self, e: &RingError) {
        let why = format!("the poster's io_uring failed: {e}");
        drain_or_leak(&mut self.ring, &mut self.slots, "a poster's io_uring");
        for r in self.slots.drain() {
            r.answer(Err(stopped(&why)));
        }
        self.failed = Some(why);
    }
}

impl Drop for PostRing {
    /// Waits for every request in flight before the requests (and the frames they own) are
    /// given back; each is answered as it completes (or, if the ring fails, leaked).
    fn drop(&mut self) {
        self.drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posted_reads_and_writes_come_back_to_the_queue_with_their_tokens_and_frames() {
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 8192]).expect("create");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open");
        let file = RingFile::new(FileStorage::new(file, path));
        let to = Arc::new(Completions::default());
        let Some(mut ring) = PostRing::new(2, Arc::clone(&to)).expect("ring") else {
            #[expect(clippy::print_stderr, reason = "a test's skip note")]
            {
                eprintln!("SKIPPED: io_uring refused here");
            }
            return;
        };
        let pool = crate::io::BufPool::new(4, 4096).expect("pool");
        let mut out = pool.take_many(1).expect("a frame");
        out[0].fill(1);
        ring.post(&file, PostOp::write(4096, out, 4096), 5);
        ring.drain();
        let c = to.try_take().expect("the write's completion");
        assert_eq!((c.token, c.result.expect("written")), (5, 4096));
        assert_eq!(c.frames.len(), 1, "the write's frame came back");
        assert_eq!(pool.available(), 3, "and is not back in the pool yet");
        drop(c.frames);
        let back = pool.take_many(2).expect("two frames");
        ring.post(&file, PostOp::read(0, back, 4096), 9);
        // The post itself may have reaped it already (a read from the page cache).
        ring.wait();
        let c = to.try_take().expect("the read's completion");
        assert_eq!((c.token, c.result.expect("read")), (9, 8192));
        assert!(c.frames[0].iter().all(|&b| b == 7), "first half untouched");
        assert!(c.frames[1].iter().all(|&b| b == 1), "second half written");
        assert_eq!(ring.in_flight(), 0);
    }
}
