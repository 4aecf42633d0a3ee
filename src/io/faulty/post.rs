//! The faulty backend's asynchronous path: posted requests queue for a helper thread and the
//! poster goes on at once, so an asynchronous actor really has many requests outstanding (its
//! pages latched, the oracle waiting for the completions) while synchronous actors keep
//! working beside it.
//!
//! Completions come back out of order, as from a real device's queue (or io_uring): the helper
//! ([`super::helper`]) holds up to [`super::helper::HOLD`] posted requests and runs them in a
//! seeded-random order, and a request hit by the Latency fault is run at once but completes only
//! after its delay, while the requests behind it go on. The helper is one thread, so the order
//! in which requests reach the stored bytes is the helper's seeded choice (a misdirected write
//! lands before or after the legitimate write of its landing page by that choice, not by how
//! two threads raced); which requests are held at each choice still depends on when posters
//! post, as the order of requests from several threads always did.

use std::cell::Cell;
use std::io;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crossbeam::channel::{self, Sender};

use super::storage::FaultyStorage;
use crate::io::{Completions, Frame, PostOp};

/// One posted request and where its completion goes.
pub(crate) struct Job {
    storage: FaultyStorage,
    op: PostOp,
    to: Arc<Completions>,
    token: u64,
}

/// A request the helper has run: its result, and how long its completion must wait (the
/// Latency faults it drew).
pub(crate) struct Ran {
    /// The request's number in posting order (0 when run on the poster's thread).
    pub(crate) seq: u64,
    pub(crate) to: Arc<Completions>,
    pub(crate) token: u64,
    pub(crate) result: io::Result<usize>,
    pub(crate) delay: Duration,
    /// The request's frames, handed back with its completion.
    pub(crate) frames: Vec<Frame>,
}

thread_local! {
    /// On a helper thread: the Latency the request being run drew so far (None elsewhere).
    static DEFERRED: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Marks the calling thread as a helper: from now on its Latency faults are deferred to the
/// completion (see [`defer_latency`]) instead of slept.
pub(crate) fn defer_here() {
    DEFERRED.with(|c| c.set(Some(Duration::ZERO)));
}

/// On a helper thread, adds `d` to the delay of the request being run and returns true (its
/// completion will wait, not the helper); elsewhere returns false and the caller sleeps.
pub(crate) fn defer_latency(d: Duration) -> bool {
    DEFERRED.with(|c| match c.get() {
        Some(so_far) => {
            c.set(Some(so_far + d));
            true
        }
        None => false,
    })
}

/// Takes the delay the request just run drew (zero off a helper thread).
fn take_deferred() -> Duration {
    DEFERRED.with(|c| match c.get() {
        Some(d) => {
            c.set(Some(Duration::ZERO));
            d
        }
        None => Duration::ZERO,
    })
}

impl Job {
    /// Does the transfer now (faults included) as request number `seq`; the completion is
    /// the caller's to queue.
    pub(crate) fn run(self, seq: u64) -> Ran {
        take_deferred();
        let (result, frames) = self.op.run_blocking(&self.storage);
        Ran {
            seq,
            to: self.to,
            token: self.token,
            result,
            delay: take_deferred(),
            frames,
        }
    }
}

/// The queue of the helper thread, started on the first post, the seed of its order and its
/// count of requests completed after a later-posted one. The thread ends when the backend
/// (which holds the sending side) is gone.
#[derive(Debug)]
pub(crate) struct Helpers {
    seed: u64,
    queue: OnceLock<Sender<Job>>,
    pub(crate) reordered: Arc<AtomicU64>,
}

impl Helpers {
    /// The helper of a backend seeded with `seed` (not started yet).
    pub(crate) fn new(seed: u64) -> Helpers {
        Helpers {
            seed,
            queue: OnceLock::new(),
            reordered: Arc::default(),
        }
    }

    fn start(&self) -> Sender<Job> {
        let (tx, rx) = channel::unbounded::<Job>();
        // A seed of its own, so the helper's draws do not shift the fault plan's.
        let seed = self.seed ^ 0x9e37_79b9_7f4a_7c15;
        let order = super::helper::Order::new(Arc::clone(&self.reordered));
        let spawned = std::thread::Builder::new()
            .name("faulty-io".to_string())
            .spawn(move || super::helper::serve(&rx, seed, order));
        // No helper only means no overlap: `post` then runs each request on the spot.
        drop(spawned);
        tx
    }
}

/// Posts `op` on `storage`'s helper thread (or, if it could not start, runs it now).
pub(crate) fn post(
    storage: &FaultyStorage,
    helpers: &Helpers,
    op: PostOp,
    to: &Arc<Completions>,
    token: u64,
) {
    let job = Job {
        storage: storage.twin(),
        op,
        to: Arc::clone(to),
        token,
    };
    if let Err(e) = helpers.queue.get_or_init(|| helpers.start()).send(job) {
        let ran = e.into_inner().run(0);
        std::thread::sleep(ran.delay);
        super::helper::complete(ran);
    }
}
