//! The text of the live progress line, from a [`Tick`] (pure; the app's progress sink shows
//! it on a terminal). The line names the phase the cycle is in — "initial update 35 %",
//! "initial checkpoint 00:03", "main 00:12/01:00", "final checkpoint 00:02", "audit 40 %" —
//! then the test cycle ("cycle 2/3"; "cycle 2" when the run goes on until stopped), the
//! main-phase time left of a planned run ("47h58m left": the cycles' initial updates,
//! checkpoints and audits come on top of it) and the I/O
//! rates of the last interval, with the run's p99 latency so far from its HDR histograms (the
//! same number as the status line's `p99_run_ms`, see [`super::status::run_p99_ms`]).

use std::time::Duration;

use crate::events::{Phase, Tick};
use crate::stats::LiveSnapshot;

/// The progress line of `t`: its phase's label and cycle, then the last interval's rates and
/// the run's p99 so far (ms; `None` before statistics with I/O in them).
pub fn tick_line(t: &Tick, p99_run_ms: Option<f64>) -> String {
    let left = t.main_left().map_or(String::new(), |d| {
        format!("  {} left", crate::events::human_duration(d))
    });
    let label = format!(
        "{}  {}{left}",
        label(t.phase, t.elapsed, t.done_bytes, t.finished),
        cycle_words(t.cycle, t.cycles)
    );
    line(
        &label,
        &t.before,
        &t.now,
        t.interval.as_secs_f64(),
        (p99_run_ms, t.findings),
    )
}

/// "cycle 2/3", or "cycle 2" for a run that goes on until stopped (`cycles` 0).
pub fn cycle_words(cycle: u32, cycles: u32) -> String {
    match cycles {
        0 => format!("cycle {cycle}"),
        n => format!("cycle {cycle}/{n}"),
    }
}

/// "initial update 35 %", "main 00:12/01:00", "final checkpoint 00:02", "audit 40 %": where the
/// cycle is, `elapsed` into the phase, `done_bytes` moved by it so far (written for the initial
/// update, read for the audit). A phase says 100 % only once `finished`.
pub fn label(phase: Phase, elapsed: Duration, done_bytes: u64, finished: bool) -> String {
    let percent = |total| {
        if finished {
            100
        } else {
            percent(done_bytes, total)
        }
    };
    match phase {
        Phase::InitialUpdate { total_bytes } => {
            format!("initial update {:>2} %", percent(total_bytes))
        }
        Phase::InitialCheckpoint => format!("initial checkpoint {}", clock(elapsed, elapsed)),
        Phase::Main { length } => {
            format!("main {}/{}", clock(elapsed, length), clock(length, length))
        }
        Phase::FinalCheckpoint => format!("final checkpoint {}", clock(elapsed, elapsed)),
        Phase::Audit { total_bytes } => format!("audit {:>2} %", percent(total_bytes)),
    }
}

/// Whole percent done, at most 99 while the phase runs (retries and log reads can carry the
/// byte count past the plan; the phase is over only when its workers are).
fn percent(done: u64, total: u64) -> u64 {
    if total == 0 {
        return 0;
    }
    (u128::from(done) * 100 / u128::from(total)).min(99) as u64
}

/// "`<label>`  IOPS 12345  MB/s 96.4  lat 0.42 ms  p99 (run) 1.02 ms  throttled 0  errors 0"
/// from two snapshots taken `secs` apart, the run's p99 so far and the findings.
pub fn line(
    label: &str,
    before: &LiveSnapshot,
    now: &LiveSnapshot,
    secs: f64,
    (p99_run_ms, findings): (Option<f64>, u64),
) -> String {
    let d = *now - *before;
    let p99 = p99_run_ms.map_or_else(|| "  none".into(), |p| format!("{p:>6.2}"));
    format!(
        "{label}  IOPS {:>8.0}  MB/s {:>8.1}  lat {:>6.2} ms  p99 (run) {p99} ms  throttled {}  errors {}",
        d.iops(secs),
        d.mb_per_s(secs),
        d.mean_latency_ms(),
        now.throttles,
        findings
    )
}

