//! Validated settings of one capacity run, whichever front end (bench, SQLIO, DiskSpd)
//! produced them, and the checks that make a combination runnable.

use super::error::BenchError;
use super::target::DATA_OFFSET;
use crate::io::aio::RingKind;
use serde::Serialize;
use std::path::PathBuf;

/// Random or sequential offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Uniform random block-aligned offsets.
    Random,
    /// Consecutive blocks, each thread starting at its own share of the file.
    Sequential,
}

impl Pattern {
    /// The name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Sequential => "sequential",
        }
    }
}

/// What write buffers hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Incompressible random bytes, stamped per 4 KiB sector.
    Random,
    /// Zeros (compressible, unstamped; incompatible with `--verify`).
    Zeros,
}

/// One test file and the size it must have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestFile {
    /// Path of the file.
    pub path: PathBuf,
    /// Total file size in bytes (header included).
    pub size: u64,
}

/// Everything a run needs, validated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    /// Test files.
    pub targets: Vec<TestFile>,
    /// Worker threads per file.
    pub threads_per_target: u32,
    /// Outstanding I/O per thread.
    pub depth: u32,
    /// Bytes per I/O.
    pub block_size: u32,
    /// Share of reads, 0..=100.
    pub read_pct: u8,
    /// Random or sequential.
    pub pattern: Pattern,
    /// Seconds of warm-up (not measured).
    pub warmup_s: f64,
    /// Seconds measured.
    pub duration_s: f64,
    /// Seconds of cool-down (not measured).
    pub cooldown_s: f64,
    /// O_DIRECT.
    pub direct: bool,
    /// O_DSYNC.
    pub write_through: bool,
    /// Write-buffer content.
    pub data: DataMode,
    /// Check the stamps of what is read.
    pub verify: bool,
    /// Total IOPS cap over all threads.
    pub rate_iops: Option<f64>,
    /// The ring kind asked for (`--engine`), or, once settled, the one the run uses.
    pub ring_kind: RingKind,
    /// `sqliosim bench`: settle the engine at the start of the run (the engine probe, issue
    /// #24 §3) and state why it runs. The sqlio and diskspd front ends keep theirs unstated.
    pub engine_probe: bool,
    /// `--engine` was given: the probe may recommend another engine but not switch.
    pub engine_named: bool,
    /// Why `ring_kind` runs, once settled (the first run of a sweep at each kind of queue,
    /// one request per thread or more, settles it for the rest of that kind).
    pub engine_why: Option<String>,
    /// io_uring: operations sent per `io_uring_enter` while refilling the queue (1 = each as
    /// soon as it is ready, like fio's default `iodepth_batch_submit`).
    pub submit_batch: u32,
    /// Measured I/O starts at this file offset (at least the 1 MiB header area).
    pub base_offset: u64,
    /// Measured I/O stays below this file offset (`None`: the end of the file).
    pub max_offset: Option<u64>,
    /// Overwrite files that are not ours.
    pub force: bool,
    /// Seed of the offset and read/write choices.
    pub seed: u64,
}

/// The error opening a block device for its size, if `path` is one that cannot be opened.
fn unreadable_device(path: &std::path::Path) -> Option<std::io::Error> {
    if !super::target::is_block_device(path) {
        return None;
    }
    std::fs::File::open(path).err()
}

impl Job {
    /// Number of worker threads over all files.
    pub fn threads(&self) -> u32 {
        self.threads_per_target * self.targets.len() as u32
    }

    /// Checks that the combination can run; the message names the switch at fault.
    pub fn validate(&self) -> Result<(), BenchError> {
        let usage = |m: String| Err(BenchError::Usage(m));
        if self.targets.is_empty() {
            return usage("no test file: give --file PATH or --dir DIR".into());
        }
        if self.block_size == 0 || !self.block_size.is_multiple_of(512) {
            return usage(format!(
                "block size {} is not a multiple of 512 bytes",
                self.block_size
            ));
        }
        if self.submit_batch == 0 {
            return usage("--submit-batch must be at least 1".into());
        }
        if self.threads_per_target == 0 || self.depth == 0 {
            return usage("threads and outstanding I/O must be at least 1".into());
        }
        if self.read_pct > 100 {
            return usage(format!("read percentage {} is above 100", self.read_pct));
        }
        if self.verify && !self.stamps_writes() {
            return usage(
                "--verify needs --data random, and a block size and base offset that are \
                 multiples of 4K"
                    .into(),
            );
        }
        if self.base_offset < DATA_OFFSET || !self.base_offset.is_multiple_of(512) {
            return usage(format!(
                "base offset {} must be a multiple of 512 and at least 1 MiB (the first MiB \
                 holds the file's header)",
                self.base_offset
            ));
        }
        for t in &self.targets {
            let (start, end) = self.region(t.size);
            if end < start + u64::from(self.block_size) {
                // A device whose size cannot be read looks 0 bytes long: say why instead.
                if let Some(e) = unreadable_device(&t.path) {
                    return usage(format!(
                        "{}: cannot read the device's size: {e}; run as a user who may read \
                         it (root, or the disk group)",
                        t.path.display()
                    ));
                }
                return usage(format!(
                    "{}: the region [{start}, {end}) of a {}-byte file has no room for one \
                     {}-byte block (the first MiB holds the file's header)",
                    t.path.display(),
                    t.size,
                    self.block_size
                ));
            }
        }
        if self.rate_iops.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return usage("--rate-iops must be a positive number of I/Os per second".into());
        }
        if self.duration_s <= 0.0 {
            return usage("the measured duration must be above zero".into());
        }
        Ok(())
    }

    /// The measured region `[start, end)` of a file of `size` bytes.
    pub fn region(&self, size: u64) -> (u64, u64) {
        let end = self.max_offset.map_or(size, |m| m.min(size));
        (self.base_offset, end.max(self.base_offset))
    }

    /// Whether writes get 4 KiB stamps.
    pub fn stamps_writes(&self) -> bool {
        self.data == DataMode::Random
            && self.block_size.is_multiple_of(4096)
            && self.base_offset.is_multiple_of(4096)
    }

    /// A job with common defaults on one file, for tests and front ends to adjust.
    pub fn with_defaults(path: PathBuf, size: u64) -> Job {
        Job {
            targets: vec![TestFile { path, size }],
            threads_per_target: 1,
            depth: 1,
            block_size: 8192,
            read_pct: 100,
            pattern: Pattern::Random,
            warmup_s: 0.0,
            duration_s: 10.0,
            cooldown_s: 0.0,
            direct: true,
            write_through: false,
            data: DataMode::Random,
            verify: false,
            rate_iops: None,
            ring_kind: RingKind::Uring,
            engine_probe: false,
            engine_named: false,
            engine_why: None,
            submit_batch: 1,
            base_offset: DATA_OFFSET,
            max_offset: None,
            force: false,
            seed: 0x5eed,
        }
    }
}
