//! What the callers of an I/O service and its thread share: the queue of requests not yet
//! taken, the wake-up eventfd and the figures both sides update. The handle (`handle`) and the
//! thread (`serve`) each use it; neither reaches into the other for it.

use std::collections::VecDeque;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize};

use crate::sync::Mutex;

use super::request::{stopped, Request};

/// Requests not yet taken by the service thread, and whether it should stop.
#[derive(Debug, Default)]
pub(super) struct Queue {
    /// Waiting requests, oldest first.
    pub items: VecDeque<Request>,
    /// The last handle is gone: finish and exit.
    pub closing: bool,
    /// The service thread has stopped, and why: new requests fail at once.
    pub dead: Option<String>,
}

/// What the callers and the service thread share.
#[derive(Debug)]
pub(super) struct ServiceState {
    pub queue: Mutex<Queue>,
    /// Written by callers, read by the ring: the service thread's wake-up.
    wake: OwnedFd,
    /// A wake-up has been written and not yet consumed by the service.
    pub wake_pending: AtomicBool,
    /// The most requests the ring has had in flight at once.
    pub high_water: AtomicUsize,
}

impl ServiceState {
    /// The state of a new service whose wake-up eventfd is `wake`.
    pub fn new(wake: OwnedFd) -> ServiceState {
        ServiceState {
            queue: Mutex::new(Queue::default()),
            wake,
            wake_pending: AtomicBool::new(false),
            high_water: AtomicUsize::new(0),
        }
    }

    /// The eventfd the ring reads to wake the service thread.
    pub fn wake_fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.wake.as_fd()
    }

    /// Wakes the service thread (adds 1 to the eventfd counter).
    pub fn kick(&self) {
        loop {
            match rustix::io::write(&self.wake, &1u64.to_ne_bytes()) {
                Err(rustix::io::Errno::INTR) => continue,
                // Only a counter at its maximum refuses a write, and then a wake-up is pending.
                _ => return,
            }
        }
    }

    /// Marks the service stopped; requests still queued are answered with an error.
    pub fn mark_dead(&self, why: &str) {
        let queued: Vec<Request> = {
            let mut q = self.queue.lock();
            q.dead.get_or_insert_with(|| why.to_string());
            q.items.drain(..).collect()
        };
        for r in queued {
            r.answer(Err(stopped(why)));
        }
    }
}
