//! Time for the simulator: the real clock in runs, a stepped clock in model runs.
//!
//! Every actor, throttle, monitor and the in-memory backend read the time with [`now`] and
//! wait with [`sleep`], [`wait_for`] and [`recv_deadline`], which ask the calling thread's
//! clock. A thread's clock is the real one unless [`enter`] gave it a [`Stepped`] clock (the
//! driver does, for every thread of a run whose backend has one, and each thread it starts
//! passes its clock on), so a run on real storage reads `Instant::now` as before.
//!
//! A [`Stepped`] clock (TigerBeetle's and FoundationDB's idea) moves only when told: its time
//! is a count of nanoseconds from its creation, and a thread that sleeps on it waits until
//! [`Stepped::advance`] has carried that count past its deadline. Who advances it, and when,
//! is the stepping driver's (`sim::control::stepping`): once every thread of the run waits
//! (the clock counts the threads that [`enter`]ed it and those asleep on it), it moves the
//! time to the earliest deadline. So waiting costs no wall time, a run's timings are the ones
//! its backend charges, and the run does not depend on the machine's load.
//!
//! On a stepped clock a timed condition-variable wait is a sleep for its whole timeout, and a
//! timed channel receive polls each stepped millisecond: the simulator's timed waits are polls
//! that re-check their condition (a notification only shortens them), so the stepped run does
//! what the real one does, a little later in stepped time. Why not a crate: the clocks that
//! exist (`quanta`'s mock, `tokio`'s paused time) are for one thread or for one async runtime;
//! this one must stop every thread of a run until none can go on.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crossbeam::channel::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::{Condvar, Mutex, MutexGuard};

/// The wall-clock time a stepped clock starts at (2025-01-01T00:00:00Z), so what a stepped run
/// stamps (pages, messages) is the same in every replay.
const STEPPED_WALL_START: Duration = Duration::from_secs(1_735_689_600);

/// How often a timed channel receive on a stepped clock looks at its channel.
const STEPPED_POLL: Duration = Duration::from_millis(1);

/// The first and the longest real-time wait of [`Stepped::advance_when_quiet`] between two
/// looks at threads that were not yet quiet.
const QUIET_BACKOFF_MIN: Duration = Duration::from_micros(20);
const QUIET_BACKOFF_MAX: Duration = Duration::from_millis(1);

/// A clock a thread can be given: the real one or a stepped one.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// `Instant::now` and `thread::sleep`.
    #[default]
    Real,
    /// Time that moves only when a [`Stepped`] clock is advanced.
    Stepped(Arc<Stepped>),
}

impl Clock {
    /// A new stepped clock at its time zero.
    pub fn stepped() -> Clock {
        Clock::Stepped(Arc::new(Stepped::new()))
    }

    /// A new stepped clock whose runs take turns on one CPU under real-time scheduling where
    /// the process may, so that a seed replays exactly (`sim::control::stepping`).
    pub fn stepped_in_turns() -> Clock {
        Clock::Stepped(Arc::new(Stepped {
            in_turns: true,
            ..Stepped::new()
        }))
    }

    /// The stepped clock, if this is one.
    pub fn as_stepped(&self) -> Option<&Arc<Stepped>> {
        match self {
            Clock::Real => None,
            Clock::Stepped(s) => Some(s),
        }
    }

    /// Waits `d` on this clock.
    pub fn sleep(&self, d: Duration) {
        match self {
            Clock::Real => std::thread::sleep(d),
            Clock::Stepped(s) => s.sleep(d),
        }
    }
}

thread_local! {
    /// The calling thread's stepped clock (`None`: the real clock).
    static CURRENT: RefCell<Option<Arc<Stepped>>> = const { RefCell::new(None) };
}

/// The calling thread's clock, to hand to a thread it starts (see [`enter`]).
pub fn current() -> Clock {
    CURRENT.with(|c| match &*c.borrow() {
        None => Clock::Real,
        Some(s) => Clock::Stepped(Arc::clone(s)),
    })
}

/// The calling thread's clock for a thread about to be started, which [`Handed::enter`]s it
/// first thing. On a stepped clock the new thread counts among the clock's threads from now
/// on: until it enters, the clock stands still (a thread not yet running has not waited).
pub fn hand_on() -> Handed {
    current().hand_on()
}

