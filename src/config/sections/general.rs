//! `[CONFIG]`: global behaviour (CPUs, memory, cycles, I/O options). Read first: its
//! `CPUCount` is what the other sections' user counts are resolved against.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::echo::yes;
use crate::config::error::{ConfigError, Warning};
use crate::config::host::MAX_CPU_COUNT;
use crate::config::model::Ratio;
use crate::config::reader::View;
use crate::config::save::flag;
use crate::config::{DurabilityMode, Edition, IoGeneration};
use std::fmt::Write;

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
    /// `MaxMemoryMB`: simulated buffer pool in MB, default MemAvailable from /proc/meminfo
    /// (bounded by the process's memory cgroup, `config::cgroup`); range 1..=MemTotal.
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
    /// `WriteThrough`: every data and log write is write-through (durable when done), default
    /// true; how, `durability_mode` says.
    pub write_through: bool,
    /// `DurabilityMode` (ours): how a write-through write is made durable, as SQL Server on
    /// Linux does it: `ForcedFlush` (default), `FUA` (O_DSYNC) or `None`.
    pub durability_mode: DurabilityMode,
    /// `ForcedFlushPerWrite` (ours): an `fdatasync` after every write-through write, each its
    /// own, instead of one shared by the writes of a file completed before it started (the
    /// default, FALSE: SQL Server's economy). Applies where writes are flushed after they
    /// complete (forced flush, and FUA on a stack that drops an O_DSYNC write's flush).
    pub forced_flush_per_write: bool,
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
    /// `Force4KLogIO` (ours): log files created with a 4096-byte log unit whatever the device's
    /// sector sizes, as SQL Server's trace flag 1800; default false.
    pub force_4k_log_io: bool,
    /// `IoVec4K` (ours): the simulation's scatter/gather requests are built from 4 KiB iovec
    /// entries, two per 8 KiB page, as SQL Server on Linux builds them (issue #24 §3); default
    /// false (one entry per page).
    pub iovec_4k: bool,
    /// `IoGeneration` (ours): the SQL Server generation whose request sizes are simulated,
    /// `2014` or `2016` (default).
    pub io_generation: IoGeneration,
    /// `Edition` (ours): the SQL Server edition whose read-ahead cap is simulated, default
    /// Standard.
    pub edition: Edition,
    /// `TargetRecoveryTime` (ours, SQL Server's database option of that name): seconds a
    /// dirty page may stay dirty before the recovery writer of indirect checkpoint (SQL Server
    /// 2016's default) writes it; 0 (default) runs only the periodic checkpoint. 0..=3600.
    pub target_recovery_time_s: u32,
}

/// The longest TestCycleDuration (and `-d`) accepted: a year, in seconds.
pub const MAX_DURATION_S: u64 = 365 * 24 * 3600;

