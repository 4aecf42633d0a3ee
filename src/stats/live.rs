//! Live totals shared by every worker, read by the progress monitor.
//!
//! Workers add with `Relaxed` atomics; the monitor takes two snapshots and divides the
//! difference by the time between them. The figures are approximate by design: they are for a
//! progress line, the exact figures come from the merged [`super::ThreadStats`].

use std::ops::Sub;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Atomic totals of the whole run, updated by every [`super::ThreadStats`] that shares them.
#[derive(Debug, Default)]
pub struct LiveCounters {
    reads: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    errors: AtomicU64,
    throttles: AtomicU64,
    latency_ns: AtomicU64,
    findings: AtomicU64,
    /// I/Os by latency: bucket i counts latencies below 2^i µs (the last one everything above).
    lat_log2: [AtomicU64; LAT_BUCKETS],
}

/// Buckets of the coarse live latency histogram.
const LAT_BUCKETS: usize = 32;

fn lat_bucket(latency_ns: u64) -> usize {
    let us = latency_ns / 1000;
    ((64 - us.leading_zeros()) as usize).min(LAT_BUCKETS - 1)
}

/// A copy of the live totals at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveSnapshot {
    /// Reads completed (plain and scatter).
    pub reads: u64,
    /// Writes completed (plain and gather).
    pub writes: u64,
    /// Flushes completed.
    pub syncs: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// Times I/O was throttled.
    pub throttles: u64,
    /// Sum of the latencies of all I/Os, nanoseconds.
    pub latency_ns: u64,
    /// Integrity findings reported (see [`LiveCounters::add_finding`]).
    pub findings: u64,
    /// I/Os by latency, bucket i: below 2^i µs.
    pub lat_log2: [u64; LAT_BUCKETS],
}

impl LiveCounters {
    /// Fresh zeroed counters.
    pub fn new() -> LiveCounters {
        LiveCounters::default()
    }

    pub(crate) fn add_io(&self, read: bool, write: bool, bytes: u64, latency_ns: u64) {
        if read {
            self.reads.fetch_add(1, Relaxed);
            self.bytes_read.fetch_add(bytes, Relaxed);
        } else if write {
            self.writes.fetch_add(1, Relaxed);
            self.bytes_written.fetch_add(bytes, Relaxed);
        } else {
            self.syncs.fetch_add(1, Relaxed);
        }
        self.latency_ns.fetch_add(latency_ns, Relaxed);
        self.lat_log2[lat_bucket(latency_ns)].fetch_add(1, Relaxed);
    }

    pub(crate) fn add_error(&self) {
        self.errors.fetch_add(1, Relaxed);
    }

    pub(crate) fn add_throttle(&self) {
        self.throttles.fetch_add(1, Relaxed);
    }

    /// Counts one integrity finding (called by whoever emits findings).
    pub fn add_finding(&self) {
        self.findings.fetch_add(1, Relaxed);
    }

    /// Reads every counter (each one atomically; the set is not a consistent cut).
    pub fn snapshot(&self) -> LiveSnapshot {
        LiveSnapshot {
            reads: self.reads.load(Relaxed),
            writes: self.writes.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            bytes_read: self.bytes_read.load(Relaxed),
            bytes_written: self.bytes_written.load(Relaxed),
            errors: self.errors.load(Relaxed),
            throttles: self.throttles.load(Relaxed),
            latency_ns: self.latency_ns.load(Relaxed),
            findings: self.findings.load(Relaxed),
            lat_log2: std::array::from_fn(|i| self.lat_log2[i].load(Relaxed)),
        }
    }
}

impl LiveSnapshot {
    /// I/O operations (reads, writes, flushes).
    pub fn ops(&self) -> u64 {
        self.reads + self.writes + self.syncs
    }

    /// Mean latency over the I/Os counted, milliseconds (0 when none).
    pub fn mean_latency_ms(&self) -> f64 {
        match self.ops() {
            0 => 0.0,
            n => self.latency_ns as f64 / n as f64 / 1e6,
        }
    }

    /// Upper bound of the 99th-percentile latency in ms (to a factor of two: the live
    /// histogram has power-of-two buckets); 0 when no I/O was counted.
    pub fn p99_ms_bound(&self) -> f64 {
        let total: u64 = self.lat_log2.iter().sum();
        let want = total - total / 100;
        let mut seen = 0;
        for (i, n) in self.lat_log2.iter().enumerate() {
            seen += n;
            if total > 0 && seen >= want {
                return (1u64 << i) as f64 / 1000.0;
            }
        }
        0.0
    }

    /// Operations per second, when this snapshot is a difference over `secs` seconds.
    pub fn iops(&self, secs: f64) -> f64 {
        rate(self.reads + self.writes, secs)
    }

    /// MB/s (2^20 bytes) read and written, when this is a difference over `secs` seconds.
    pub fn mb_per_s(&self, secs: f64) -> f64 {
        rate(self.bytes_read + self.bytes_written, secs) / 1_048_576.0
    }
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

impl Sub for LiveSnapshot {
    type Output = LiveSnapshot;

    /// The activity between two snapshots (`later - earlier`), saturating at zero.
    fn sub(self, e: LiveSnapshot) -> LiveSnapshot {
        LiveSnapshot {
            reads: self.reads.saturating_sub(e.reads),
            writes: self.writes.saturating_sub(e.writes),
            syncs: self.syncs.saturating_sub(e.syncs),
            bytes_read: self.bytes_read.saturating_sub(e.bytes_read),
            bytes_written: self.bytes_written.saturating_sub(e.bytes_written),
            errors: self.errors.saturating_sub(e.errors),
            throttles: self.throttles.saturating_sub(e.throttles),
            latency_ns: self.latency_ns.saturating_sub(e.latency_ns),
            findings: self.findings.saturating_sub(e.findings),
            lat_log2: std::array::from_fn(|i| self.lat_log2[i].saturating_sub(e.lat_log2[i])),
        }
    }
}

#[cfg(test)]
mod p99_tests {
    use super::*;

    #[test]
    fn p99_bound_covers_the_slowest_percent() {
        let live = LiveCounters::new();
        for _ in 0..990 {
            live.add_io(true, false, 8192, 50_000);
        }
        for _ in 0..10 {
            live.add_io(true, false, 8192, 5_000_000);
        }
        let s = live.snapshot();
        let p99 = s.p99_ms_bound();
        assert!((0.05..=0.128).contains(&p99), "{p99}");
        for _ in 0..20 {
            live.add_io(true, false, 8192, 5_000_000);
        }
        let p99 = live.snapshot().p99_ms_bound();
        assert!((5.0..=8.2).contains(&p99), "{p99}");
        assert_eq!(LiveSnapshot::default().p99_ms_bound(), 0.0);
    }
}