/// A clock handed to a thread being started ([`hand_on`], [`Clock::hand_on`]).
#[must_use = "the clock stands still until the thread enters it or this is dropped"]
pub struct Handed {
    clock: Option<Clock>,
}

impl Clock {
    /// This clock for a thread about to be started (see [`hand_on`]).
    pub fn hand_on(&self) -> Handed {
        if let Clock::Stepped(s) = self {
            s.expect_thread(1);
        }
        Handed {
            clock: Some(self.clone()),
        }
    }
}

impl Handed {
    /// Gives the calling thread (the new one) the handed clock, as [`enter`] does.
    pub fn enter(mut self) -> Entered {
        let clock = self.clock.take().unwrap_or_default();
        let entered = enter(clock.clone());
        if let Clock::Stepped(s) = clock {
            s.expect_thread(-1);
        }
        entered
    }
}

impl Drop for Handed {
    fn drop(&mut self) {
        // Never entered (the thread could not be started).
        if let Some(Clock::Stepped(s)) = self.clock.take() {
            s.expect_thread(-1);
        }
    }
}

/// Gives the calling thread `clock` until the returned guard is dropped (the thread's former
/// clock then comes back).
pub fn enter(clock: Clock) -> Entered {
    let new = match clock {
        Clock::Real => None,
        Clock::Stepped(s) => Some(s),
    };
    let fair = crate::sync::fair_here(new.is_some());
    let counted = new.as_ref().map(|s| {
        let tid = this_thread();
        s.register(tid);
        (Arc::clone(s), tid)
    });
    Entered {
        before: CURRENT.with(|c| c.replace(new)),
        fair,
        counted,
    }
}

/// The calling thread's id (a stepped clock knows its threads by it).
fn this_thread() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

/// The calling thread's clock as it was before [`enter`]; restored on drop.
#[must_use = "the clock is the thread's only while this guard lives"]
pub struct Entered {
    before: Option<Arc<Stepped>>,
    /// Whether the thread unlocked fairly before (`crate::sync`: a stepped run's threads do).
    fair: bool,
    /// The stepped clock this thread was counted in, and the thread's id.
    counted: Option<(Arc<Stepped>, i32)>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some((s, tid)) = self.counted.take() {
            s.unregister(tid);
        }
        let before = self.before.take();
        CURRENT.with(|c| c.replace(before));
        crate::sync::fair_here(self.fair);
    }
}

/// Whether the calling thread's clock is a stepped one.
pub fn is_stepped() -> bool {
    CURRENT.with(|c| c.borrow().is_some())
}

fn with_stepped<R>(stepped: impl FnOnce(&Stepped) -> R, real: impl FnOnce() -> R) -> R {
    CURRENT.with(|c| match &*c.borrow() {
        Some(s) => stepped(s),
        None => real(),
    })
}

/// The time now on the calling thread's clock.
pub fn now() -> Instant {
    with_stepped(Stepped::now, Instant::now)
}

/// The time from `earlier` to now on the calling thread's clock (`Instant::elapsed` reads the
/// real clock), zero if `earlier` is later.
pub fn since(earlier: Instant) -> Duration {
    now().saturating_duration_since(earlier)
}

/// The wall-clock time on the calling thread's clock: the system's, or on a stepped clock a
/// fixed start plus the stepped time.
pub fn system_now() -> SystemTime {
    with_stepped(Stepped::system_now, SystemTime::now)
}

/// Waits `d` on the calling thread's clock.
pub fn sleep(d: Duration) {
    if d.is_zero() {
        return;
    }
    with_stepped(|s| s.sleep(d), || std::thread::sleep(d));
}

/// Waits on `cv` at most `d`; on a stepped clock, sleeps `d` with the guard's mutex released
/// (see the module doc: every such wait in the simulator re-checks its condition).
pub fn wait_for<T: ?Sized>(cv: &Condvar, guard: &mut MutexGuard<'_, T>, d: Duration) {
    match current() {
        Clock::Real => {
            cv.wait_for(guard, d);
        }
        Clock::Stepped(s) => MutexGuard::unlocked(guard, || s.sleep(d)),
    }
}

