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

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

use crossbeam::channel::{self, Sender};

use super::helper::Job;
use crate::io::{Completions, PostOp, Storage};

/// The queue of the helper thread, started on the first post, the seed of its order and its
/// count of requests completed after a later-posted one. The thread ends when the backend
/// (which holds the sending side) is gone.
#[derive(Debug)]
pub(crate) struct Helpers {
    seed: u64,
    /// The backend's clock, the helper thread's.
    clock: crate::clock::Clock,
    queue: OnceLock<Sender<Job>>,
    pub(crate) reordered: Arc<AtomicU64>,
}

impl Helpers {
    /// The helper of a backend seeded with `seed` (not started yet).
    pub(crate) fn new(seed: u64, clock: crate::clock::Clock) -> Helpers {
        Helpers {
            seed,
            clock,
            queue: OnceLock::new(),
            reordered: Arc::default(),
        }
    }

    fn start(&self) -> Sender<Job> {
        let (tx, rx) = channel::unbounded::<Job>();
        // A seed of its own, so the helper's draws do not shift the fault plan's.
        let seed = self.seed ^ 0x9e37_79b9_7f4a_7c15;
        let order = super::helper::Order::new(Arc::clone(&self.reordered));
        let clock = self.clock.hand_on();
        let spawned = std::thread::Builder::new()
            .name("faulty-io".to_string())
            .spawn(move || {
                let _clock = clock.enter();
                super::helper::serve(&rx, seed, order)
            });
        // No helper only means no overlap: `post` then runs each request on the spot.
        drop(spawned);
        tx
    }
}

/// Posts `op` on `storage` (a handle of the faulty backend's, its own twin) to the helper
/// thread (or, if it could not start, runs it now).
pub(crate) fn post(
    storage: Box<dyn Storage>,
    helpers: &Helpers,
    op: PostOp,
    to: &Arc<Completions>,
    token: u64,
) {
    let job = Job {
        storage,
        op,
        to: Arc::clone(to),
        token,
    };
    if let Err(e) = helpers.queue.get_or_init(|| helpers.start()).send(job) {
        let ran = e.into_inner().run(0);
        helpers.clock.sleep(ran.delay);
        super::helper::complete(ran);
    }
}
