//! The service thread: takes queued requests, keeps at most `depth` of them in the ring,
//! continues short transfers, answers each caller, and exits once its last handle is gone and
//! nothing is in flight.
//!
//! Its one blocking point is the ring's wait for a completion. A read of the wake-up eventfd
//! is always in the ring while the service runs, so a caller's new request completes that
//! wait as surely as the disk does; there is no timeout and no polling.

#![expect(
    unsafe_code,
    reason = "the service submits callers' memory to the ring (Ring::submit_external is unsafe by contract)"
)]

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::request::{stopped, Request, Step};
use super::ring_slots::{drain_or_leak, RingSlots};
use super::state::ServiceState;
use crate::io::aio::{Direction, ExtMem, ExtOp, Ring, RingCompletion, RingError, NO_OFFSET};
use crate::io::post::Pass;

/// The `user_data` of the wake-up read; requests use their index in [`RingSlots`].
const WAKE: u64 = u64::MAX;

/// Everything the service thread owns.
pub(super) struct Service {
    ring: Ring,
    slots: RingSlots,
    waiting: VecDeque<Request>,
    shared: Arc<ServiceState>,
    depth: usize,
    /// Where the wake-up read puts the eventfd counter; boxed so it never moves.
    wake_buf: Box<[u8; 8]>,
    wake_armed: bool,
    done: Vec<RingCompletion>,
}

impl Drop for Service {
    /// Before anything of the service is released, waits until the kernel is done with every
    /// request's memory (or leaks it, see [`drain_or_leak`]), so the requests that drop after
    /// may answer their callers and posters.
    fn drop(&mut self) {
        // Completes the wake-up read, if one is in flight, so the drain can finish.
        self.shared.kick();
        drain_or_leak(&mut self.ring, &mut self.slots, "the I/O service");
        if !self.wake_armed || self.ring.in_flight() == 0 {
            return;
        }
        // The wake-up read may still be in the kernel: its buffer must outlive it.
        std::mem::forget(std::mem::replace(&mut self.wake_buf, Box::new([0; 8])));
    }
}

impl Service {
    /// A service over `ring`, which must take `depth + 1` operations (the wake-up read).
    pub(super) fn new(ring: Ring, shared: Arc<ServiceState>, depth: usize) -> Service {
        Service {
            ring,
            slots: RingSlots::new(depth),
            waiting: VecDeque::new(),
            shared,
            depth,
            wake_buf: Box::new([0; 8]),
            wake_armed: false,
            done: Vec::with_capacity(depth + 1),
        }
    }

    /// The thread's body. On a ring failure every request is answered with the error once
    /// the ring holds none of them.
    pub(super) fn run(mut self) {
        if let Err(e) = self.serve() {
            let why = format!("the I/O engine failed: {e}");
            self.shared.mark_dead(&why);
            self.shared.kick();
            if drain_or_leak(&mut self.ring, &mut self.slots, "the I/O service") {
                for r in self.slots.drain() {
                    r.answer(Err(stopped(&why)));
                }
            }
            // Never handed to the kernel: answered at once.
            for r in self.waiting.drain(..) {
                r.answer(Err(stopped(&why)));
            }
        }
    }

    fn serve(&mut self) -> Result<(), RingError> {
        loop {
            let closing = self.take_new();
            if !closing && !self.wake_armed {
                self.arm_wake()?;
            }
            while self.slots.len() < self.depth {
                let Some(r) = self.waiting.pop_front() else {
                    break;
                };
                self.start(r)?;
            }
            let idle = self.slots.len() == 0 && self.waiting.is_empty();
            if closing && idle && !self.wake_armed {
                return Ok(());
            }
            let mut done = std::mem::take(&mut self.done);
            done.clear();
            let reaped = self.ring.reap(1, &mut done);
            // The pass's completions are queued together once all are handled, so that each
            // queue's hook flushes a file once for all of them (forced flush, issue #39).
            let mut pass = Pass::default();
            let handled =
                reaped.and_then(|()| done.iter().try_for_each(|&c| self.complete(c, &mut pass)));
            pass.deliver();
            self.done = done;
            handled?;
        }
    }

    /// Moves newly queued requests to `waiting`; true once the service should stop.
    fn take_new(&mut self) -> bool {
        let mut q = self.shared.queue.lock();
        self.waiting.extend(q.items.drain(..));
        q.closing
    }

    fn arm_wake(&mut self) -> Result<(), RingError> {
        let op = ExtOp {
            kind: Direction::Read,
            fd: std::os::fd::AsRawFd::as_raw_fd(&self.shared.wake_fd()),
            offset: NO_OFFSET,
            mem: ExtMem::Buf {
                ptr: self.wake_buf.as_mut_ptr(),
                len: 8,
            },
            user_data: WAKE,
        };
        // SAFETY: the buffer is boxed in `self`, which outlives the ring's drain (or is leaked
        // when the drain fails, see `Drop`), and the eventfd belongs to `shared`, which `self`
        // holds.
        unsafe { self.ring.submit_external(op) }?;
        self.wake_armed = true;
        Ok(())
    }

    fn start(&mut self, r: Request) -> Result<(), RingError> {
        let i = self.slots.insert(r);
        self.shared
            .high_water
            .fetch_max(self.slots.len(), Ordering::Relaxed);
        self.send(i)
    }

    /// Sends what is left of request `i` to the ring.
    fn send(&mut self, i: usize) -> Result<(), RingError> {
        let op = self.slots.get_mut(i).ext_op(i as u64);
        // SAFETY: a caller's request: the caller is blocked until it is answered, which
        // happens only after its completion is reaped (or after `Drop` has drained the
        // ring), and holds the file open meanwhile; a posted request owns its frames and
        // file until then, and they are leaked if the drain fails. The request holds the
        // iovec list.
        unsafe { self.ring.submit_external(op) }
    }

    fn complete(&mut self, c: RingCompletion, pass: &mut Pass) -> Result<(), RingError> {
        if c.user_data == WAKE {
            self.wake_armed = false;
            // Before the queue is taken again: see `IoService::call`.
            self.shared.wake_pending.store(false, Ordering::SeqCst);
            return Ok(());
        }
        let i = c.user_data as usize;
        match self.slots.get_mut(i).step(c.result) {
            Step::Again => self.send(i),
            Step::Done(r) => {
                self.slots.remove(i).answer_in(r, pass);
                Ok(())
            }
        }
    }
}
