//! Per-thread latency histograms and counters for capacity runs, merged once at the end so
//! the hot path takes no lock; summaries (min, mean, percentiles down to 9-nines, max) in
//! microseconds.

use crate::io::aio::Direction;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Percentiles reported everywhere, with DiskSpd's labels.
pub const PERCENTILES: [(f64, &str); 13] = [
    (25.0, "25th"),
    (50.0, "50th"),
    (75.0, "75th"),
    (90.0, "90th"),
    (95.0, "95th"),
    (99.0, "99th"),
    (99.9, "3-nines"),
    (99.99, "4-nines"),
    (99.999, "5-nines"),
    (99.9999, "6-nines"),
    (99.99999, "7-nines"),
    (99.999999, "8-nines"),
    (99.9999999, "9-nines"),
];

/// One hour in nanoseconds: the largest latency the histograms track exactly.
const MAX_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds with 3 significant digits (0.1 % relative error).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("constant histogram bounds are valid")
}

/// Counters and histograms of one worker thread (or of several, once merged).
#[derive(Debug, Clone)]
pub struct BenchStats {
    /// Read latencies, ns.
    pub read: Histogram<u64>,
    /// Write latencies, ns.
    pub write: Histogram<u64>,
    /// Reads completed in the measured window.
    pub read_ios: u64,
    /// Writes completed in the measured window.
    pub write_ios: u64,
    /// Bytes read in the measured window.
    pub read_bytes: u64,
    /// Bytes written in the measured window.
    pub write_bytes: u64,
    /// Operations that failed (errno or short transfer), whatever the phase.
    pub errors: u64,
    /// The first failure, for the report.
    pub first_error: Option<String>,
    /// The first request the platform refused, or that met a vanished device or a full
    /// filesystem (not a failed I/O of the device): the run stops and exits 2.
    pub refused: Option<String>,
    /// Reads whose content did not match its stamp (with `--verify`).
    pub verify_failures: u64,
    /// Descriptions of the first few verification failures.
    pub verify_samples: Vec<String>,
    /// Completions per second of the measured window.
    pub timeline: Vec<u64>,
    /// Reads completed per second of the measured window.
    pub read_timeline: Vec<u64>,
}

impl Default for BenchStats {
    fn default() -> Self {
        BenchStats {
            read: new_histogram(),
            write: new_histogram(),
            read_ios: 0,
            write_ios: 0,
            read_bytes: 0,
            write_bytes: 0,
            errors: 0,
            first_error: None,
            refused: None,
            verify_failures: 0,
            verify_samples: Vec::new(),
            timeline: Vec::new(),
            read_timeline: Vec::new(),
        }
    }
}

impl BenchStats {
    /// Records one completion of the measured window, `second` seconds into it.
    pub fn record(&mut self, kind: Direction, latency_ns: u64, bytes: u64, second: usize) {
        match kind {
            Direction::Read => {
                self.read.saturating_record(latency_ns.max(1));
                self.read_ios += 1;
                self.read_bytes += bytes;
            }
            Direction::Write => {
                self.write.saturating_record(latency_ns.max(1));
                self.write_ios += 1;
                self.write_bytes += bytes;
            }
        }
        bump(&mut self.timeline, second);
        if kind == Direction::Read {
            bump(&mut self.read_timeline, second);
        }
    }

    /// Records a failed operation.
    pub fn record_error(&mut self, what: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what);
        }
    }

    /// Records a verification failure, keeping the first ten descriptions.
    pub fn record_mismatch(&mut self, what: String) {
        self.verify_failures += 1;
        if self.verify_samples.len() < 10 {
            self.verify_samples.push(what);
        }
    }

    /// Adds `other` into `self` (histograms, counters, timeline second by second).
    pub fn merge(&mut self, other: &BenchStats) {
        // Both histograms share the same bounds, so `add` cannot fail.
        let _ = self.read.add(&other.read);
        let _ = self.write.add(&other.write);
        self.read_ios += other.read_ios;
        self.write_ios += other.write_ios;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        if self.refused.is_none() {
            self.refused.clone_from(&other.refused);
        }
        self.verify_failures += other.verify_failures;
        for s in &other.verify_samples {
            if self.verify_samples.len() < 10 {
                self.verify_samples.push(s.clone());
            }
        }
        add_series(&mut self.timeline, &other.timeline);
        add_series(&mut self.read_timeline, &other.read_timeline);
    }

    /// Writes completed per second of the measured window.
    pub fn write_timeline(&self) -> Vec<u64> {
        let reads = self.read_timeline.iter().chain(std::iter::repeat(&0));
        self.timeline
            .iter()
            .zip(reads)
            .map(|(t, r)| t - r)
            .collect()
    }

    /// Read and write latencies together.
    pub fn total(&self) -> Histogram<u64> {
        let mut h = self.read.clone();
        let _ = h.add(&self.write);
        h
    }

    /// All operations completed in the measured window.
    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }

    /// All bytes moved in the measured window.
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }
}