/// `rx.recv_deadline(deadline)` on the calling thread's clock; on a stepped clock the channel
/// is looked at every stepped millisecond until the deadline.
pub fn recv_deadline<T>(rx: &Receiver<T>, deadline: Instant) -> Result<T, RecvTimeoutError> {
    let Clock::Stepped(s) = current() else {
        return rx.recv_deadline(deadline);
    };
    loop {
        match rx.try_recv() {
            Ok(v) => return Ok(v),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        let now = s.now();
        if now >= deadline {
            return Err(RecvTimeoutError::Timeout);
        }
        s.sleep((deadline - now).min(STEPPED_POLL));
    }
}

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
    /// Its runs take turns under real-time scheduling ([`Clock::stepped_in_turns`]).
    in_turns: bool,
}

#[derive(Debug, Default)]
struct State {
    /// The deadlines of the threads asleep, with each sleeper's id (a deadline passed is
    /// dropped when time moves).
    deadlines: BinaryHeap<Reverse<(Duration, i32)>>,
    /// Set by [`Stepped::release`]: the stepping driver's wait ends.
    released: bool,
    /// The threads that run on this clock ([`enter`]), each with how many times it entered.
    threads: HashMap<i32, usize>,
    /// The threads asleep on it, until the time reaches their deadlines.
    asleep: HashSet<i32>,
    /// Threads handed the clock and not yet running on it ([`hand_on`]).
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

    /// Whether its runs take turns under real-time scheduling ([`Clock::stepped_in_turns`]).
    pub fn in_turns(&self) -> bool {
        self.in_turns
    }

    /// Counts thread `tid` among the clock's threads ([`enter`]).
    fn register(&self, tid: i32) {
        let mut st = self.state.lock();
        *st.threads.entry(tid).or_default() += 1;
        st.changes += 1;
    }

    /// Counts `n` more (or, negative, fewer) threads handed the clock and not yet running.
    fn expect_thread(&self, n: isize) {
        let mut st = self.state.lock();
        st.starting = st.starting.saturating_add_signed(n);
        st.changes += 1;
        if st.starting == 0 {
            self.asleep.notify_all();
        }
    }

    /// Undoes one [`Stepped::register`] of `tid`.
    fn unregister(&self, tid: i32) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stepped_clock_moves_only_when_advanced() {
        let c = Stepped::new();
        let t0 = c.now();
        assert_eq!(c.now(), t0, "no time passes by itself");
        c.advance_by(Duration::from_millis(25));
        assert_eq!(c.now() - t0, Duration::from_millis(25));
        assert_eq!(
            c.system_now(),
            SystemTime::UNIX_EPOCH + STEPPED_WALL_START + Duration::from_millis(25)
        );
    }

    #[test]
    fn a_sleeper_wakes_when_the_time_reaches_its_deadline_and_not_before() {
        let c = Arc::new(Stepped::new());
        let sleeper = {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let _e = enter(Clock::Stepped(Arc::clone(&c)));
                sleep(Duration::from_secs(3600));
                c.elapsed()
            })
        };
        // The sleeper's deadline appears; the driver's step moves the time exactly there.
        while c.next_deadline().is_none() {
            std::thread::yield_now();
        }
        assert_eq!(c.next_deadline(), Some(Duration::from_secs(3600)));
        c.advance_by(Duration::from_secs(1));
        assert!(
            !sleeper.is_finished(),
            "a second does not end an hour's sleep"
        );
        assert!(c.advance());
        let woke_at = sleeper.join().expect("sleeper");
        assert_eq!(
            woke_at,
            Duration::from_secs(3600),
            "an hour, stepped at once"
        );
    }

    #[test]
    fn a_released_clock_stops_its_driver() {
        let c = Arc::new(Stepped::new());
        let driver = {
            let c = Arc::clone(&c);
            std::thread::spawn(move || while c.advance() {})
        };
        c.release();
        driver.join().expect("the driver ends");
        c.rearm();
        c.advance_by(Duration::from_millis(1));
        assert_eq!(c.elapsed(), Duration::from_millis(1));
    }

    #[test]
    fn the_real_clock_is_every_threads_unless_entered() {
        assert!(!is_stepped());
        let c = Clock::stepped();
        {
            let _e = enter(c.clone());
            assert!(is_stepped());
            let t = now();
            assert_eq!(now(), t, "stepped time stands still");
            let passed = std::thread::spawn(is_stepped).join().expect("thread");
            assert!(
                !passed,
                "a thread started without its clock keeps the real one"
            );
        }
        assert!(!is_stepped(), "the guard gives the thread its clock back");
    }
}