/// `d` as a clock: `MM:SS`, or `H:MM:SS` when `longest` (the phase's length) is an hour or
/// more, so a 48-hour phase reads `0:00:10/48:00:00`, not `00:10/2880:00`.
fn clock(d: Duration, longest: Duration) -> String {
    let s = d.as_secs();
    if longest.as_secs() >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_phase_reads_in_hours_minutes_and_seconds() {
        let h48 = Duration::from_secs(48 * 3600);
        let main = Phase::Main { length: h48 };
        assert_eq!(
            label(main, Duration::from_secs(10), 0, false),
            "main 0:00:10/48:00:00"
        );
        let hour = Phase::Main {
            length: Duration::from_secs(3600),
        };
        assert_eq!(
            label(hour, Duration::from_secs(3599), 0, false),
            "main 0:59:59/1:00:00"
        );
        let checkpoint = Phase::FinalCheckpoint;
        assert_eq!(
            label(checkpoint, Duration::from_secs(3723), 0, false),
            "final checkpoint 1:02:03"
        );
        assert_eq!(
            label(checkpoint, Duration::from_secs(62), 0, false),
            "final checkpoint 01:02"
        );
    }

    #[test]
    fn a_tick_reads_as_its_phase_and_its_interval() {
        let mut now = LiveSnapshot {
            reads: 50,
            bytes_read: 8192 * 50,
            ..LiveSnapshot::default()
        };
        now.lat_log2[0] = 50;
        let t = Tick {
            cycle: 1,
            cycles: 0,
            phase: Phase::Audit {
                total_bytes: 8192 * 100,
            },
            elapsed: Duration::from_secs(1),
            run_elapsed: Duration::from_secs(9),
            planned: None,
            done_bytes: 8192 * 50,
            finished: false,
            before: LiveSnapshot::default(),
            now,
            interval: Duration::from_millis(500),
            findings: 2,
            in_flight: 3,
            allowed: 8,
            long_ios: 0,
            witness_lag: None,
        };
        let l = tick_line(&t, Some(1.5));
        assert!(l.starts_with("audit 50 %  cycle 1  IOPS      100"), "{l}");
        assert!(l.contains("  p99 (run)   1.50 ms  "), "{l}");
        assert!(tick_line(&t, None).contains("  p99 (run)   none ms  "));
        assert!(l.ends_with("throttled 0  errors 2"), "{l}");
        assert_eq!(t.p99_ms(), Some(0.001));
        assert_eq!(
            Tick {
                now: t.before,
                ..t.clone()
            }
            .p99_ms(),
            None
        );
    }

    #[test]
    fn line_shows_rates_over_the_interval() {
        let a = LiveSnapshot::default();
        let b = LiveSnapshot {
            reads: 100,
            writes: 100,
            bytes_read: 1 << 20,
            latency_ns: 200_000_000,
            ..a
        };
        let main = Phase::Main {
            length: Duration::from_secs(120),
        };
        let l = line(
            &label(main, Duration::from_secs(65), 0, false),
            &a,
            &b,
            2.0,
            (None, 3),
        );
        assert!(l.starts_with("main 01:05/02:00  IOPS"), "{l}");
        assert!(l.contains("IOPS      100"), "{l}");
        assert!(l.contains("MB/s      0.5"), "{l}");
        assert!(l.contains("lat   1.00 ms"), "{l}");
        assert!(l.ends_with("errors 3"), "{l}");
    }

    #[test]
    fn every_phase_names_itself() {
        let t = Duration::from_secs(3);
        let gb = 1000 * 8192;
        let cases = [
            (
                Phase::InitialUpdate { total_bytes: gb },
                gb * 35 / 100,
                "initial update 35 %",
            ),
            (Phase::InitialCheckpoint, 0, "initial checkpoint 00:03"),
            (
                Phase::Main {
                    length: Duration::from_secs(60),
                },
                0,
                "main 00:03/01:00",
            ),
            (Phase::FinalCheckpoint, 0, "final checkpoint 00:03"),
            (Phase::Audit { total_bytes: gb }, gb * 2 / 5, "audit 40 %"),
            (Phase::Audit { total_bytes: gb }, 0, "audit  0 %"),
        ];
        for (phase, done, want) in cases {
            assert_eq!(label(phase, t, done, false), want);
        }
        let audit = Phase::Audit { total_bytes: gb };
        assert_eq!(label(audit, t, gb / 2, true), "audit 100 %");
    }

    #[test]
    fn percent_stays_below_100_while_running_and_survives_empty_files() {
        let audit = |done, total| {
            label(
                Phase::Audit { total_bytes: total },
                Duration::ZERO,
                done,
                false,
            )
        };
        assert_eq!(audit(5000, 1000), "audit 99 %");
        assert_eq!(audit(1000, 1000), "audit 99 %");
        assert_eq!(audit(7, 0), "audit  0 %");
    }
}
