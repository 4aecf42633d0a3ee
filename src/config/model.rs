//! The typed configuration: one struct per INI section, every field with its SQLIOSim default
//! and allowed range. Values here are already checked and resolved (user counts are concrete
//! numbers, `CPUCount` and `MaxMemoryMB` are filled in from the machine when absent).

use std::path::PathBuf;

/// A ratio written as percent × 100, as SQLIOSim does: 1000 = 10 %, 10000 = 100 %.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Ratio(u16);

impl Ratio {
    /// The largest value, 100 %.
    pub const MAX: u16 = 10000;

    /// A ratio from its ×100 value; `None` above 10000.
    pub fn new(hundredths_of_percent: u16) -> Option<Self> {
        (hundredths_of_percent <= Self::MAX).then_some(Ratio(hundredths_of_percent))
    }

    /// A ratio from its ×100 value, values above 10000 taken as 10000 (for built-in defaults).
    pub fn clamped(hundredths_of_percent: u16) -> Self {
        Ratio(hundredths_of_percent.min(Self::MAX))
    }

    /// The value as written in the INI file (percent × 100).
    pub fn raw(self) -> u16 {
        self.0
    }

    /// The ratio as a fraction in 0.0..=1.0.
    pub fn fraction(self) -> f64 {
        f64::from(self.0) / f64::from(Self::MAX)
    }

