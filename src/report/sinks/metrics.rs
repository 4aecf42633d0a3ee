//! The metrics textfile: the run's live metrics in the Prometheus text exposition format
//! (version 0.0.4), for node_exporter's textfile collector, replaced whole every interval and
//! once more at the end.
//!
//! The file is written like the JSON summary, through [`crate::io::safefile::replace`]: a
//! temporary `.NAME.<random>.tmp` created with `O_EXCL` beside it, then renamed over the name, so a
//! scraper never reads half a file and a planted symlink or another user's file under the
//! name is refused, never followed (the collector reads only `*.prom`, so the temporary is
//! never scraped). The counters come from the running statistics ([`Event::Stats`]: I/Os,
//! bytes and errors by file and direction, throttled I/Os, the HDR latency histogram as
//! cumulative `le` buckets), the gauges from the last tick (phase, cycle, in flight) and the
//! findings from the findings themselves. docs/status.md lists every metric.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sync::Mutex;

use crate::events::{Event, EventSink, Tick};
use crate::stats::{FileSummary, LatencyHistogram, Summary};

use crate::report::error::ReportError;

/// The latency buckets' upper bounds, seconds (Prometheus' defaults widened to 30 s, with the
/// sub-millisecond steps a fast device needs).
const BUCKETS_S: [f64; 18] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 15.0, 30.0,
];

/// Every phase's name, for the `sqliosim_phase` state set: spelt as the status line's
/// `phase=` value (one word), so that a label and a status line can be matched.
const PHASES: [&str; 5] = [
    "initial_update",
    "initial_checkpoint",
    "main",
    "final_checkpoint",
    "audit",
];

#[derive(Default)]
struct State {
    stats: Option<Arc<Summary>>,
    tick: Option<Tick>,
    findings: BTreeMap<&'static str, u64>,
    /// Run time of the last write.
    written: Option<Duration>,
    running: bool,
    error: Option<ReportError>,
}

/// Keeps the metrics file current.
pub struct MetricsSink {
    path: PathBuf,
    every: Duration,
    state: Mutex<State>,
}

impl MetricsSink {
    /// Metrics written to `path` every `every` of run time (at least a second).
    pub fn new(path: PathBuf, every: Duration) -> MetricsSink {
        let state = State {
            running: true,
            ..State::default()
        };
        MetricsSink {
            path,
            every: every.max(Duration::from_secs(1)),
            state: Mutex::new(state),
        }
    }

    fn write(&self, st: &mut State) {
        let text = render(st);
        if let Err(e) = crate::io::safefile::replace(&self.path, text.as_bytes()) {
            st.error.get_or_insert(e.into());
        }
    }
}

impl EventSink for MetricsSink {
    /// The first failure to write the file (the run goes on without it).
    fn take_error(&self) -> Option<String> {
        self.state.lock().error.take().map(|e| e.to_string())
    }

    fn emit(&self, event: Event) {
        let mut st = self.state.lock();
        match event {
            Event::Finding(f) => *st.findings.entry(f.class.as_str()).or_default() += 1,
            Event::Stats(s) => st.stats = Some(s),
            Event::Tick(t) => {
                let now = t.run_elapsed;
                st.tick = Some(*t);
                let due = st
                    .written
                    .is_none_or(|w| now.saturating_sub(w) >= self.every);
                if due && st.stats.is_some() {
                    st.written = Some(now);
                    self.write(&mut st);
                }
            }
            Event::Summary(s) => {
                st.stats = Some(Arc::new(*s));
                st.running = false;
                self.write(&mut st);
            }
            _ => {}
        }
    }
}

/// The whole exposition of `st`.
fn render(st: &State) -> String {
    let mut out = String::new();
    gauges(&mut out, st);
    let total: u64 = st.findings.values().sum();
    family(
        &mut out,
        "sqliosim_integrity_findings_total",
        "counter",
        "Integrity findings reported, all classes.",
    );
    let _ = writeln!(out, "sqliosim_integrity_findings_total {total}");
    family(
        &mut out,
        "sqliosim_findings_total",
        "counter",
        "Integrity findings reported, by class.",
    );
    for (class, n) in &st.findings {
        let _ = writeln!(out, "sqliosim_findings_total{{class=\"{class}\"}} {n}");
    }
    if let Some(s) = &st.stats {
        io_counters(&mut out, &s.files);
        latency(&mut out, &s.files);
    }
    out
}

