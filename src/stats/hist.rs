//! A latency histogram (hdrhistogram) with fixed bounds, and its percentile summary.

use hdrhistogram::Histogram;

use super::summary::Latency;

/// Highest latency tracked precisely: one hour, in nanoseconds; longer ones are clamped.
const MAX_NS: u64 = 3_600_000_000_000;
/// Two significant figures (1 % error) keep one histogram near 40 KB.
const SIGFIG: u8 = 2;

/// Latencies in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram from 1 ns to one hour.
    pub fn new() -> LatencyHistogram {
        let h = Histogram::new_with_bounds(1, MAX_NS, SIGFIG)
            .expect("constant histogram bounds are valid");
        LatencyHistogram { h }
    }

    /// Records one latency (clamped to the tracked range).
    pub fn record(&mut self, latency_ns: u64) {
        self.h.saturating_record(latency_ns.max(1));
    }

    /// Adds every value of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.h.add(&other.h);
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Percentile summary, in microseconds.
    pub fn latency(&self) -> Latency {
        if self.h.is_empty() {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            count: self.h.len(),
            min_us: us(self.h.min()),
            mean_us: self.h.mean() / 1000.0,
            p50_us: us(self.h.value_at_quantile(0.50)),
            p90_us: us(self.h.value_at_quantile(0.90)),
            p99_us: us(self.h.value_at_quantile(0.99)),
            p999_us: us(self.h.value_at_quantile(0.999)),
            max_us: us(self.h.max()),
        }
    }
}
