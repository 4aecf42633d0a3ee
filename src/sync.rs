//! The simulator's locks: parking_lot's, whose unlock hands a contended lock over in turn on
//! a stepped clock's threads, and a condition variable to go with them.
//!
//! parking_lot is fast because an unlock usually lets any thread take the lock next, and fair
//! because every half millisecond or so *of the wall clock* an unlock hands it to the longest
//! waiter instead ("eventual fairness", `parking_lot_core`'s `FairTimeout`). On a stepped run
//! (`crate::clock`, `sim::control::stepping`), whose threads take turns in an order the run
//! alone must decide, that timer was the one thing left that the wall clock decided: with it,
//! six of ten runs of one seed gave the same event log; with it off, twelve of twelve. So a
//! thread that [`fair_here`] marked (the driver marks every thread of a stepped run) unlocks
//! with `unlock_fair`, which always hands a contended lock to the next waiter, and every other
//! thread unlocks as parking_lot does. The locks keep parking_lot's size and speed.
//!
//! Why not parking_lot's own `Condvar`: it waits only on `parking_lot::Mutex`, whose raw lock
//! this is not; [`Condvar`] is the same idea (park on its address until a notification changes
//! its sequence number) over `parking_lot_core`, which parking_lot itself is built on.

#![expect(
    unsafe_code,
    reason = "lock_api's raw-lock traits are unsafe to implement, and parking_lot_core's park \
              and unpark are unsafe to call (a key must be an address of ours)"
)]

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use lock_api::{RawMutex as _, RawMutexFair as _, RawRwLockFair as _};
use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};

