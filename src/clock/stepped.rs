//! The stepped clock itself: its time, its sleepers and the threads it counts (see the
//! module doc of [`crate::clock`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use super::this_thread;
use crate::sync::{Condvar, Mutex};

/// The wall-clock time a stepped clock starts at (2025-01-01T00:00:00Z), so what a stepped run
/// stamps (pages, messages) is the same in every replay.
pub(super) const STEPPED_WALL_START: Duration = Duration::from_secs(1_735_689_600);

/// The first and the longest real-time wait of [`Stepped::advance_when_quiet`] between two
/// looks at threads that were not yet quiet.
const QUIET_BACKOFF_MIN: Duration = Duration::from_micros(20);
const QUIET_BACKOFF_MAX: Duration = Duration::from_millis(1);

/// A clock whose time moves only when [`Stepped::advance`] moves it (see the module doc).
#[derive(Debug)]
pub struct Stepped {
    /// The real instant its time zero maps to (an `Instant` cannot be made from a count).
    base: Instant,
    /// The time in nanoseconds from zero (`State::now`, readable without the lock).
    now_ns: AtomicU64,
    state: Mutex<State>,
    /// Sleepers wait here for the time to pass their deadlines.
    passed: Condvar,
    /// The stepping driver waits here for a sleeper.
    asleep: Condvar,
    /// The CPU its runs take turns on (`sim::control::stepping`), chosen once.
    cpu: OnceLock<usize>,
    /// Its runs take turns under real-time scheduling ([`Clock::stepped_in_turns`](super::Clock::stepped_in_turns)).
    in_turns: bool,
}

#[derive(Debug, Default)]
struct State {
    /// The deadlines of the threads asleep, with each sleeper's id (a deadline passed is
    /// dropped when time moves).
    deadlines: BinaryHeap<Reverse<(Duration, i32)>>,
    /// Set by [`Stepped::release`]: the stepping driver's wait ends.
    released: bool,
    /// The threads that run on this clock ([`enter`](super::enter)), each with how many times it entered.
    threads: HashMap<i32, usize>,
    /// The threads asleep on it, until the time reaches their deadlines.
    asleep: HashSet<i32>,
    /// Threads handed the clock and not yet running on it ([`hand_on`](super::hand_on)).
    starting: usize,
    /// Counts every change of `threads` and `asleep` (a quiet check made between two reads of
    /// the same count saw the same threads asleep on the clock).
    changes: u64,
}

impl Default for Stepped {
    fn default() -> Self {
        Stepped::new()
    }
}

impl Stepped {
    /// A clock at its time zero.
    pub fn new() -> Stepped {
        Stepped {
            base: Instant::now(),
            now_ns: AtomicU64::new(0),
            state: Mutex::new(State::default()),
            passed: Condvar::new(),
            asleep: Condvar::new(),
            cpu: OnceLock::new(),
            in_turns: false,
        }
    }

    /// A clock at its time zero whose runs take turns ([`Clock::stepped_in_turns`](super::Clock::stepped_in_turns)).
    pub(super) fn taking_turns() -> Stepped {
        Stepped {
            in_turns: true,
            ..Stepped::new()
        }
    }

    /// Whether its runs take turns under real-time scheduling ([`Clock::stepped_in_turns`](super::Clock::stepped_in_turns)).
    pub fn in_turns(&self) -> bool {
        self.in_turns
    }

    /// Counts thread `tid` among the clock's threads ([`enter`](super::enter)).
    pub(super) fn register(&self, tid: i32) {
        let mut st = self.state.lock();
        *st.threads.entry(tid).or_default() += 1;
        st.changes += 1;
    }

    /// Counts `n` more (or, negative, fewer) threads handed the clock and not yet running.
    pub(super) fn expect_thread(&self, n: isize) {
        let mut st = self.state.lock();
        st.starting = st.starting.saturating_add_signed(n);
        st.changes += 1;
        if st.starting == 0 {
            self.asleep.notify_all();
        }
    }

    /// Undoes one [`Stepped::register`] of `tid`.
    pub(super) fn unregister(&self, tid: i32) {
        let mut st = self.state.lock();
        if let Some(n) = st.threads.get_mut(&tid) {
            *n -= 1;
            if *n == 0 {
                st.threads.remove(&tid);
            }
        }
        st.changes += 1;
        // The driver may be waiting for this thread to go quiet.
        self.asleep.notify_all();
    }

    /// The CPU this clock's runs take turns on: `pick`'s answer the first time asked.
    pub fn cpu(&self, pick: impl FnOnce() -> usize) -> usize {
        *self.cpu.get_or_init(pick)
    }

