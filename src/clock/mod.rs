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
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crossbeam::channel::{Receiver, RecvTimeoutError, TryRecvError};

use crate::sync::{Condvar, MutexGuard};

pub use stepped::Stepped;

mod stepped;

/// How often a timed channel receive on a stepped clock looks at its channel.
const STEPPED_POLL: Duration = Duration::from_millis(1);

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
        Clock::Stepped(Arc::new(Stepped::taking_turns()))
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
pub(crate) fn this_thread() -> i32 {
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

#[cfg(test)]
mod tests;
