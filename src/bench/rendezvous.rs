//! A start line for the bench's worker threads that can be called off: like
//! `std::sync::Barrier`, but when a worker cannot be started (`ulimit -u`, no memory for its
//! stack) the ones already waiting are released, told so, and return, so that they can be
//! joined and the bench ends with a clear error instead of waiting forever for a thread the
//! system never started.

use std::sync::{Condvar, Mutex, PoisonError};

/// `n` threads meet here once; or the meeting is called off.
#[derive(Debug)]
pub struct Rendezvous {
    n: usize,
    /// Threads arrived, and whether the meeting was called off.
    state: Mutex<(usize, bool)>,
    met: Condvar,
}

impl Rendezvous {
    /// A meeting of `n` threads.
    pub fn new(n: usize) -> Rendezvous {
        Rendezvous {
            n,
            state: Mutex::new((0, false)),
            met: Condvar::new(),
        }
    }

    /// Waits until all `n` have arrived (true) or the meeting is called off (false).
    pub fn wait(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.0 += 1;
        if st.0 >= self.n {
            self.met.notify_all();
        }
        while st.0 < self.n && !st.1 {
            st = self.met.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        !st.1 || st.0 >= self.n
    }

    /// Calls the meeting off: every waiter returns false, and so does every later arrival
    /// that does not complete it.
    pub fn call_off(&self) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.1 = true;
        self.met.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiters_meet_or_are_released_when_called_off() {
        let r = Rendezvous::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| r.wait());
            let b = s.spawn(|| r.wait());
            assert!(r.wait(), "the third arrival completes it");
            assert!(a.join().expect("a") && b.join().expect("b"));
        });
        let r = Rendezvous::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| r.wait());
            r.call_off();
            assert!(!a.join().expect("a"), "released, told it was called off");
        });
    }
}