    /// The ratio as a percentage in 0.0..=100.0.
    pub fn percent(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Config {
    /// `[CONFIG]`.
    pub general: General,
    /// `[RandomUser]`.
    pub random: RandomUser,
    /// `[AuditUser]`.
    pub audit: AuditUser,
    /// `[ReadAheadUser]`.
    pub read_ahead: ReadAheadUser,
    /// `[BulkUpdateUser]`.
    pub bulk_update: BulkUpdateUser,
    /// `[ShrinkUser]`.
    pub shrink: ShrinkUser,
    /// `[File1]`..`[FileN]` in order of N. After `RunSettings::resolve` the paths are absolute
    /// and there is at least one data file and one log file.
    pub files: Vec<FileSpec>,
}

/// `[CONFIG]`: global behaviour.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct General {
    /// `ErrorFile`: XML error log name, default `sqliosim.log.xml`; `-log` overrides it.
    pub error_file: String,
    /// `CPUCount`: logical CPUs (schedulers), default the available parallelism capped at 64;
    /// range 1..=64.
    pub cpu_count: u32,
    /// `Affinity`: CPU mask for the schedulers, default 0 (all CPUs); bits must name existing CPUs.
    pub affinity: u64,
    /// `IOAffinity`: I/O CPU mask (undocumented in SQLIOSim), default 0; same rule as `affinity`.
    pub io_affinity: u64,
    /// `MaxMemoryMB`: simulated buffer pool in MB, default MemAvailable from /proc/meminfo;
    /// range 1..=MemTotal.
    pub max_memory_mb: u64,
    /// `StopOnError`: stop at the first integrity error, default true.
    pub stop_on_error: bool,
    /// `TestCycles`: number of cycles, default 1; 0 = run until stopped.
    pub test_cycles: u32,
    /// `TestCycleDuration`: seconds per cycle (audit pass not counted), default 300; range
    /// 1..=31536000 (a year).
    pub test_cycle_duration_s: u64,
    /// `CacheHitRatio`: simulated buffer-pool read hit ratio, default 1000 (10 %); 0..=10000.
    pub cache_hit_ratio: Ratio,
    /// `NoBuffering`: open files with O_DIRECT, default true. Forced true by `use_scatter_gather`.
    pub no_buffering: bool,
    /// `WriteThrough`: open files with O_DSYNC, default true.
    pub write_through: bool,
    /// `MaxOutstandingIO`: process-wide cap on outstanding I/Os, default 0 (= 140000);
    /// range 0..=140000.
    pub max_outstanding_io: u32,
    /// `TargetIODuration`: throttling target in ms, default 100; range 1..=4294967295.
    pub target_io_duration_ms: u32,
    /// `AllowIOBursts`: no throttling during initial update and checkpoints, default true.
    pub allow_io_bursts: bool,
    /// `UseScatterGather` (or `ScatterGather`): preadv/pwritev of many pages, default true.
    pub use_scatter_gather: bool,
    /// `ForceReadAhead`: read ahead even pages already cached, default true.
    pub force_read_ahead: bool,
    /// `DeleteFilesAtStartup`: delete the test files before starting, default true.
    pub delete_files_at_startup: bool,
    /// `DeleteFilesAtShutdown`: delete the test files at the end, default false.
    pub delete_files_at_shutdown: bool,
    /// `StampFiles`: grow files by writing zeros instead of fallocate, default false.
    pub stamp_files: bool,
}

/// `[RandomUser]`: OLTP-style random readers/writers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RandomUser {
    /// `UserCount`: threads, default -1 = min(CPUCount*2, 8); 0 = none; at most CPUCount*1023-100.
    pub user_count: u32,
    /// `JumpToNewRegionPercentage`: chance of moving to a new region, default 500 (5 %).
    pub jump_to_new_region: Ratio,
    /// `MinIOChainLength`: smallest region in pages, default 1 (the samples use 50); ≤ max.
    pub min_io_chain_length: u32,
    /// `MaxIOChainLength`: largest region in pages, default 100; must fit the smallest data file
    /// and the buffer pool.
    pub max_io_chain_length: u32,
    /// `RandomUserReadWriteRatio`: share of a chain's pages updated, default 9000 (90 %).
    pub read_write_ratio: Ratio,
    /// `MinLogPerBuffer`: smallest log record in bytes, default 64; range 1..=64000, ≤ max.
    pub min_log_per_buffer: u32,
    /// `MaxLogPerBuffer`: largest log record in bytes, default 8192; range 1..=64000.
    pub max_log_per_buffer: u32,
    /// `RollbackChance`: chance an operation rolls back in memory, default 100 (1 %).
    pub rollback_chance: Ratio,
    /// `SleepAfter`: ms to sleep after each cycle, default 5.
    pub sleep_after_ms: u32,
    /// `YieldPercentage`: chance of yielding the scheduler (undocumented), default 0.
    pub yield_percentage: Ratio,
    /// `CPUSimulation`: simulate CPU work (undocumented), default false.
    pub cpu_simulation: bool,
    /// `CPUCyclesMin`: simulated CPU cycles per operation, minimum (undocumented), default 0.
    pub cpu_cycles_min: u32,
    /// `CPUCyclesMax`: simulated CPU cycles per operation, maximum (undocumented), default 0.
    pub cpu_cycles_max: u32,
}

/// `[AuditUser]`: DBCC-style readers that validate pages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuditUser {
    /// `UserCount`: threads, default 2; -1 = min(CPUCount*2, 8); 0 = none (the end-of-cycle
    /// audit still runs).
    pub user_count: u32,
    /// `BuffersValidated`: pages validated per cycle, default 64; must fit the smallest data file.
    pub buffers_validated: u32,
    /// `DelayAfterCycles`: apply `audit_delay_ms` after this many cycles, default 2; 0 = never.
    pub delay_after_cycles: u32,
    /// `AuditDelay`: pause in ms, default 200.
    pub audit_delay_ms: u32,
}

/// `[ReadAheadUser]`: sequential read-ahead scanners.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReadAheadUser {
    /// `UserCount`: threads, default 2; -1 = automatic; 0 = none.
    pub user_count: u32,
    /// `BuffersRAMin`: fewest pages per read-ahead, default 32; ≤ max.
    pub buffers_min: u32,
    /// `BuffersRAMax`: most pages per read-ahead, default 64; must fit the smallest data file.
    pub buffers_max: u32,
    /// `DelayAfterCycles`: apply `ra_delay_ms` after this many cycles, default 2; 0 = never.
    pub delay_after_cycles: u32,
    /// `RADelay`: pause in ms, default 200.
    pub ra_delay_ms: u32,
}

