//! The stop signal: set by the cycle timer, by Ctrl-C / SIGTERM, by StopOnError, or by an
//! environment error (a refused request, a vanished device or mount).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a run stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Not stopped early.
    None = 0,
    /// SIGINT or SIGTERM.
    Signal = 1,
    /// StopOnError and an integrity error.
    Error = 2,
    /// The platform refused a request, or the device or mount went away.
    Environment = 3,
}

/// Shared stop flags: the phase flag ends the current phase; the run flag ends everything.
#[derive(Debug, Default)]
pub struct Stop {
    phase: AtomicBool,
    run: AtomicBool,
    reason: AtomicU8,
    signal: Arc<AtomicBool>,
}

impl Stop {
    /// A fresh stop signal.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A stop signal that also watches `flag` (set by a signal handler).
    pub fn with_signal(flag: Arc<AtomicBool>) -> Stop {
        Stop {
            signal: flag,
            ..Stop::default()
        }
    }

    /// The flag that signal handlers set (register it with signal-hook).
    pub fn signal_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.signal)
    }

    /// Stops the whole run for `reason`.
    pub fn stop_run(&self, reason: StopReason) {
        let _ = self
            .reason
            .compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
        self.run.store(true, Ordering::Release);
        self.phase.store(true, Ordering::Release);
    }

    /// Ends the current phase (the timer ran out).
    pub fn end_phase(&self) {
        self.phase.store(true, Ordering::Release);
    }

    /// Starts a new phase.
    pub fn begin_phase(&self) {
        if !self.run_stopped() {
            self.phase.store(false, Ordering::Release);
        }
    }

    /// True when workers of the current phase must finish.
    pub fn phase_over(&self) -> bool {
        self.poll_signal();
        self.phase.load(Ordering::Acquire)
    }

    /// True when the whole run must end.
    pub fn run_stopped(&self) -> bool {
        self.poll_signal();
        self.run.load(Ordering::Acquire)
    }

    /// Why the run stopped early.
    pub fn reason(&self) -> StopReason {
        match self.reason.load(Ordering::Acquire) {
            1 => StopReason::Signal,
            2 => StopReason::Error,
            3 => StopReason::Environment,
            _ => StopReason::None,
        }
    }

    fn poll_signal(&self) {
        if self.signal.load(Ordering::Relaxed) && !self.run.load(Ordering::Relaxed) {
            self.stop_run(StopReason::Signal);
        }
    }

    /// Sleeps up to `d`, waking early when the phase ends; false when it ended.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.phase_over() {
                return false;
            }
            let now = Instant::now();
            if now >= end {
                return true;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(20)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_stops_run_and_first_reason_wins() {
        let s = Stop::new();
        assert!(!s.phase_over());
        s.signal_flag().store(true, Ordering::Relaxed);
        assert!(s.run_stopped());
        s.stop_run(StopReason::Error);
        assert_eq!(s.reason(), StopReason::Signal);
        s.begin_phase();
        assert!(s.phase_over(), "a stopped run never starts a new phase");
    }

    #[test]
    fn end_phase_does_not_stop_run() {
        let s = Stop::new();
        s.end_phase();
        assert!(s.phase_over() && !s.run_stopped());
        s.begin_phase();
        assert!(!s.phase_over());
        assert!(!s.sleep(Duration::ZERO) || !s.phase_over());
    }
}
