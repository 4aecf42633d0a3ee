//! The stop signal: set by the cycle timer, by Ctrl-C / SIGTERM, by StopOnError, or by an
//! environment error (a refused request, a vanished device or mount).

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
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

/// The stage between the end of the main phase's time and the end of its users' work.
const MAIN_ENDING: &str = "end of the main phase";

/// Shared stop flags: the phase flag ends the current phase; the run flag ends everything.
#[derive(Debug, Default)]
pub struct Stop {
    phase: AtomicBool,
    run: AtomicBool,
    reason: AtomicU8,
    /// The number of the signal caught (0: none), set by the signal handler.
    signal: Arc<AtomicUsize>,
    /// When the run was first told to stop.
    stopped_at: crate::sync::Mutex<Option<Instant>>,
    /// The stage the run is in ("initial update", "main", "final checkpoint"…), and the one
    /// it was in when first told to stop.
    stage: crate::sync::Mutex<(Option<&'static str>, Option<&'static str>)>,
}

impl Stop {
    /// A fresh stop signal.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A stop signal that also watches `flag`, where a signal handler stores the number of the
    /// signal it caught.
    pub fn with_signal(flag: Arc<AtomicUsize>) -> Stop {
        Stop {
            signal: flag,
            ..Stop::default()
        }
    }

    /// The flag that signal handlers set (register it with signal-hook).
    pub fn signal_flag(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.signal)
    }

    /// Stops the whole run for `reason`.
    pub fn stop_run(&self, reason: StopReason) {
        let first =
            self.reason
                .compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
        if first.is_ok() {
            self.stopped_at.lock().get_or_insert_with(Instant::now);
            let mut stage = self.stage.lock();
            stage.1 = stage.0;
        }
        self.run.store(true, Ordering::Release);
        self.phase.store(true, Ordering::Release);
    }

    /// The run enters `stage` (a phase's name), which a stop names.
    pub fn enter_stage(&self, stage: &'static str) {
        self.stage.lock().0 = Some(stage);
    }

    /// The stage the run was in when first told to stop.
    pub fn stopped_in(&self) -> Option<&'static str> {
        self.stage.lock().1
    }

    /// Ends the current phase (the timer ran out).
    pub fn end_phase(&self) {
        self.phase.store(true, Ordering::Release);
        // The main phase's time is up; its users are finishing what they have in flight.
        let mut stage = self.stage.lock();
        if stage.0 == Some("main") {
            stage.0 = Some(MAIN_ENDING);
        }
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

    /// The signal that stopped the run (its number), if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::Acquire) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }

    /// When the run was first told to stop early, if it was.
    pub fn stopped_at(&self) -> Option<Instant> {
        *self.stopped_at.lock()
    }

    fn poll_signal(&self) {
        if self.signal.load(Ordering::Relaxed) != 0 && !self.run.load(Ordering::Relaxed) {
            self.stop_run(StopReason::Signal);
        }
    }

    /// Sleeps up to `d`, waking early when the phase ends; false when it ended.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = crate::clock::now() + d;
        loop {
            if self.phase_over() {
                return false;
            }
            let now = crate::clock::now();
            if now >= end {
                return true;
            }
            crate::clock::sleep((end - now).min(Duration::from_millis(20)));
        }
    }
}

/// How and when a run stopped, for the verdict, the JSON summary and the exit code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopWhen {
    /// Why it stopped early (`None`: it ran its planned course).
    pub reason: StopReason,
    /// The signal's number when a signal stopped it.
    pub signal: Option<i32>,
    /// Seconds from the run start to the stop (to the end when it ran its course).
    pub after_s: f64,
    /// Seconds the run was planned to last (cycles × cycle duration); `None`: open-ended.
    pub planned_s: Option<f64>,
    /// The stage it was in when it stopped ("main", "final checkpoint"…), when known.
    pub during: Option<&'static str>,
}

impl StopWhen {
    /// How the run that started at `start` stopped; `planned` is its planned length.
    pub fn of(stop: &Stop, start: Instant, planned: Option<Duration>) -> StopWhen {
        let reason = stop.reason();
        let at = stop.stopped_at().unwrap_or_else(Instant::now);
        StopWhen {
            reason,
            signal: stop.signal().filter(|_| reason == StopReason::Signal),
            after_s: at.saturating_duration_since(start).as_secs_f64(),
            planned_s: planned.map(|d| d.as_secs_f64()),
            during: stop.stopped_in(),
        }
    }

