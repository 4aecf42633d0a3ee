//! The merged result of a run: per-file and per-actor figures, serialisable to JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::page::ActorKind;

use super::op::OpKind;
use super::timeline::TimelinePoint;

/// Latency percentiles, microseconds (all zero when nothing was recorded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Number of I/Os measured.
    pub count: u64,
    /// Fastest.
    pub min_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Slowest.
    pub max_us: f64,
}

/// I/O counts, volumes and rates of one file, one actor or the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpTotals {
    /// Plain reads completed.
    pub reads: u64,
    /// Scatter reads (`preadv`) completed.
    pub scatter_reads: u64,
    /// Plain writes completed.
    pub writes: u64,
    /// Gather writes (`pwritev`) completed.
    pub gather_writes: u64,
    /// Flushes completed.
    pub syncs: u64,
    /// Failed I/Os.
    pub errors: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Sum of all I/O durations, milliseconds (SQLIOSim's "Total IO Time (ms)").
    pub total_io_time_ms: u64,
    /// Reads and writes per second over the run.
    pub iops: f64,
    /// MB/s (2^20 bytes) read and written over the run.
    pub mb_per_s: f64,
    /// Latency of every I/O (reads, writes and flushes).
    pub latency: Latency,
    /// The same latencies as a histogram: HdrHistogram V2 serialization of nanoseconds,
    /// base64 ([`super::LatencyHistogram::to_v2_base64`]); merged across runs by
    /// `sqliosim report` (schema /2; absent in /1 documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_hdr: Option<String>,
}

impl OpTotals {
    /// Count of one kind of operation.
    pub fn count(&self, op: OpKind) -> u64 {
        match op {
            OpKind::Read => self.reads,
            OpKind::ScatterRead => self.scatter_reads,
            OpKind::Write => self.writes,
            OpKind::GatherWrite => self.gather_writes,
            OpKind::Sync => self.syncs,
        }
    }

    /// Reads and writes of every kind (flushes excluded).
    pub fn data_ops(&self) -> u64 {
        self.reads + self.scatter_reads + self.writes + self.gather_writes
    }

    /// Adds the counts, volumes, time and rates of `o` (a part of the same run, e.g. one file's):
    /// rates add because the parts ran over the same time. Latencies do not add; the caller
    /// merges histograms.
    pub fn add_counts(&mut self, o: &OpTotals) {
        self.reads += o.reads;
        self.scatter_reads += o.scatter_reads;
        self.writes += o.writes;
        self.gather_writes += o.gather_writes;
        self.syncs += o.syncs;
        self.errors += o.errors;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.total_io_time_ms += o.total_io_time_ms;
        self.iops += o.iops;
        self.mb_per_s += o.mb_per_s;
    }
}

/// Everything reported about one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    /// Index of the file in the run (as recorded).
    pub index: usize,
    /// Path of the file.
    pub path: String,
    /// SQLIOSim's sparse attribute: the configuration asked for a sparse file (the attribute
    /// stays once the file is filled, as NTFS's does), or the filesystem holds fewer bytes for
    /// it than its size (`space`).
    pub sparse: bool,
    /// Its size and what the filesystem holds for it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<FileSpace>,
    /// The TargetIODuration setting, milliseconds.
    pub target_io_duration_ms: u64,
    /// SQLIOSim's damped running-average I/O duration at the end, milliseconds.
    pub running_avg_io_ms: u64,
    /// Times I/O to the file was throttled.
    pub throttled: u64,
    /// Most I/Os outstanding at once ("IO request blocks").
    pub io_request_blocks: u64,
    /// Counts, volumes, rates and latency.
    pub io: OpTotals,
    /// Latency per kind of operation (only kinds that occurred).
    pub latency_by_op: BTreeMap<OpKind, Latency>,
    /// Reads and writes in flight to the file: most at once and time-weighted mean, over the
    /// run and per phase (schema /2; absent in /1 documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<super::DepthSummary>,
    /// The disk under the file at the end of the run, as SQLIOSim's DRIVE LEVEL lines say it
    /// (absent where there is no block device: tmpfs, FUSE, in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<DriveLevel>,
}

/// The block device under a file, from sysfs: its sector sizes, its write cache and its
/// counters since boot (for the whole device, not only the run's I/O, as SQLIOSim's are).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriveLevel {
    /// The device's name (`sda`, `nvme0n1p2`, `loop3`).
    pub device: String,
    /// Logical sector size, bytes.
    pub sector_size: u32,
    /// Physical sector size, bytes, when sysfs says.
    pub physical_sector_size: Option<u32>,
    /// The disk's volatile write cache is on (`queue/write_cache` says `write back`).
    pub write_cache: Option<bool>,
    /// `/sys/block/DEV/stat`, when readable.
    pub counters: Option<DriveCounters>,
}

/// A block device's I/O counters since boot (`/sys/block/DEV/stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriveCounters {
    /// Reads completed.
    pub reads: u64,
    /// Milliseconds spent reading.
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Milliseconds with I/O in flight (`io_ticks`).
    pub busy_ms: u64,
}

/// A file's size and the bytes its filesystem holds for it (`st_blocks` × 512): a sparse
/// file holds fewer; preallocation beyond the end, more.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSpace {
    /// The file's length, bytes.
    pub size_bytes: u64,
    /// The bytes allocated to it on the filesystem.
    pub allocated_bytes: u64,
}

impl FileSpace {
    /// True when the filesystem holds less than the file's length: it has holes.
    pub fn has_holes(&self) -> bool {
        self.allocated_bytes < self.size_bytes
    }
}

/// Everything reported about one kind of actor (all files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActorSummary {
    /// The actor kind.
    pub actor: ActorKind,
    /// Its SQLIOSim-style user name.
    pub name: String,
    /// Counts, volumes, rates and latency.
    pub io: OpTotals,
}

/// How the console and the HTML report name [`Summary::other`]'s line.
pub const OTHER_FILES: &str = "other files (backup streams, restore copies, tempdb, snapshots)";

/// The merged statistics of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Seconds from the run start to the summary.
    pub elapsed_s: f64,
    /// The whole run.
    pub total: OpTotals,
    /// One entry per file.
    pub files: Vec<FileSummary>,
    /// The I/O to files outside the set (backup and log backup streams, restore copies, a
    /// Sort User's tempdb file, DBCC snapshots): in `total`, in no entry of `files`, so that the
    /// lines add up. Absent when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<OpTotals>,
    /// One entry per actor kind that did I/O.
    pub actors: Vec<ActorSummary>,
    /// IOPS, MB/s and latency per time bucket.
    pub timeline: Vec<TimelinePoint>,
    /// Reads and writes in flight to all files together, over the run and per phase (schema
    /// /2; absent in /1 documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<super::DepthSummary>,
    /// The durability journal: its size, compactions, and whether it could be written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<crate::sim::engine::journal::JournalSummary>,
}