/// `# HELP` and `# TYPE` of a metric family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// Where the run is: running, phase, cycle, time, depth, throttled and long I/Os.
fn gauges(out: &mut String, st: &State) {
    let t = st.tick.as_ref();
    family(
        out,
        "sqliosim_running",
        "gauge",
        "1 while the run goes on, 0 in the file's final write.",
    );
    let _ = writeln!(out, "sqliosim_running {}", u8::from(st.running));
    family(
        out,
        "sqliosim_phase",
        "gauge",
        "The phase of the test cycle running (1) or not (0).",
    );
    let now = t.map(|t| t.phase.name().replace(' ', "_"));
    for p in PHASES {
        let on = u8::from(st.running && now.as_deref() == Some(p));
        let _ = writeln!(out, "sqliosim_phase{{phase=\"{p}\"}} {on}");
    }
    let one = |out: &mut String, name: &str, kind: &str, help: &str, v: String| {
        family(out, name, kind, help);
        let _ = writeln!(out, "{name} {v}");
    };
    let n = |f: fn(&Tick) -> u64| t.map_or(0, f).to_string();
    one(
        out,
        "sqliosim_cycle",
        "gauge",
        "The test cycle running (1-based; 0 before the first).",
        n(|t| t.cycle.into()),
    );
    one(
        out,
        "sqliosim_cycles_planned",
        "gauge",
        "Test cycles planned (0: until stopped).",
        n(|t| t.cycles.into()),
    );
    let secs = t.map_or(0.0, |t| t.run_elapsed.as_secs_f64());
    one(
        out,
        "sqliosim_elapsed_seconds",
        "gauge",
        "Time since the run began.",
        format!("{secs:.3}"),
    );
    let planned = t.and_then(|t| t.planned).map_or(0, |p| p.as_secs());
    one(
        out,
        "sqliosim_planned_seconds",
        "gauge",
        "The run's planned length (0: until stopped).",
        planned.to_string(),
    );
    let left = t.and_then(Tick::main_left).map_or(0, |d| d.as_secs());
    one(
        out,
        "sqliosim_main_left_seconds",
        "gauge",
        "Main-phase time still to run (0: until stopped, or done); the cycles' initial updates, checkpoints and audits come on top.",
        left.to_string(),
    );
    one(
        out,
        "sqliosim_in_flight",
        "gauge",
        "I/O requests in flight now.",
        n(|t| t.in_flight),
    );
    one(
        out,
        "sqliosim_throttled_total",
        "counter",
        "Times I/O was throttled, all files.",
        n(Tick::throttled),
    );
    one(
        out,
        "sqliosim_long_ios_total",
        "counter",
        "I/O requests outstanding for more than 15 s.",
        n(|t| t.long_ios),
    );
    if let Some((batches, ms)) = t.and_then(|t| t.witness_lag) {
        one(
            out,
            "sqliosim_witness_lag_batches",
            "gauge",
            "Journal batches the off-host witness has not acknowledged.",
            batches.to_string(),
        );
        one(
            out,
            "sqliosim_witness_lag_seconds",
            "gauge",
            "Age of the oldest journal batch the witness has not acknowledged.",
            format!("{:.3}", ms as f64 / 1000.0),
        );
    }
}

/// A label value, escaped as the exposition format wants (`\`, `"` and newlines).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// I/Os, bytes and errors by file and direction; throttled I/Os by file.
fn io_counters(out: &mut String, files: &[FileSummary]) {
    family(
        out,
        "sqliosim_io_operations_total",
        "counter",
        "I/O operations completed, by file and direction.",
    );
    for f in files {
        let io = &f.io;
        let file = label(&f.path);
        for (dir, v) in [
            ("read", io.reads + io.scatter_reads),
            ("write", io.writes + io.gather_writes),
            ("sync", io.syncs),
        ] {
            let _ = writeln!(
                out,
                "sqliosim_io_operations_total{{file=\"{file}\",direction=\"{dir}\"}} {v}"
            );
        }
    }
    family(
        out,
        "sqliosim_io_bytes_total",
        "counter",
        "Bytes transferred, by file and direction.",
    );
    for f in files {
        let file = label(&f.path);
        for (dir, v) in [("read", f.io.bytes_read), ("write", f.io.bytes_written)] {
            let _ = writeln!(
                out,
                "sqliosim_io_bytes_total{{file=\"{file}\",direction=\"{dir}\"}} {v}"
            );
        }
    }
    per_file(
        out,
        files,
        "sqliosim_io_errors_total",
        "Failed I/O requests, by file.",
        |f| f.io.errors,
    );
    per_file(
        out,
        files,
        "sqliosim_file_throttled_total",
        "Times I/O was throttled, by file.",
        |f| f.throttled,
    );
}

/// A counter family with one sample per file: `name{file="…"} value(f)`.
fn per_file(
    out: &mut String,
    files: &[FileSummary],
    name: &str,
    help: &str,
    value: impl Fn(&FileSummary) -> u64,
) {
    family(out, name, "counter", help);
    for f in files {
        let _ = writeln!(out, "{name}{{file=\"{}\"}} {}", label(&f.path), value(f));
    }
}

/// The latency of every I/O by file, from its HDR histogram: cumulative `le` buckets, `+Inf`,
/// `_sum` (count × the histogram's mean) and `_count`.
fn latency(out: &mut String, files: &[FileSummary]) {
    family(
        out,
        "sqliosim_io_latency_seconds",
        "histogram",
        "Latency of the I/O requests (reads, writes, flushes), by file.",
    );
    for f in files {
        let Some(h) = f.io.latency_hdr.as_deref() else {
            continue;
        };
        let Ok(h) = LatencyHistogram::from_v2_base64(h) else {
            continue;
        };
        let file = label(&f.path);
        for le in BUCKETS_S {
            let n = h.count_up_to((le * 1e9) as u64);
            let _ = writeln!(
                out,
                "sqliosim_io_latency_seconds_bucket{{file=\"{file}\",le=\"{le}\"}} {n}"
            );
        }
        let count = h.count();
        let sum = f.io.latency.mean_us * count as f64 / 1e6;
        let _ = writeln!(
            out,
            "sqliosim_io_latency_seconds_bucket{{file=\"{file}\",le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "sqliosim_io_latency_seconds_sum{{file=\"{file}\"}} {sum:.6}"
        );
        let _ = writeln!(
            out,
            "sqliosim_io_latency_seconds_count{{file=\"{file}\"}} {count}"
        );
    }
}