    /// "SIGINT", "SIGTERM" (or "signal N") when a signal stopped the run.
    pub fn signal_name(&self) -> Option<String> {
        self.signal.map(|n| match n {
            signal_hook::consts::SIGINT => "SIGINT".to_string(),
            signal_hook::consts::SIGTERM => "SIGTERM".to_string(),
            n => format!("signal {n}"),
        })
    }

    /// "stopped by SIGINT after 6 s of 30 s" when a signal cut the main phase short; outside
    /// it, the stage: "stopped by SIGINT during the final checkpoint, after the 10 s main
    /// phase" (the seconds since the start count the setup and checkpoints, so "11 s of 10 s"
    /// would read as a clock that ran over).
    pub fn phrase(&self) -> Option<String> {
        let name = self.signal_name()?;
        let main = match self.planned_s {
            Some(p) => format!("the {p:.0} s main phase"),
            None => "the open-ended main phase".to_string(),
        };
        let stage = |s: &str| {
            if s == "audit" {
                "audit pass".to_string()
            } else {
                s.to_string()
            }
        };
        Some(match self.during {
            Some(MAIN_ENDING) => format!("stopped by {name} at the end of {main}"),
            Some(s @ ("final checkpoint" | "audit")) => {
                format!("stopped by {name} during the {}, after {main}", stage(s))
            }
            Some(s) if s != "main" => format!(
                "stopped by {name} during the {}, {:.0} s after the start, before {main}",
                stage(s),
                self.after_s
            ),
            _ => {
                let of = match self.planned_s {
                    Some(p) => format!("of {p:.0} s"),
                    None => "of an open-ended run".to_string(),
                };
                format!("stopped by {name} after {:.0} s {of}", self.after_s)
            }
        })
    }

    /// The shell's exit code for the signal (128 + its number: 130 SIGINT, 143 SIGTERM).
    pub fn exit_code(&self) -> Option<u8> {
        self.signal.and_then(|n| u8::try_from(128 + n).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_stops_run_and_first_reason_wins() {
        let s = Stop::new();
        assert!(!s.phase_over());
        assert!(s.stopped_at().is_none() && s.signal().is_none());
        s.signal_flag().store(15, Ordering::Relaxed);
        assert!(s.run_stopped());
        let at = s.stopped_at().expect("the stop time");
        s.stop_run(StopReason::Error);
        assert_eq!(s.reason(), StopReason::Signal);
        assert_eq!(s.signal(), Some(15));
        assert_eq!(s.stopped_at(), Some(at), "the first stop's time is kept");
        s.begin_phase();
        assert!(s.phase_over(), "a stopped run never starts a new phase");
    }

    #[test]
    fn a_signal_stop_names_the_signal_the_time_and_the_exit_code() {
        let s = Stop::new();
        let start = Instant::now();
        let done = StopWhen::of(&s, start, Some(Duration::from_secs(30)));
        assert_eq!(
            (done.reason, done.phrase(), done.exit_code()),
            (StopReason::None, None, None)
        );
        s.signal_flag()
            .store(signal_hook::consts::SIGINT as usize, Ordering::Relaxed);
        assert!(s.run_stopped());
        let w = StopWhen::of(&s, start, Some(Duration::from_secs(30)));
        assert_eq!(w.exit_code(), Some(130));
        let phrase = w.phrase().expect("a phrase");
        assert!(
            phrase.starts_with("stopped by SIGINT after 0 s of 30 s"),
            "{phrase}"
        );
        let open = StopWhen {
            signal: Some(15),
            planned_s: None,
            ..w
        };
        assert_eq!(open.exit_code(), Some(143));
        assert_eq!(
            open.phrase().as_deref(),
            Some("stopped by SIGTERM after 0 s of an open-ended run")
        );
        let late = StopWhen {
            after_s: 11.2,
            planned_s: Some(10.0),
            during: Some("final checkpoint"),
            ..w
        };
        assert_eq!(
            late.phrase().as_deref(),
            Some("stopped by SIGINT during the final checkpoint, after the 10 s main phase")
        );
        let ending = Stop::new();
        ending.enter_stage("main");
        ending.end_phase();
        ending.stop_run(StopReason::Signal);
        let at_end = StopWhen {
            during: ending.stopped_in(),
            ..late
        };
        assert_eq!(
            at_end.phrase().as_deref(),
            Some("stopped by SIGINT at the end of the 10 s main phase")
        );
        let early = StopWhen {
            during: Some("initial update"),
            ..late
        };
        assert_eq!(
            early.phrase().as_deref(),
            Some("stopped by SIGINT during the initial update, 11 s after the start, before the 10 s main phase")
        );
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