thread_local! {
    /// This thread unlocks fairly (a stepped run's thread).
    static FAIR: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread to unlock fairly (`true`: a stepped run's thread) or as
/// parking_lot does; returns what it was.
pub fn fair_here(fair: bool) -> bool {
    FAIR.with(|f| f.replace(fair))
}

fn fair() -> bool {
    FAIR.with(Cell::get)
}

/// parking_lot's raw mutex, unlocked fairly on a stepped run's thread.
pub struct RawMutex(parking_lot::RawMutex);

// SAFETY: every method forwards to parking_lot's raw mutex, which upholds the trait's
// contract; `unlock_fair` is an unlock with the same precondition as `unlock`.
unsafe impl lock_api::RawMutex for RawMutex {
    const INIT: RawMutex = RawMutex(parking_lot::RawMutex::INIT);
    type GuardMarker = lock_api::GuardSend;

    fn lock(&self) {
        self.0.lock();
    }

    fn try_lock(&self) -> bool {
        self.0.try_lock()
    }

    unsafe fn unlock(&self) {
        if fair() {
            // SAFETY: the caller holds the lock, as `unlock` requires of it.
            unsafe { self.0.unlock_fair() }
        } else {
            // SAFETY: as above.
            unsafe { self.0.unlock() }
        }
    }

    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

/// parking_lot's raw reader-writer lock, unlocked fairly on a stepped run's thread.
pub struct RawRwLock(parking_lot::RawRwLock);

// SAFETY: every method forwards to parking_lot's raw lock, which upholds the trait's contract;
// the fair unlocks have the same preconditions as the plain ones.
unsafe impl lock_api::RawRwLock for RawRwLock {
    const INIT: RawRwLock = RawRwLock(parking_lot::RawRwLock::INIT);
    type GuardMarker = lock_api::GuardSend;

    fn lock_shared(&self) {
        self.0.lock_shared();
    }

    fn try_lock_shared(&self) -> bool {
        self.0.try_lock_shared()
    }

    unsafe fn unlock_shared(&self) {
        if fair() {
            // SAFETY: the caller holds a shared lock, as `unlock_shared` requires of it.
            unsafe { self.0.unlock_shared_fair() }
        } else {
            // SAFETY: as above.
            unsafe { self.0.unlock_shared() }
        }
    }

    fn lock_exclusive(&self) {
        self.0.lock_exclusive();
    }

    fn try_lock_exclusive(&self) -> bool {
        self.0.try_lock_exclusive()
    }

    unsafe fn unlock_exclusive(&self) {
        if fair() {
            // SAFETY: the caller holds the exclusive lock, as `unlock_exclusive` requires.
            unsafe { self.0.unlock_exclusive_fair() }
        } else {
            // SAFETY: as above.
            unsafe { self.0.unlock_exclusive() }
        }
    }
}

// SAFETY: forwards to parking_lot's raw lock, which implements recursive shared locking.
unsafe impl lock_api::RawRwLockRecursive for RawRwLock {
    fn lock_shared_recursive(&self) {
        lock_api::RawRwLockRecursive::lock_shared_recursive(&self.0);
    }

    fn try_lock_shared_recursive(&self) -> bool {
        lock_api::RawRwLockRecursive::try_lock_shared_recursive(&self.0)
    }
}

/// A mutex (parking_lot's, see the module doc).
pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;
/// Its guard.
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMutex, T>;
/// A reader-writer lock (parking_lot's, see the module doc).
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
/// Its shared guard.
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLock, T>;
/// Its exclusive guard.
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLock, T>;

/// A mutex made in a `const` context.
pub const fn const_mutex<T>(value: T) -> Mutex<T> {
    Mutex::const_new(RawMutex::INIT, value)
}

/// A condition variable for [`Mutex`]: a waiter parks on its address until a notification
/// moves its sequence number (checked as it parks, so a notification between the unlock and
/// the park is never lost).
#[derive(Debug, Default)]
pub struct Condvar {
    seq: AtomicU32,
}

impl Condvar {
    /// A condition variable no thread waits on.
    pub const fn new() -> Condvar {
        Condvar {
            seq: AtomicU32::new(0),
        }
    }

    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Releases `guard`'s lock, waits for a notification, and takes the lock again.
    pub fn wait<T: ?Sized>(&self, guard: &mut MutexGuard<'_, T>) {
        self.park(guard, None);
    }

    /// As [`Condvar::wait`], giving up after `timeout`; true when it timed out.
    pub fn wait_for<T: ?Sized>(&self, guard: &mut MutexGuard<'_, T>, timeout: Duration) -> bool {
        self.park(guard, Instant::now().checked_add(timeout))
    }

    fn park<T: ?Sized>(&self, guard: &mut MutexGuard<'_, T>, until: Option<Instant>) -> bool {
        let seen = self.seq.load(Ordering::Acquire);
        let key = self.key();
        MutexGuard::unlocked(guard, || {
            // SAFETY: the key is this condition variable's address, parked on by no other
            // code; the closures neither panic nor park.
            let got = unsafe {
                parking_lot_core::park(
                    key,
                    || self.seq.load(Ordering::Acquire) == seen,
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    until,
                )
            };
            matches!(got, parking_lot_core::ParkResult::TimedOut)
        })
    }

    /// Wakes one waiter; true when one was waiting.
    pub fn notify_one(&self) -> bool {
        self.seq.fetch_add(1, Ordering::Release);
        // SAFETY: the key is this condition variable's address; the callback does nothing.
        let r = unsafe { parking_lot_core::unpark_one(self.key(), |_| DEFAULT_UNPARK_TOKEN) };
        r.unparked_threads > 0
    }

    /// Wakes every waiter; how many were waiting.
    pub fn notify_all(&self) -> usize {
        self.seq.fetch_add(1, Ordering::Release);
        // SAFETY: the key is this condition variable's address.
        unsafe { parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_notification_wakes_a_waiter_and_a_timeout_ends_a_wait() {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let waiter = {
            let pair = Arc::clone(&pair);
            std::thread::spawn(move || {
                let mut ready = pair.0.lock();
                while !*ready {
                    pair.1.wait(&mut ready);
                }
            })
        };
        *pair.0.lock() = true;
        // The waiter may not be parked yet: notify until it has gone.
        while !waiter.is_finished() {
            pair.1.notify_all();
            std::thread::yield_now();
        }
        waiter.join().expect("waiter");
        let m = Mutex::new(());
        let cv = Condvar::new();
        let mut g = m.lock();
        assert!(
            cv.wait_for(&mut g, Duration::from_millis(1)),
            "nobody notified"
        );
    }

    /// One attempt: the calling thread holds the lock while another waits for it, then
    /// unlocks and at once tries it again; true when the lock had been handed over.
    fn handed_over() -> bool {
        let m = Arc::new(Mutex::new(()));
        let g = m.lock();
        let waiter = {
            let m = Arc::clone(&m);
            std::thread::spawn(move || drop(m.lock()))
        };
        // Time for the waiter to park (when it has not, this attempt only proves nothing).
        std::thread::sleep(Duration::from_millis(20));
        drop(g);
        let again = m.try_lock().is_some();
        waiter.join().expect("waiter");
        !again
    }

    #[test]
    fn a_fair_thread_hands_a_contended_lock_to_its_waiter() {
        let was = fair_here(true);
        let seen = (0..50).any(|_| handed_over());
        fair_here(was);
        assert!(
            seen,
            "an unlock by a fair thread gave the lock to the parked waiter"
        );
    }
}