/// `[BulkUpdateUser]`: SELECT INTO / BULK INSERT-style writers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BulkUpdateUser {
    /// `UserCount`: threads, default -1 = min(CPUCount*2, 8); 0 = none.
    pub user_count: u32,
    /// `BuffersBUMin`: fewest pages per cycle, default 64; ≤ max.
    pub buffers_min: u32,
    /// `BuffersBUMax`: most pages per cycle, default 128; must fit the smallest data file.
    pub buffers_max: u32,
    /// `DelayAfterCycles`: apply `bu_delay_ms` after this many cycles, default 2; 0 = never.
    pub delay_after_cycles: u32,
    /// `BUDelay`: pause in ms, default 10.
    pub bu_delay_ms: u32,
}

/// `[ShrinkUser]`: grows and shrinks shrinkable files.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShrinkUser {
    /// `MinShrinkInterval`: shortest gap in seconds between operations, default 120; ≤ max.
    pub min_shrink_interval_s: u32,
    /// `MaxShrinkInterval`: longest gap in seconds, default 600.
    pub max_shrink_interval_s: u32,
    /// `MinExtends`: fewest `Increment` steps per operation, default 1; ≤ max.
    pub min_extends: u32,
    /// `MaxExtends`: most `Increment` steps per operation, default 20; range 1..=1000000.
    pub max_extends: u32,
}

/// One `[FileN]` section.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileSpec {
    /// `FileName`: required. As written after parsing; absolute after `RunSettings::resolve`.
    pub path: PathBuf,
    /// `InitialSize`: MB, required; range 1..=1048576 (1 TB).
    pub initial_size_mb: u64,
    /// `MaxSize`: MB, default `InitialSize`; must be ≥ `InitialSize`.
    pub max_size_mb: u64,
    /// `Increment`: grow/shrink step in MB, default 0; lowered at resolve time so that
    /// Increment × MaxExtends < MaxMemoryMB / data files (0 makes the file non-shrinkable).
    pub increment_mb: u64,
    /// `Shrinkable`: the ShrinkUser may grow and shrink it, default false.
    pub shrinkable: bool,
    /// `LogFile`: holds simulated transaction log, default false.
    pub log_file: bool,
    /// `Sparse`: created with holes, default false.
    pub sparse: bool,
}

impl FileSpec {
    /// Number of 8 KB pages at the initial size.
    pub fn initial_pages(&self) -> u64 {
        self.initial_size_mb * PAGES_PER_MB
    }

    /// Number of 8 KB pages at the largest size.
    pub fn max_pages(&self) -> u64 {
        self.max_size_mb * PAGES_PER_MB
    }
}

/// 8 KB pages in one MB.
pub const PAGES_PER_MB: u64 = 128;

/// min(CPUCount * 2, 8): the value of `UserCount=-1`.
pub fn auto_user_count(cpu_count: u32) -> u32 {
    (cpu_count * 2).min(8)
}

/// CPUCount * 1023 - 100: the limit on each `UserCount` and on their total.
pub fn user_limit(cpu_count: u32) -> u64 {
    (u64::from(cpu_count) * 1023).saturating_sub(100)
}

impl Config {
    /// The data files (not `LogFile`).
    pub fn data_files(&self) -> impl Iterator<Item = &FileSpec> {
        self.files.iter().filter(|f| !f.log_file)
    }

    /// The log files.
    pub fn log_files(&self) -> impl Iterator<Item = &FileSpec> {
        self.files.iter().filter(|f| f.log_file)
    }

    /// Total simulated users of all kinds.
    pub fn total_users(&self) -> u64 {
        [
            self.random.user_count,
            self.audit.user_count,
            self.read_ahead.user_count,
            self.bulk_update.user_count,
        ]
        .iter()
        .map(|&n| u64::from(n))
        .sum()
    }
}
