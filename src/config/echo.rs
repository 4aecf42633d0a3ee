//! The start-up echo: the resolved configuration in one readable block, its first line in
//! SQLIOSim's own format (`CPUCount = 2, Affinity = 0, … CacheHitRatio = 10.00%`).

use super::model::Config;
use super::settings::{ConfigSource, RunSettings};
use std::fmt::Write;

/// "Yes"/"No", as SQLIOSim prints booleans.
fn yes(v: bool) -> &'static str {
    if v {
        "Yes"
    } else {
        "No"
    }
}

impl RunSettings {
    /// The start-up block: SQLIOSim's configuration line, I/O options, users, one line per
    /// file, the configuration source, the error log and the seed. Ends with a newline.
    pub fn echo(&self) -> String {
        let mut out = general_lines(&self.config);
        file_lines(&mut out, &self.config);
        let source = match &self.source {
            ConfigSource::File(p) | ConfigSource::WorkingDir(p) => p.display().to_string(),
            ConfigSource::Embedded => "built-in default (sqliosim run with no -cfg)".to_string(),
            ConfigSource::Inline => self.source_name.clone(),
        };
        let _ = writeln!(out, "Configuration = {source}");
        let _ = writeln!(out, "Error log = {}", self.error_log.display());
        let _ = writeln!(out, "Seed = {}", self.seed);
        out
    }
}

/// SQLIOSim's configuration line, then the I/O options and the user counts.
fn general_lines(c: &Config) -> String {
    let g = &c.general;
    let mut out = format!(
        "CPUCount = {}, Affinity = {}, IOAffinity = {}, MaxMemory = {} MB, StopOnError = {}, \
         TestCycles = {}, TestCycleDuration = {} s, CacheHitRatio = {:.2}%\n",
        g.cpu_count,
        g.affinity,
        g.io_affinity,
        g.max_memory_mb,
        yes(g.stop_on_error),
        g.test_cycles,
        g.test_cycle_duration_s,
        g.cache_hit_ratio.percent()
    );
    let _ = writeln!(
        out,
        "NoBuffering = {}, WriteThrough = {}, UseScatterGather = {}, MaxOutstandingIO = {}, \
         TargetIODuration = {} ms, AllowIOBursts = {}, ForceReadAhead = {}, StampFiles = {}",
        yes(g.no_buffering),
        yes(g.write_through),
        yes(g.use_scatter_gather),
        g.max_outstanding_io,
        g.target_io_duration_ms,
        yes(g.allow_io_bursts),
        yes(g.force_read_ahead),
        yes(g.stamp_files)
    );
    let _ = writeln!(
        out,
        "Users: RandomUser = {}, AuditUser = {}, ReadAheadUser = {}, BulkUpdateUser = {}",
        c.random.user_count, c.audit.user_count, c.read_ahead.user_count, c.bulk_update.user_count
    );
    out
}

/// One line per test file.
fn file_lines(out: &mut String, c: &Config) {
    for (i, f) in c.files.iter().enumerate() {
        let _ = writeln!(
            out,
            "File{} = {}, {}, InitialSize = {} MB, MaxSize = {} MB, Increment = {} MB, \
             Shrinkable = {}, Sparse = {}",
            i + 1,
            f.path.display(),
            if f.log_file { "log" } else { "data" },
            f.initial_size_mb,
            f.max_size_mb,
            f.increment_mb,
            yes(f.shrinkable),
            yes(f.sparse)
        );
    }
}
