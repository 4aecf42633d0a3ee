//! The faulty backend's asynchronous path: posted requests queue for a helper thread and the
//! poster goes on at once, so an asynchronous actor really has many requests outstanding (its
//! pages latched, the oracle waiting for the completions) while synchronous actors keep
//! working beside it. One helper, taking requests in the order they were posted, keeps a run
//! reproducible from its seed: with several, a misdirected write could land before or after
//! the legitimate write of its landing page from one run to the next.

// Unsafe code is denied crate-wide (Cargo.toml [lints]); allowed here because a posted request carries raw pointers to frames lent by the poster until its completion; the helper thread runs it with that contract.
#![allow(unsafe_code)]

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crossbeam::channel::{self, Sender};

use super::storage::FaultyStorage;
use crate::io::{Completion, Completions, PostOp};

/// Helper threads carrying posted requests (see the module documentation for why one).
const HELPERS: usize = 1;

/// One posted request and where its completion goes.
pub(crate) struct Job {
    storage: FaultyStorage,
    op: PostOp,
    to: Arc<Completions>,
    token: u64,
}

impl Job {
    fn run(self) {
        // SAFETY: the poster lends the memory until the completion is pushed, just below.
        let result = unsafe { self.op.run_blocking(&self.storage) };
        self.to.push(Completion {
            token: self.token,
            result,
            done_at: Instant::now(),
        });
    }
}

/// The queue of the helper threads, started on the first post. The threads end when the
/// backend (which holds the sending side) is gone.
pub(crate) type Helpers = OnceLock<Sender<Job>>;

fn start() -> Sender<Job> {
    let (tx, rx) = channel::unbounded::<Job>();
    for i in 0..HELPERS {
        let rx = rx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("faulty-io-{i}"))
            .spawn(move || rx.into_iter().for_each(Job::run));
        // Fewer helpers only means less overlap; none at all is handled in `post`.
        drop(spawned);
    }
    tx
}

/// Posts `op` on `storage`'s helper threads (or, if none could start, runs it now).
///
/// # Safety
/// As [`crate::io::Storage::post`].
pub(crate) unsafe fn post(
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
    if let Err(e) = helpers.get_or_init(start).send(job) {
        e.into_inner().run();
    }
}
