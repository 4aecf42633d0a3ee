//! The per-second timeline: I/O counts per time bucket since the start of the run.
//!
//! Buckets start one second wide. To stay bounded on long runs, when the timeline would exceed
//! [`MAX_BUCKETS`] buckets, neighbouring buckets are merged and the width doubles (1 s, 2 s,
//! 4 s, …), so memory per thread never exceeds a few hundred kilobytes.

use serde::{Deserialize, Serialize};

use super::op::OpKind;

/// Most buckets kept before the width doubles (at 1 s: a little over two hours).
pub const MAX_BUCKETS: usize = 8192;

/// The activity in one time bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimelineBucket {
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Flushes completed.
    pub syncs: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// Sum of latencies, nanoseconds.
    pub latency_ns: u64,
}

impl TimelineBucket {
    fn add(&mut self, o: &TimelineBucket) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.syncs += o.syncs;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.errors += o.errors;
        self.latency_ns += o.latency_ns;
    }
}

/// Time buckets of equal width since the run start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline {
    width_s: u64,
    buckets: Vec<TimelineBucket>,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            width_s: 1,
            buckets: Vec::new(),
        }
    }
}

/// One point of the timeline as reported (rates over the bucket).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Start of the bucket, seconds since the run start.
    pub t_s: u64,
    /// Width of the bucket, seconds.
    pub width_s: u64,
    /// Reads and writes per second.
    pub iops: f64,
    /// MB/s (2^20 bytes) read.
    pub read_mb_s: f64,
    /// MB/s (2^20 bytes) written.
    pub write_mb_s: f64,
    /// Mean latency of the I/Os completed in the bucket, microseconds.
    pub mean_latency_us: f64,
    /// Failed I/Os in the bucket.
    pub errors: u64,
    /// Most reads and writes in flight at once in the bucket, all files together (schema /2;
    /// 0 in /1 documents).
    #[serde(default)]
    pub inflight_max: u64,
    /// Time-weighted mean of the reads and writes in flight in the bucket, all files together
    /// (∫ in-flight dt ÷ bucket width; schema /2).
    #[serde(default)]
    pub inflight_mean: f64,
}

impl Timeline {
    /// Width of a bucket, seconds.
    pub fn width_s(&self) -> u64 {
        self.width_s
    }

    /// The raw buckets.
    pub fn buckets(&self) -> &[TimelineBucket] {
        &self.buckets
    }

    /// The bucket holding second `secs`, created (and the timeline coarsened) as needed.
    fn bucket(&mut self, secs: u64) -> &mut TimelineBucket {
        while secs / self.width_s >= MAX_BUCKETS as u64 {
            self.coarsen(self.width_s * 2);
        }
        let idx = (secs / self.width_s) as usize;
        if self.buckets.len() <= idx {
            self.buckets.resize(idx + 1, TimelineBucket::default());
        }
        &mut self.buckets[idx]
    }

    /// Records one completed I/O at `secs` since the run start.
    pub fn record(&mut self, secs: u64, op: OpKind, bytes: u64, latency_ns: u64) {
        let b = self.bucket(secs);
        match op {
            o if o.is_read() => {
                b.reads += 1;
                b.bytes_read += bytes;
            }
            o if o.is_write() => {
                b.writes += 1;
                b.bytes_written += bytes;
            }
            _ => b.syncs += 1,
        }
        b.latency_ns += latency_ns;
    }

    /// Records one failed I/O at `secs` since the run start.
    pub fn record_error(&mut self, secs: u64) {
        self.bucket(secs).errors += 1;
    }

    /// Re-buckets to `width_s` (a multiple of the current width).
    fn coarsen(&mut self, width_s: u64) {
        if width_s <= self.width_s {
            return;
        }
        let factor = (width_s / self.width_s).max(1) as usize;
        let mut merged = vec![TimelineBucket::default(); self.buckets.len().div_ceil(factor)];
        for (i, b) in self.buckets.iter().enumerate() {
            merged[i / factor].add(b);
        }
        self.buckets = merged;
        self.width_s = width_s;
    }

    /// Zeroes every bucket, keeping the width (a worker's flush, see `stats::board`).
    pub fn clear(&mut self) {
        self.buckets.clear();
    }

    /// Adds another thread's timeline (same run start) into this one. The other one is copied
    /// only when it is finer (the board merges a flush of every worker every second).
    pub fn merge(&mut self, other: &Timeline) {
        if other.width_s < self.width_s {
            let mut finer = other.clone();
            finer.coarsen(self.width_s);
            return self.add_same_width(&finer);
        }
        self.coarsen(other.width_s);
        self.add_same_width(other);
    }

    fn add_same_width(&mut self, other: &Timeline) {
        if self.buckets.len() < other.buckets.len() {
            self.buckets
                .resize(other.buckets.len(), TimelineBucket::default());
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            mine.add(theirs);
        }
    }

    /// The timeline as rates per bucket.
    pub fn points(&self) -> Vec<TimelinePoint> {
        let w = self.width_s as f64;
        self.buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let ops = b.reads + b.writes + b.syncs;
                TimelinePoint {
                    t_s: i as u64 * self.width_s,
                    width_s: self.width_s,
                    iops: (b.reads + b.writes) as f64 / w,
                    read_mb_s: b.bytes_read as f64 / w / 1_048_576.0,
                    write_mb_s: b.bytes_written as f64 / w / 1_048_576.0,
                    mean_latency_us: if ops == 0 {
                        0.0
                    } else {
                        b.latency_ns as f64 / ops as f64 / 1000.0
                    },
                    errors: b.errors,
                    inflight_max: 0,
                    inflight_mean: 0.0,
                }
            })
            .collect()
    }
}
