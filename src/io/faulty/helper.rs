//! The faulty backend's helper thread, which completes posted requests out of order as a real
//! device may: what it runs ([`Job`], [`Ran`]) and the Latency a request run on it defers to
//! its completion ([`defer_latency`]); `post` queues the requests to it.
//!
//! It holds up to [`HOLD`] posted requests ([`Held`]) and runs one at a time, picked by a
//! generator seeded from the backend's seed, so the order of the stored effects and of the
//! completions is a seeded shuffle of the posting order within a window of [`HOLD`]. A request
//! that drew a Latency fault is run at once (its bytes land, as a device may land data before it
//! reports) but its completion waits in [`Delayed`] until the delay has passed, while the
//! helper goes on with the others: the delay lengthens that request's latency, not every
//! request's behind it. Both bounds are structural: at most [`HOLD`] requests held, and at most
//! one delayed completion per request posted and not yet completed (which the posters' depth
//! bounds). [`Order`] counts the requests completed after one posted later, so a test can show
//! that its run really met out-of-order completions.

use std::cell::Cell;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam::channel::{Receiver, RecvTimeoutError};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::io::{Completion, Completions, Frame, PostOp, Storage};

/// Most posted requests the helper holds to choose from; the rest wait in the queue, in order.
pub(crate) const HOLD: usize = 16;

/// One posted request and where its completion goes.
pub(crate) struct Job {
    pub(crate) storage: Box<dyn Storage>,
    pub(crate) op: PostOp,
    pub(crate) to: Arc<Completions>,
    pub(crate) token: u64,
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
        let (result, frames) = self.op.run_blocking(self.storage.as_ref());
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

/// Queues a request's completion for its poster, stamped now.
pub(crate) fn complete(ran: Ran) {
    ran.to.push(Completion {
        token: ran.token,
        result: ran.result,
        done_at: crate::clock::now(),
        frames: ran.frames,
    });
}

/// Completes requests and counts those that come back after one posted later.
pub(crate) struct Order {
    newest: u64,
    reordered: Arc<AtomicU64>,
}

impl Order {
    /// Counting into `reordered` (the backend's, read by `FaultyBackend::reordered`).
    pub(crate) fn new(reordered: Arc<AtomicU64>) -> Order {
        Order {
            newest: 0,
            reordered,
        }
    }

    /// Queues `ran`'s completion, counting it if a later-posted request completed first.
    fn complete(&mut self, ran: Ran) {
        if ran.seq < self.newest {
            self.reordered.fetch_add(1, AtomicOrdering::Relaxed);
        }
        self.newest = self.newest.max(ran.seq);
        complete(ran);
    }
}

/// Up to [`HOLD`] items, taken in a seeded-random order.
pub(crate) struct Held<T> {
    items: Vec<T>,
    rng: SmallRng,
}

impl<T> Held<T> {
    /// An empty set whose order is drawn from `seed`.
    pub(crate) fn new(seed: u64) -> Held<T> {
        Held {
            items: Vec::with_capacity(HOLD),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// True when nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// True when no more may be held.
    pub(crate) fn is_full(&self) -> bool {
        self.items.len() >= HOLD
    }

    /// Holds `item`.
    pub(crate) fn push(&mut self, item: T) {
        assert!(!self.is_full(), "the helper holds at most {HOLD} requests");
        self.items.push(item);
    }

    /// Takes one held item, chosen by the seeded generator.
    pub(crate) fn take(&mut self) -> Option<T> {
        if self.items.is_empty() {
            return None;
        }
        let i = self.rng.random_range(0..self.items.len());
        Some(self.items.swap_remove(i))
    }
}

/// A completion waiting for its Latency fault's delay; the earliest due first.
struct Late {
    due: Instant,
    ran: Ran,
}

impl PartialEq for Late {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Late {}
impl PartialOrd for Late {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Late {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.due, self.ran.seq).cmp(&(other.due, other.ran.seq))
    }
}

/// Completions held back by a Latency fault, released when due.
#[derive(Default)]
pub(crate) struct Delayed {
    heap: BinaryHeap<Reverse<Late>>,
}

impl Delayed {
    /// Completes `ran` now, or when its delay has passed.
    fn add(&mut self, ran: Ran, order: &mut Order) {
        if ran.delay.is_zero() {
            return order.complete(ran);
        }
        let due = crate::clock::now() + ran.delay;
        self.heap.push(Reverse(Late { due, ran }));
    }

    /// When the next delayed completion is due.
    fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(l)| l.due)
    }

