//! The live events of a running cycle: a phase began ([`PhaseBegan`]), and the snapshot the
//! driver takes about once a second ([`Tick`]) — what the progress line, a status line or a
//! metrics file need: where the run is, its rates over the last interval, the depth in flight,
//! the throttle and the findings so far.

use std::time::Duration;

use crate::stats::LiveSnapshot;

/// The phase of a test cycle, with what a progress label needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Every data page written once: `total_bytes` in all.
    InitialUpdate {
        /// Bytes the phase writes.
        total_bytes: u64,
    },
    /// The checkpoint after the initial update.
    InitialCheckpoint,
    /// The timed phase with every user.
    Main {
        /// Its length (the test cycle duration).
        length: Duration,
    },
    /// The checkpoint after the main phase.
    FinalCheckpoint,
    /// Every data page read and verified once: `total_bytes` in all.
    Audit {
        /// Bytes of data pages the pass reads.
        total_bytes: u64,
    },
}

impl Phase {
    /// The phase's name as the log and the depth summary spell it ("initial update", "main"…).
    pub fn name(self) -> &'static str {
        match self {
            Phase::InitialUpdate { .. } => "initial update",
            Phase::InitialCheckpoint => "initial checkpoint",
            Phase::Main { .. } => "main",
            Phase::FinalCheckpoint => "final checkpoint",
            Phase::Audit { .. } => "audit",
        }
    }
}

/// A phase of a test cycle began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseBegan {
    /// The phase, with its planned size or length.
    pub phase: Phase,
    /// The test cycle it belongs to (1-based).
    pub cycle: u32,
}

/// The live snapshot of the running phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// The test cycle (1-based).
    pub cycle: u32,
    /// The test cycles planned; 0 when the run goes on until stopped.
    pub cycles: u32,
    /// The phase running.
    pub phase: Phase,
    /// Time since the phase began.
    pub elapsed: Duration,
    /// Time since the run began.
    pub run_elapsed: Duration,
    /// The run's planned length (cycles × cycle duration); `None` when open-ended.
    pub planned: Option<Duration>,
    /// Bytes the phase moved so far (written by the initial update, read by the audit).
    pub done_bytes: u64,
    /// The phase's closing tick: its workers are done.
    pub finished: bool,
    /// The live totals at the previous tick…
    pub before: LiveSnapshot,
    /// …and now: their difference is the last interval's activity.
    pub now: LiveSnapshot,
    /// The time between the two snapshots.
    pub interval: Duration,
    /// Integrity findings reported so far.
    pub findings: u64,
    /// Requests in flight now (the run's depth gauge).
    pub in_flight: u64,
    /// Requests the per-file throttles allow in flight now, summed over the files.
    pub allowed: u64,
    /// Requests seen outstanding for longer than the long-I/O limit (15 s) since the run began.
    pub long_ios: u64,
    /// With `--witness`: journal batches the witness has not acknowledged, and the age of the
    /// oldest of them in ms (the witness lag).
    pub witness_lag: Option<(u64, u64)>,
}

impl Tick {
    /// The last interval's activity.
    pub fn delta(&self) -> LiveSnapshot {
        self.now - self.before
    }

    /// Reads and writes per second over the last interval.
    pub fn iops(&self) -> f64 {
        self.delta().iops(self.interval.as_secs_f64())
    }

    /// MB/s (2^20 bytes) read and written over the last interval.
    pub fn mb_per_s(&self) -> f64 {
        self.delta().mb_per_s(self.interval.as_secs_f64())
    }

    /// Mean latency over the last interval, ms (0 when no I/O completed).
    pub fn mean_latency_ms(&self) -> f64 {
        self.delta().mean_latency_ms()
    }

    /// Upper bound of the last interval's 99th-percentile latency, ms (to a factor of two);
    /// `None` when no I/O completed in it.
    pub fn p99_ms(&self) -> Option<f64> {
        let d = self.delta();
        (d.ops() > 0).then(|| d.p99_ms_bound())
    }

    /// Times I/O was throttled since the run began.
    pub fn throttled(&self) -> u64 {
        self.now.throttles
    }

    /// The main-phase time still to run: this cycle's rest of its main phase and every later
    /// cycle's, from the planned length; `None` when the run goes on until stopped. The
    /// initial updates, checkpoints and audits of the cycles come on top of it, so the run
    /// ends no sooner.
    pub fn main_left(&self) -> Option<Duration> {
        let planned = self.planned?;
        let cycles = self.cycles.max(1);
        let per_cycle = planned / cycles;
        let done_cycles = per_cycle * self.cycle.saturating_sub(1).min(cycles);
        let this_cycle = match self.phase {
            Phase::InitialUpdate { .. } | Phase::InitialCheckpoint => Duration::ZERO,
            Phase::Main { .. } => self.elapsed.min(per_cycle),
            Phase::FinalCheckpoint | Phase::Audit { .. } => per_cycle,
        };
        Some(planned.saturating_sub(done_cycles + this_cycle))
    }
}

/// A duration as people read it: `42s`, `12m05s`, `47h58m`, `2d 0h`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..172_800 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(cycle: u32, cycles: u32, phase: Phase, elapsed: u64, planned: Option<u64>) -> Tick {
        Tick {
            cycle,
            cycles,
            phase,
            elapsed: Duration::from_secs(elapsed),
            run_elapsed: Duration::from_secs(elapsed),
            planned: planned.map(Duration::from_secs),
            done_bytes: 0,
            finished: false,
            before: LiveSnapshot::default(),
            now: LiveSnapshot::default(),
            interval: Duration::from_secs(1),
            findings: 0,
            in_flight: 0,
            allowed: 0,
            long_ios: 0,
            witness_lag: None,
        }
    }

    #[test]
    fn the_main_time_left_counts_this_cycles_rest_and_the_later_cycles() {
        let main = Phase::Main {
            length: Duration::from_secs(100),
        };
        let audit = Phase::Audit { total_bytes: 1 };
        let init = Phase::InitialUpdate { total_bytes: 1 };
        let left = |t: Tick| t.main_left().map(|d| d.as_secs());
        assert_eq!(left(tick(1, 3, init, 50, Some(300))), Some(300));
        assert_eq!(left(tick(1, 3, main, 40, Some(300))), Some(260));
        assert_eq!(left(tick(2, 3, audit, 5, Some(300))), Some(100));
        assert_eq!(left(tick(3, 3, main, 100, Some(300))), Some(0));
        assert_eq!(left(tick(3, 3, audit, 9, Some(300))), Some(0));
        assert_eq!(left(tick(1, 0, main, 40, None)), None);
    }

    #[test]
    fn durations_read_as_people_read_them() {
        let h = |s| human_duration(Duration::from_secs(s));
        assert_eq!(h(42), "42s");
        assert_eq!(h(725), "12m05s");
        assert_eq!(h(47 * 3600 + 58 * 60 + 30), "47h58m");
        assert_eq!(h(48 * 3600), "2d 0h");
        assert_eq!(h(3 * 86_400 + 5 * 3600), "3d 5h");
    }
}
