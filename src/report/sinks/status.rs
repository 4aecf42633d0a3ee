//! The status line: one line per `--status-interval` on stdout when it is not a terminal (a
//! pipe, a file, a systemd unit's journal), so a run watched from elsewhere says where it is.
//!
//! The line is `key=value` pairs (logfmt), one word each, so `grep`, `awk` and journald's
//! readers take it apart without a parser of ours:
//!
//! ```text
//! sqliosim status: phase=main progress=00:12/01:00 cycle=1/2 elapsed=20s planned=120s iops=1234 mb_s=9.6 p99_run_ms=1.024 in_flight=3 throttled=0 findings=0
//! ```
//!
//! The rates are over the time since the previous status line (not the last second's tick).
//! `p99_run_ms` is the 99th-percentile latency of the run so far, from the run's HDR
//! histograms: the `stats.total.latency.p99_us` of the last running statistics
//! ([`Event::Stats`], every two seconds), so the line and the JSON heartbeat say the same
//! number (`none` before the first statistics with I/O in them). The sink is made only
//! when the option is given and stdout is not a terminal; on a terminal the progress line says
//! the same.

use std::time::Duration;

use crate::sync::Mutex;
use serde::{Deserialize, Serialize};

use crate::events::{Event, EventSink, Tick};
use crate::stats::{LiveSnapshot, Summary};

/// Prints a status line on stdout every `every` of run time, from the ticks.
pub struct StatusSink {
    every: Duration,
    /// The run time and live totals at the previous line.
    last: Mutex<Option<(Duration, LiveSnapshot)>>,
    /// The run's p99 so far, ms, from the last running statistics.
    p99: Mutex<Option<f64>>,
}

/// The 99th-percentile latency of `s` in ms, from its HDR histograms (`None` with no I/O):
/// the run-so-far p99 the status line, the progress line and the JSON `status` carry.
pub fn run_p99_ms(s: &Summary) -> Option<f64> {
    let l = &s.total.latency;
    (l.count > 0).then(|| l.p99_us / 1000.0)
}

/// "1.024" (ms, three decimals) or "none".
fn p99_word(p99_ms: Option<f64>) -> String {
    p99_ms.map_or_else(|| "none".into(), |p| format!("{p:.3}"))
}

impl StatusSink {
    /// A line every `every` (at least a second: the ticks come about once a second).
    pub fn new(every: Duration) -> StatusSink {
        StatusSink {
            every: every.max(Duration::from_secs(1)),
            last: Mutex::new(None),
            p99: Mutex::new(None),
        }
    }

    /// The line for `t`, when one is due (the first tick, then every `every`, and the closing
    /// tick of the audit, so the last line of a run says 100 %).
    fn due(&self, t: &Tick) -> Option<String> {
        let mut last = self.last.lock();
        let (at, before) = last.unwrap_or((Duration::ZERO, LiveSnapshot::default()));
        let closing = t.finished && matches!(t.phase, crate::events::Phase::Audit { .. });
        let since = t.run_elapsed.saturating_sub(at);
        if last.is_some() && since < self.every && !closing {
            return None;
        }
        *last = Some((t.run_elapsed, t.now));
        Some(status_line(t, &before, since, *self.p99.lock()))
    }
}

/// The status line of `t`, its rates from `before` (the totals `since` ago), with the run's
/// p99 so far (ms, from [`run_p99_ms`]).
pub fn status_line(t: &Tick, before: &LiveSnapshot, since: Duration, p99: Option<f64>) -> String {
    let d = t.now - *before;
    let secs = since.as_secs_f64();
    let label = crate::report::sinks::progress::label(t.phase, t.elapsed, t.done_bytes, t.finished);
    let progress = label.trim_start_matches(t.phase.name()).replace(' ', "");
    let cycles = match t.cycles {
        0 => String::new(),
        n => format!("/{n}"),
    };
    let planned = t
        .planned
        .map_or_else(|| "none".into(), |p| format!("{}s", p.as_secs()));
    let witness = t.witness_lag.map_or_else(String::new, |(batches, ms)| {
        format!(" witness_lag_batches={batches} witness_lag_ms={ms}")
    });
    format!(
        "sqliosim status: phase={} progress={progress} cycle={}{cycles} elapsed={}s planned={planned} iops={:.0} mb_s={:.1} p99_run_ms={} in_flight={} throttled={} findings={}{witness}",
        t.phase.name().replace(' ', "_"),
        t.cycle,
        t.run_elapsed.as_secs(),
        d.iops(secs),
        d.mb_per_s(secs),
        p99_word(p99),
        t.in_flight,
        t.throttled(),
        t.findings,
    )
}