impl IniSection for General {
    const NAME: &'static str = "CONFIG";
    /// Both spellings of the scatter/gather key are known (see docs).
    const KEYS: &'static [&'static str] = &[
        "ErrorFile",
        "CPUCount",
        "Affinity",
        "IOAffinity",
        "MaxMemoryMB",
        "StopOnError",
        "TestCycles",
        "TestCycleDuration",
        "CacheHitRatio",
        "NoBuffering",
        "WriteThrough",
        "DurabilityMode",
        "ForcedFlushPerWrite",
        "MaxOutstandingIO",
        "TargetIODuration",
        "AllowIOBursts",
        "UseScatterGather",
        "ScatterGather",
        "ForceReadAhead",
        "DeleteFilesAtStartup",
        "DeleteFilesAtShutdown",
        "StampFiles",
        "Force4KLogIO",
        "IoVec4K",
        "IoGeneration",
        "Edition",
        "TargetRecoveryTime",
    ];

    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError> {
        let host = cx.host;
        let cpu_count = v.u32("CPUCount", host.default_cpu_count(), 1, MAX_CPU_COUNT)?;
        let mask_cpus = host.cpus.max(cpu_count);
        let scatter_key = ["UseScatterGather", "ScatterGather"]
            .into_iter()
            .filter_map(|k| v.entry(k).map(|e| (e.line, k)))
            .max()
            .map_or("UseScatterGather", |(_, k)| k);
        let g = General {
            error_file: error_file(v)?,
            cpu_count,
            affinity: v.mask("Affinity", mask_cpus)?,
            io_affinity: v.mask("IOAffinity", mask_cpus)?,
            max_memory_mb: v.uint(
                "MaxMemoryMB",
                host.mem_available_mb.max(1),
                1,
                host.mem_total_mb.max(1),
            )?,
            stop_on_error: v.boolean("StopOnError", true)?,
            test_cycles: v.u32("TestCycles", 1, 0, u32::MAX)?,
            test_cycle_duration_s: v.uint("TestCycleDuration", 300, 1, MAX_DURATION_S)?,
            cache_hit_ratio: v.ratio("CacheHitRatio", 1000)?,
            no_buffering: v.boolean("NoBuffering", true)?,
            write_through: v.boolean("WriteThrough", true)?,
            durability_mode: durability_mode(v)?,
            forced_flush_per_write: v.boolean("ForcedFlushPerWrite", false)?,
            max_outstanding_io: v.u32("MaxOutstandingIO", 0, 0, 140_000)?,
            target_io_duration_ms: v.u32("TargetIODuration", 100, 1, u32::MAX)?,
            allow_io_bursts: v.boolean("AllowIOBursts", true)?,
            use_scatter_gather: v.boolean(scatter_key, true)?,
            force_read_ahead: v.boolean("ForceReadAhead", true)?,
            delete_files_at_startup: v.boolean("DeleteFilesAtStartup", true)?,
            delete_files_at_shutdown: v.boolean("DeleteFilesAtShutdown", false)?,
            stamp_files: v.boolean("StampFiles", false)?,
            force_4k_log_io: v.boolean("Force4KLogIO", false)?,
            iovec_4k: v.boolean("IoVec4K", false)?,
            io_generation: io_generation(v)?,
            edition: edition(v)?,
            target_recovery_time_s: v.u32("TargetRecoveryTime", 0, 0, 3600)?,
        };
        cx.cpu_count = cpu_count;
        cx.io_generation = g.io_generation;
        cx.edition = g.edition;
        Ok(scatter_gather_forces_no_buffering(v, g, cx.warnings))
    }
}

