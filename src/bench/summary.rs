//! The figures of one run in a serialisable form (JSON, CSV, tables): IOPS, MB/s, latency
//! summaries for reads, writes and both, CPU time per I/O, the per-second timeline, and the
//! facts that make the numbers honest.

use super::latency::LatencySummary;
use super::run::{RunResult, TargetInfo};
use serde::Serialize;

/// Summary of one run.
#[derive(Debug, Clone, Serialize)]
pub struct BenchSummary {
    /// Files, sizes and direct-I/O facts.
    pub targets: Vec<TargetInfo>,
    /// Bytes per I/O.
    pub block_size: u32,
    /// "random" or "sequential".
    pub pattern: &'static str,
    /// Share of reads.
    pub read_pct: u8,
    /// Worker threads.
    pub threads: u32,
    /// Outstanding I/O per thread.
    pub outstanding: u32,
    /// Total queue depth (threads × outstanding).
    pub queue_depth: u32,
    /// The ring kind used (`uring`, `psync` or `libaio`; the JSON and CSV `engine`).
    pub engine: &'static str,
    /// Why that engine: the default, named by `--engine`, or chosen by the engine probe, with
    /// what the probe measured (issue #24 §3); absent from the sqlio and diskspd front ends.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub engine_why: String,
    /// O_DIRECT requested.
    pub direct: bool,
    /// O_DSYNC requested.
    pub write_through: bool,
    /// Seconds measured.
    pub measured_s: f64,
    /// Ended early by Ctrl-C.
    pub interrupted: bool,
    /// Completed I/Os.
    pub ios: u64,
    /// I/O per second.
    pub iops: f64,
    /// Megabytes (10^6) per second.
    pub mb_per_s: f64,
    /// Mebibytes per second.
    pub mib_per_s: f64,
    /// Read latency, µs.
    pub read_latency: Option<LatencySummary>,
    /// Write latency, µs.
    pub write_latency: Option<LatencySummary>,
    /// All latencies, µs.
    pub latency: Option<LatencySummary>,
    /// Process CPU seconds (user + system) during the window.
    pub cpu_s: f64,
    /// Process CPU microseconds per I/O.
    pub cpu_us_per_io: f64,
    /// Failed operations.
    pub errors: u64,
    /// The first failed operation, if any.
    pub first_error: Option<String>,
    /// Reads that failed verification.
    pub verify_failures: u64,
    /// The first verification failures (up to ten per thread), naming file and offset.
    pub verify_samples: Vec<String>,
    /// I/Os completed in each second of the window.
    pub timeline: Vec<u64>,
    /// Honesty warnings.
    pub warnings: Vec<String>,
}

impl BenchSummary {
    /// Summarises `r`.
    pub fn of(r: &RunResult) -> BenchSummary {
        let t = &r.total;
        let secs = r.measured_s.max(1e-9);
        let ios = t.ios();
        let cpu_s = r.cpu.process_s();
        BenchSummary {
            targets: r.targets.clone(),
            block_size: r.job.block_size,
            pattern: r.job.pattern.name(),
            read_pct: r.job.read_pct,
            threads: r.job.threads(),
            outstanding: r.job.depth,
            queue_depth: r.job.threads() * r.job.depth,
            engine: r.ring_kind.name(),
            engine_why: r.job.engine_why.clone().unwrap_or_default(),
            direct: r.job.direct,
            write_through: r.job.write_through,
            measured_s: r.measured_s,
            interrupted: r.interrupted,
            ios,
            iops: if r.measured_s > 0.0 {
                ios as f64 / secs
            } else {
                0.0
            },
            mb_per_s: if r.measured_s > 0.0 {
                t.bytes() as f64 / secs / 1e6
            } else {
                0.0
            },
            mib_per_s: if r.measured_s > 0.0 {
                t.bytes() as f64 / secs / 1048576.0
            } else {
                0.0
            },
            read_latency: LatencySummary::of(&t.read),
            write_latency: LatencySummary::of(&t.write),
            latency: LatencySummary::of(&t.total()),
            cpu_s,
            cpu_us_per_io: if ios > 0 {
                cpu_s * 1e6 / ios as f64
            } else {
                0.0
            },
            errors: t.errors,
            first_error: t.first_error.clone(),
            verify_failures: t.verify_failures,
            verify_samples: t.verify_samples.clone(),
            timeline: t.timeline.clone(),
            warnings: r.warnings.clone(),
        }
    }

    /// The workload in words: "8 KiB random read" and so on.
    pub fn rw_name(&self) -> String {
        match self.read_pct {
            100 => "read".into(),
            0 => "write".into(),
            p => format!("mix{p}"),
        }
    }

    /// Latency at percentile `p` over all I/O, µs (0 when nothing completed).
    pub fn pct(&self, p: f64) -> f64 {
        self.latency.as_ref().and_then(|l| l.at(p)).unwrap_or(0.0)
    }

    /// Mean latency over all I/O, µs.
    pub fn avg(&self) -> f64 {
        self.latency.as_ref().map(|l| l.avg_us).unwrap_or(0.0)
    }
}