/// Where a run was at its last tick: the JSON summary's `status` (schema /2 addition), what
/// `sqliosim report` shows of a run that is still going or never finished.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunStatus {
    /// The phase ("initial update", "main", …).
    pub phase: String,
    /// How far the phase is: "35%" or "00:12/01:00".
    pub progress: String,
    /// The test cycle (1-based).
    pub cycle: u32,
    /// The test cycles planned (0: until stopped).
    pub cycles: u32,
    /// Seconds since the run began.
    pub elapsed_s: f64,
    /// The planned length (cycles × cycle duration), seconds; null when open-ended.
    pub planned_s: Option<f64>,
    /// The main-phase time still to run, seconds (the cycles' initial updates, checkpoints and
    /// audits come on top of it); null when open-ended (a schema /2 addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_left_s: Option<f64>,
    /// Reads and writes per second over the last tick's interval (about a second).
    pub iops: f64,
    /// MB/s (2^20 bytes) over the same interval.
    pub mb_per_s: f64,
    /// Upper bound of the interval's 99th-percentile latency, ms; null with no I/O in it.
    pub p99_ms: Option<f64>,
    /// The 99th-percentile latency of the run so far, ms, from its HDR histograms (the same
    /// as `stats.total.latency.p99_us`); null before statistics with I/O (schema /2 addition).
    pub p99_run_ms: Option<f64>,
    /// Requests in flight.
    pub in_flight: u64,
    /// Times I/O was throttled since the run began.
    pub throttled: u64,
    /// Integrity findings so far.
    pub findings: u64,
}

impl RunStatus {
    /// The status a tick describes, with the run's p99 so far from `stats` (the last running
    /// statistics, when any came).
    pub fn of(t: &Tick, stats: Option<&Summary>) -> RunStatus {
        let label =
            crate::report::sinks::progress::label(t.phase, t.elapsed, t.done_bytes, t.finished);
        RunStatus {
            phase: t.phase.name().into(),
            progress: label.trim_start_matches(t.phase.name()).replace(' ', ""),
            cycle: t.cycle,
            cycles: t.cycles,
            elapsed_s: t.run_elapsed.as_secs_f64(),
            planned_s: t.planned.map(|p| p.as_secs_f64()),
            main_left_s: t.main_left().map(|d| d.as_secs_f64()),
            iops: t.iops(),
            mb_per_s: t.mb_per_s(),
            p99_ms: t.p99_ms(),
            p99_run_ms: stats.and_then(run_p99_ms),
            in_flight: t.in_flight,
            throttled: t.throttled(),
            findings: t.findings,
        }
    }

    /// "main 00:12/01:00, cycle 1/2, 20s of 2m00s planned (1m48s of main phases left), 1234
    /// IOPS, 9.6 MB/s, p99 (run) 1.024 ms, 3 in flight, 0 throttled, 0 finding(s)" (a JSON of before the run's p99 was
    /// kept says "p99 < …" of the last interval's bound).
    pub fn describe(&self) -> String {
        let secs = |s: f64| crate::events::human_duration(std::time::Duration::from_secs_f64(s));
        let planned = self
            .planned_s
            .map_or_else(String::new, |p| format!(" of {} planned", secs(p.max(0.0))));
        let left = self.main_left_s.map_or_else(String::new, |l| {
            format!(" ({} of main phases left)", secs(l.max(0.0)))
        });
        let p99 = match (self.p99_run_ms, self.p99_ms) {
            (Some(p), _) => format!("p99 (run) {p:.3} ms"),
            (None, Some(p)) => format!("p99 < {p:.3} ms"),
            (None, None) => "no I/O".into(),
        };
        format!(
            "{} {}, {}, {}{planned}{left}, {:.0} IOPS, {:.1} MB/s, {p99}, {} in flight, {} throttled, {} finding(s)",
            self.phase,
            self.progress,
            crate::report::sinks::progress::cycle_words(self.cycle, self.cycles),
            secs(self.elapsed_s.max(0.0)),
            self.iops,
            self.mb_per_s,
            self.in_flight,
            self.throttled,
            self.findings
        )
    }
}