impl SectionValue for General {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("ErrorFile", self.error_file.clone()),
            ("CPUCount", self.cpu_count.to_string()),
            ("Affinity", self.affinity.to_string()),
            ("IOAffinity", self.io_affinity.to_string()),
            ("MaxMemoryMB", self.max_memory_mb.to_string()),
            ("StopOnError", flag(self.stop_on_error)),
            ("TestCycles", self.test_cycles.to_string()),
            ("TestCycleDuration", self.test_cycle_duration_s.to_string()),
            ("CacheHitRatio", self.cache_hit_ratio.raw().to_string()),
            ("NoBuffering", flag(self.no_buffering)),
            ("WriteThrough", flag(self.write_through)),
            ("DurabilityMode", self.durability_mode.to_string()),
            ("ForcedFlushPerWrite", flag(self.forced_flush_per_write)),
            ("MaxOutstandingIO", self.max_outstanding_io.to_string()),
            ("TargetIODuration", self.target_io_duration_ms.to_string()),
            ("AllowIOBursts", flag(self.allow_io_bursts)),
            ("UseScatterGather", flag(self.use_scatter_gather)),
            ("ForceReadAhead", flag(self.force_read_ahead)),
            ("DeleteFilesAtStartup", flag(self.delete_files_at_startup)),
            ("DeleteFilesAtShutdown", flag(self.delete_files_at_shutdown)),
            ("StampFiles", flag(self.stamp_files)),
            ("Force4KLogIO", flag(self.force_4k_log_io)),
            ("IoVec4K", flag(self.iovec_4k)),
            ("IoGeneration", self.io_generation.to_string()),
            ("Edition", self.edition.to_string()),
            (
                "TargetRecoveryTime",
                self.target_recovery_time_s.to_string(),
            ),
        ]
    }

    /// SQLIOSim's configuration line, then the I/O options.
    fn echo(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "CPUCount = {}, Affinity = {}, IOAffinity = {}, MaxMemory = {} MB, StopOnError = {}, \
             TestCycles = {}, TestCycleDuration = {} s, CacheHitRatio = {:.2}%",
            self.cpu_count,
            self.affinity,
            self.io_affinity,
            self.max_memory_mb,
            yes(self.stop_on_error),
            self.test_cycles,
            self.test_cycle_duration_s,
            self.cache_hit_ratio.percent()
        );
        let _ = writeln!(
            out,
            "NoBuffering = {}, WriteThrough = {}, UseScatterGather = {}, MaxOutstandingIO = {}, \
             TargetIODuration = {} ms, AllowIOBursts = {}, ForceReadAhead = {}, StampFiles = {}, \
             Force4KLogIO = {}, IoVec4K = {}",
            yes(self.no_buffering),
            yes(self.write_through),
            yes(self.use_scatter_gather),
            self.max_outstanding_io,
            self.target_io_duration_ms,
            yes(self.allow_io_bursts),
            yes(self.force_read_ahead),
            yes(self.stamp_files),
            yes(self.force_4k_log_io),
            yes(self.iovec_4k)
        );
        if self.write_through {
            let _ = writeln!(
                out,
                "DurabilityMode = {}: {}",
                self.durability_mode,
                self.durability_mode.describe(self.forced_flush_per_write)
            );
        }
        let caps = self.io_generation.caps_in(self.edition);
        let _ = writeln!(
            out,
            "IoGeneration = {}, Edition = {}: gathers of at most {} pages, read-ahead of at most {} pages",
            self.io_generation, self.edition, caps.gather_pages, caps.read_ahead_pages
        );
        if self.target_recovery_time_s > 0 {
            let _ = writeln!(
                out,
                "TargetRecoveryTime = {} s: indirect checkpoint, a recovery writer writes pages dirty for longer",
                self.target_recovery_time_s
            );
        }
    }
}

/// `ErrorFile`, default `sqliosim.log.xml`; an empty value is an error.
fn error_file(v: &View) -> Result<String, ConfigError> {
    match v.entry("ErrorFile") {
        None => Ok("sqliosim.log.xml".into()),
        Some(e) if e.value.is_empty() => {
            Err(v.bad(e, "expected a file name for the XML error log"))
        }
        Some(e) => Ok(e.value.clone()),
    }
}

/// `IoGeneration`, default 2016.
fn io_generation(v: &View) -> Result<IoGeneration, ConfigError> {
    match v.entry("IoGeneration") {
        None => Ok(IoGeneration::default()),
        Some(e) => IoGeneration::parse(&e.value).ok_or_else(|| v.bad(e, IoGeneration::VALUES)),
    }
}

/// `Edition`, default Standard.
fn edition(v: &View) -> Result<Edition, ConfigError> {
    match v.entry("Edition") {
        None => Ok(Edition::default()),
        Some(e) => Edition::parse(&e.value).ok_or_else(|| v.bad(e, Edition::VALUES)),
    }
}

/// `DurabilityMode`, default ForcedFlush.
fn durability_mode(v: &View) -> Result<DurabilityMode, ConfigError> {
    match v.entry("DurabilityMode") {
        None => Ok(DurabilityMode::default()),
        Some(e) => DurabilityMode::parse(&e.value).ok_or_else(|| v.bad(e, DurabilityMode::VALUES)),
    }
}

/// SQLIOSim forces NoBuffering on when scatter/gather is on; we do the same and say so.
fn scatter_gather_forces_no_buffering(v: &View, mut g: General, w: &mut Vec<Warning>) -> General {
    if g.use_scatter_gather && !g.no_buffering {
        w.push(Warning::at(
            v.file,
            v.line_of("NoBuffering"),
            "NoBuffering=FALSE is overridden: UseScatterGather=TRUE forces NoBuffering=TRUE (as in SQLIOSim); \
             set UseScatterGather=FALSE to test buffered I/O",
        ));
        g.no_buffering = true;
    }
    g
}