fn bump(series: &mut Vec<u64>, second: usize) {
    if second >= series.len() {
        series.resize(second + 1, 0);
    }
    series[second] += 1;
}

fn add_series(into: &mut Vec<u64>, other: &[u64]) {
    if other.len() > into.len() {
        into.resize(other.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a += b;
    }
}

/// Latency figures of one histogram, in microseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Smallest latency.
    pub min_us: f64,
    /// Mean latency.
    pub avg_us: f64,
    /// Standard deviation.
    pub stdev_us: f64,
    /// Percentiles, in the order of [`PERCENTILES`]: (percentile, latency).
    pub percentiles: Vec<(f64, f64)>,
    /// Largest latency.
    pub max_us: f64,
}

impl LatencySummary {
    /// Summarises `h`, or `None` when it holds no sample.
    pub fn of(h: &Histogram<u64>) -> Option<LatencySummary> {
        if h.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Some(LatencySummary {
            count: h.len(),
            min_us: us(h.min()),
            avg_us: h.mean() / 1000.0,
            stdev_us: h.stdev() / 1000.0,
            percentiles: PERCENTILES
                .iter()
                .map(|&(p, _)| (p, us(h.value_at_quantile(p / 100.0))))
                .collect(),
            max_us: us(h.max()),
        })
    }

    /// The latency at percentile `p` (one of [`PERCENTILES`]), if listed.
    pub fn at(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (*q - p).abs() < 1e-9)
            .map(|&(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1..=1_000_000 ns, each once: percentile p sits at p × 10_000 ns.
    #[test]
    fn percentiles_match_a_uniform_distribution() {
        let mut stats = BenchStats::default();
        for ns in 1..=1_000_000u64 {
            stats.record(Direction::Read, ns, 8192, 0);
        }
        let s = LatencySummary::of(&stats.read).expect("samples");
        assert_eq!(s.count, 1_000_000);
        for &(p, _) in &PERCENTILES[..7] {
            let expected_us = p * 10.0;
            let got = s.at(p).expect("listed");
            assert!(
                (got - expected_us).abs() / expected_us < 0.002,
                "p{p}: {got} vs {expected_us}"
            );
        }
        assert!((s.avg_us - 500.0).abs() < 1.0, "avg {}", s.avg_us);
        assert!(s.min_us <= 0.001 + 1e-9 && (s.max_us - 1000.0).abs() < 1.0);
    }

    /// 99 % of samples at 100 µs and 1 % at 10 ms: p99 is still fast, 3-nines is slow.
    #[test]
    fn tail_percentiles_see_the_slow_percent() {
        let mut a = BenchStats::default();
        let mut b = BenchStats::default();
        for i in 0..100_000u64 {
            let t = if i % 100 == 0 { &mut b } else { &mut a };
            t.record(
                Direction::Write,
                if i % 100 == 0 { 10_000_000 } else { 100_000 },
                4096,
                1,
            );
        }
        a.merge(&b);
        let s = LatencySummary::of(&a.write).expect("samples");
        assert!((s.at(99.0).expect("p99") - 100.0).abs() < 0.2);
        assert!((s.at(99.9).expect("p99.9") - 10_000.0).abs() < 10.0);
        assert_eq!(a.write_ios, 100_000);
        assert_eq!(a.timeline, vec![0, 100_000]);
        assert_eq!(a.write_timeline(), vec![0, 100_000]);
        assert!(a.read_timeline.is_empty());
        assert!(LatencySummary::of(&a.read).is_none());
    }
}