impl StatusSink {
    /// Keeps the run's p99 from statistics with I/O in them.
    fn keep_p99(&self, s: &Summary) {
        if let Some(p) = run_p99_ms(s) {
            *self.p99.lock() = Some(p);
        }
    }
}

impl EventSink for StatusSink {
    fn emit(&self, event: Event) {
        let t = match event {
            Event::Tick(t) => t,
            Event::Stats(s) => return self.keep_p99(&s),
            Event::Summary(s) => return self.keep_p99(&s),
            _ => return,
        };
        if let Some(line) = self.due(&t) {
            // A closed stdout (the reader went away) is not the run's failure.
            let _ = crate::exit::outln!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Phase;

    fn tick(run_s: u64, reads: u64) -> Tick {
        let mut now = LiveSnapshot {
            reads,
            bytes_read: reads * 8192,
            ..LiveSnapshot::default()
        };
        now.lat_log2[10] = reads;
        Tick {
            cycle: 2,
            cycles: 3,
            phase: Phase::Main {
                length: Duration::from_secs(60),
            },
            elapsed: Duration::from_secs(12),
            run_elapsed: Duration::from_secs(run_s),
            planned: Some(Duration::from_secs(180)),
            done_bytes: 0,
            finished: false,
            before: LiveSnapshot::default(),
            now,
            interval: Duration::from_secs(1),
            findings: 1,
            in_flight: 4,
            allowed: 8,
            long_ios: 0,
            witness_lag: None,
        }
    }

    #[test]
    fn a_line_every_interval_with_rates_since_the_last_line() {
        let s = StatusSink::new(Duration::from_secs(5));
        let first = s.due(&tick(20, 100)).expect("the first tick prints");
        assert!(first.starts_with("sqliosim status: phase=main progress=00:12/01:00 cycle=2/3 elapsed=20s planned=180s iops=5"), "{first}");
        // No running statistics yet: no p99 (the live buckets' bound is not shown).
        assert!(
            first.ends_with("p99_run_ms=none in_flight=4 throttled=0 findings=1"),
            "{first}"
        );
        let mut stats = Summary::default();
        stats.total.latency.count = 10;
        stats.total.latency.p99_us = 1234.5;
        s.emit(Event::Stats(std::sync::Arc::new(stats.clone())));
        assert_eq!(s.due(&tick(24, 200)), None);
        let next = s.due(&tick(25, 600)).expect("5 s later");
        assert!(next.contains(" iops=100 mb_s=0.8 "), "{next}");
        assert!(next.contains(" p99_run_ms=1.234 "), "{next}");
        // Statistics without I/O keep the last p99.
        s.emit(Event::Stats(std::sync::Arc::new(Summary::default())));
        assert_eq!(*s.p99.lock(), run_p99_ms(&stats));
    }

    #[test]
    fn the_json_status_carries_the_runs_p99_of_the_statistics() {
        let mut stats = Summary::default();
        assert_eq!(RunStatus::of(&tick(20, 100), Some(&stats)).p99_run_ms, None);
        stats.total.latency.count = 3;
        stats.total.latency.p99_us = 2048.0;
        let st = RunStatus::of(&tick(20, 100), Some(&stats));
        assert_eq!(st.p99_run_ms, Some(2.048));
        assert!(
            st.describe().contains(", p99 (run) 2.048 ms, "),
            "{}",
            st.describe()
        );
    }
}