    /// Completes every delayed request whose time has come.
    fn release(&mut self, order: &mut Order) {
        let now = crate::clock::now();
        while self.next_due().is_some_and(|due| due <= now) {
            if let Some(Reverse(late)) = self.heap.pop() {
                order.complete(late.ran);
            }
        }
    }
}

/// What the helper does next when it holds nothing.
enum Next {
    Job(Job),
    Wait,
    Stop,
}

/// Waits for a posted request, or until the next delayed completion is due.
fn wait(rx: &Receiver<Job>, delayed: &Delayed) -> Next {
    let got = match delayed.next_due() {
        Some(due) => crate::clock::recv_deadline(rx, due),
        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match got {
        Ok(job) => Next::Job(job),
        Err(RecvTimeoutError::Timeout) => Next::Wait,
        Err(RecvTimeoutError::Disconnected) => match delayed.next_due() {
            Some(due) => {
                crate::clock::sleep(due.saturating_duration_since(crate::clock::now()));
                Next::Wait
            }
            None => Next::Stop,
        },
    }
}

/// The helper thread's loop: ends when the backend is gone and every completion is queued.
/// Requests are numbered in the order they were posted (the queue's order).
pub(crate) fn serve(rx: &Receiver<Job>, seed: u64, mut order: Order) {
    defer_here();
    let mut held = Held::new(seed);
    let mut delayed = Delayed::default();
    let mut posted = 0u64;
    let mut number = |job| {
        posted += 1;
        (posted, job)
    };
    loop {
        delayed.release(&mut order);
        if held.is_empty() {
            match wait(rx, &delayed) {
                Next::Job(job) => held.push(number(job)),
                Next::Wait => continue,
                Next::Stop => return,
            }
        }
        while !held.is_full() {
            match rx.try_recv() {
                Ok(job) => held.push(number(job)),
                Err(_) => break,
            }
        }
        if let Some((seq, job)) = held.take() {
            delayed.add(job.run(seq), &mut order);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::Duration;

    use super::{Held, HOLD};
    use crate::io::faulty::{Fault, Trigger};
    use crate::io::{BufPool, Completions, FaultyBackend, PostOp, Storage};
    use crate::page::PAGE_SIZE;

    fn drain(seed: u64) -> Vec<usize> {
        let mut held = Held::new(seed);
        (0..HOLD).for_each(|i| held.push(i));
        assert!(held.is_full());
        std::iter::from_fn(|| held.take()).collect()
    }

    #[test]
    fn held_requests_come_out_in_a_seeded_shuffle() {
        let order = drain(7);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..HOLD).collect::<Vec<_>>(), "each exactly once");
        assert_ne!(order, sorted, "not in the order held");
        assert_eq!(drain(7), order, "the same seed gives the same order");
        assert_ne!(drain(8), order, "another seed gives another order");
    }

    /// Posts one write of page `i` (filled with `i`) per frame; returns the completion order.
    fn post_writes(st: &dyn Storage, n: usize) -> Vec<u64> {
        let pool = BufPool::new(n, PAGE_SIZE).expect("pool");
        let done = Arc::new(Completions::default());
        for i in 0..n {
            let mut frames = pool.take_many(1).expect("a frame");
            frames[0].fill(i as u8);
            let op = PostOp::write((i * PAGE_SIZE) as u64, frames, PAGE_SIZE);
            st.post(op, &done, i as u64);
        }
        let order = (0..n)
            .map(|_| {
                let c = done.wait();
                assert_eq!(c.result.as_ref().ok(), Some(&PAGE_SIZE), "{c:?}");
                assert_eq!(c.frames.len(), 1, "the frame came back");
                c.token
            })
            .collect();
        assert_eq!(pool.available(), n, "every frame is back in the pool");
        order
    }

    #[test]
    fn posted_requests_complete_out_of_order_and_every_write_lands() {
        let b = FaultyBackend::new(11);
        let path = Path::new("/virtual/ooo.mdx");
        let st = b.open_faulty(path);
        // The first request posted is slow: the helper goes on with the others meanwhile.
        b.inject(
            Fault::Latency(Duration::from_millis(300)),
            Trigger::at_offset(path, 0),
        );
        let n = 64;
        let order = post_writes(&*st, n);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..n as u64).collect::<Vec<_>>(),
            "each exactly once"
        );
        assert_ne!(order, sorted, "completions came back out of order");
        assert_ne!(
            order[0], 0,
            "the delayed request did not hold up the others"
        );
        assert_eq!(b.fired().len(), 1, "the latency fault fired");
        assert!(b.reordered() > 0, "the backend counted them");
        let data = b.contents(path).expect("file");
        for (i, page) in data.chunks(PAGE_SIZE).enumerate() {
            assert!(page.iter().all(|&x| x == i as u8), "page {i} landed whole");
        }
    }
}