    /// The time since the clock's zero.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.now_ns.load(Ordering::Acquire))
    }

    /// Moves the time to `to` (the lock held: [`Stepped::elapsed`] reads it without), drops
    /// the deadlines it reached and wakes their sleepers.
    fn move_to(&self, st: &mut State, to: Duration) {
        let ns = u64::try_from(to.as_nanos()).unwrap_or(u64::MAX);
        self.now_ns.store(ns, Ordering::Release);
        while let Some(Reverse((d, tid))) = st.deadlines.peek().copied() {
            if d > to {
                break;
            }
            st.deadlines.pop();
            st.asleep.remove(&tid);
            st.changes += 1;
        }
        self.passed.notify_all();
    }

    /// The time now, as an instant.
    pub fn now(&self) -> Instant {
        self.base + self.elapsed()
    }

    /// The wall-clock time now: a fixed start plus the stepped time.
    pub fn system_now(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + STEPPED_WALL_START + self.elapsed()
    }

    /// Waits until the time has moved on by `d`.
    pub fn sleep(&self, d: Duration) {
        if d.is_zero() {
            return;
        }
        let tid = this_thread();
        let mut st = self.state.lock();
        let until = self.elapsed() + d;
        st.deadlines.push(Reverse((until, tid)));
        st.asleep.insert(tid);
        st.changes += 1;
        self.asleep.notify_all();
        while self.elapsed() < until {
            self.passed.wait(&mut st);
        }
    }

    /// The earliest deadline still ahead, if a thread sleeps.
    pub fn next_deadline(&self) -> Option<Duration> {
        let st = self.state.lock();
        st.deadlines.peek().map(|Reverse((d, _))| *d)
    }

    /// Moves the time to the earliest deadline of a sleeping thread and wakes every thread whose
    /// deadline it reached; when none sleeps, waits for one (or for [`Stepped::release`]).
    /// Returns false once released.
    pub fn advance(&self) -> bool {
        let mut st = self.state.lock();
        loop {
            if st.released {
                return false;
            }
            if let Some(Reverse((next, _))) = st.deadlines.peek().copied() {
                let to = self.elapsed().max(next);
                self.move_to(&mut st, to);
                return true;
            }
            self.asleep.wait(&mut st);
        }
    }

    /// [`Stepped::advance`] once every thread of the clock waits: those asleep on it, and the
    /// others when `quiet` says they all wait elsewhere (on a lock, a condition, a channel, a
    /// join). `quiet` is asked with the clock unlocked, and its answer counts only if no
    /// thread came to or left the clock meanwhile; between its tries the driver sleeps on the
    /// real clock, from 20 µs up to 1 ms. Returns false once released.
    pub fn advance_when_quiet(&self, mut quiet: impl FnMut(&[i32]) -> bool) -> bool {
        let mut backoff = QUIET_BACKOFF_MIN;
        loop {
            let mut st = self.state.lock();
            let next = loop {
                if st.released {
                    return false;
                }
                if let Some(Reverse((next, _))) = st.deadlines.peek().copied() {
                    break next;
                }
                self.asleep.wait(&mut st);
            };
            let awake: Vec<i32> = st
                .threads
                .keys()
                .filter(|t| !st.asleep.contains(t))
                .copied()
                .collect();
            let seen = st.changes;
            let starting = st.starting > 0;
            if starting || !awake.is_empty() {
                drop(st);
                // A thread still starting has not waited yet.
                if starting || !quiet(&awake) {
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(QUIET_BACKOFF_MAX);
                    continue;
                }
                st = self.state.lock();
                if st.changes != seen {
                    // A thread came to the clock or left it meanwhile: look again.
                    continue;
                }
            }
            let to = self.elapsed().max(next);
            self.move_to(&mut st, to);
            return true;
        }
    }

    /// Moves the time on by `d` at once, waking every sleeper whose deadline it passes (for a
    /// test that steps the clock by hand).
    pub fn advance_by(&self, d: Duration) {
        let mut st = self.state.lock();
        let to = self.elapsed() + d;
        self.move_to(&mut st, to);
    }

    /// Ends the stepping driver's wait in [`Stepped::advance`] (it returns false from now on
    /// until [`Stepped::rearm`]).
    pub fn release(&self) {
        self.state.lock().released = true;
        self.asleep.notify_all();
    }

    /// Lets [`Stepped::advance`] step again after a [`Stepped::release`].
    pub fn rearm(&self) {
        self.state.lock().released = false;
    }
}
