//! Writes a [`Config`] back as SQLIOSim INI text with every key (`-save`). The text parses back
//! to the same configuration; booleans are written `TRUE`/`FALSE` as Microsoft's samples do.

use super::model::{Config, General, Ratio};
use std::fmt::Write;

/// The configuration as INI text, every section and key present.
pub fn to_ini(c: &Config) -> String {
    let mut out = String::from(
        "; sqliosim configuration written by -save: the resolved values of a run,\n\
         ; every key present. Ratios are percent x 100 (1000 = 10 %).\n",
    );
    config_section(&mut out, &c.general);
    users(&mut out, c);
    file_sections(&mut out, c);
    out
}

/// `[CONFIG]`.
fn config_section(out: &mut String, g: &General) {
    section(
        out,
        "CONFIG",
        &[
            ("ErrorFile", g.error_file.clone()),
            ("CPUCount", g.cpu_count.to_string()),
            ("Affinity", g.affinity.to_string()),
            ("IOAffinity", g.io_affinity.to_string()),
            ("MaxMemoryMB", g.max_memory_mb.to_string()),
            ("StopOnError", b(g.stop_on_error)),
            ("TestCycles", g.test_cycles.to_string()),
            ("TestCycleDuration", g.test_cycle_duration_s.to_string()),
            ("CacheHitRatio", r(g.cache_hit_ratio)),
            ("NoBuffering", b(g.no_buffering)),
            ("WriteThrough", b(g.write_through)),
            ("MaxOutstandingIO", g.max_outstanding_io.to_string()),
            ("TargetIODuration", g.target_io_duration_ms.to_string()),
            ("AllowIOBursts", b(g.allow_io_bursts)),
            ("UseScatterGather", b(g.use_scatter_gather)),
            ("ForceReadAhead", b(g.force_read_ahead)),
            ("DeleteFilesAtStartup", b(g.delete_files_at_startup)),
            ("DeleteFilesAtShutdown", b(g.delete_files_at_shutdown)),
            ("StampFiles", b(g.stamp_files)),
        ],
    );
}

/// `[File1]`..`[FileN]`.
fn file_sections(out: &mut String, c: &Config) {
    for (i, f) in c.files.iter().enumerate() {
        section(
            out,
            &format!("File{}", i + 1),
            &[
                ("FileName", f.path.to_string_lossy().into_owned()),
                ("InitialSize", f.initial_size_mb.to_string()),
                ("MaxSize", f.max_size_mb.to_string()),
                ("Increment", f.increment_mb.to_string()),
                ("Shrinkable", b(f.shrinkable)),
                ("LogFile", b(f.log_file)),
                ("Sparse", b(f.sparse)),
            ],
        );
    }
}

/// `[RandomUser]`, then the other user sections.
fn users(out: &mut String, c: &Config) {
    let ru = &c.random;
    section(
        out,
        "RandomUser",
        &[
            ("UserCount", ru.user_count.to_string()),
            ("JumpToNewRegionPercentage", r(ru.jump_to_new_region)),
            ("MinIOChainLength", ru.min_io_chain_length.to_string()),
            ("MaxIOChainLength", ru.max_io_chain_length.to_string()),
            ("RandomUserReadWriteRatio", r(ru.read_write_ratio)),
            ("MinLogPerBuffer", ru.min_log_per_buffer.to_string()),
            ("MaxLogPerBuffer", ru.max_log_per_buffer.to_string()),
            ("RollbackChance", r(ru.rollback_chance)),
            ("SleepAfter", ru.sleep_after_ms.to_string()),
            ("YieldPercentage", r(ru.yield_percentage)),
            ("CPUSimulation", b(ru.cpu_simulation)),
            ("CPUCyclesMin", ru.cpu_cycles_min.to_string()),
            ("CPUCyclesMax", ru.cpu_cycles_max.to_string()),
        ],
    );
    other_users(out, c);
}

/// `[AuditUser]`, `[ReadAheadUser]`, `[BulkUpdateUser]` and `[ShrinkUser]`.
fn other_users(out: &mut String, c: &Config) {
    let a = &c.audit;
    section(
        out,
        "AuditUser",
        &[
            ("UserCount", a.user_count.to_string()),
            ("BuffersValidated", a.buffers_validated.to_string()),
            ("DelayAfterCycles", a.delay_after_cycles.to_string()),
            ("AuditDelay", a.audit_delay_ms.to_string()),
        ],
    );
    let ra = &c.read_ahead;
    section(
        out,
        "ReadAheadUser",
        &[
            ("UserCount", ra.user_count.to_string()),
            ("BuffersRAMin", ra.buffers_min.to_string()),
            ("BuffersRAMax", ra.buffers_max.to_string()),
            ("DelayAfterCycles", ra.delay_after_cycles.to_string()),
            ("RADelay", ra.ra_delay_ms.to_string()),
        ],
    );
    let bu = &c.bulk_update;
    section(
        out,
        "BulkUpdateUser",
        &[
            ("UserCount", bu.user_count.to_string()),
            ("BuffersBUMin", bu.buffers_min.to_string()),
            ("BuffersBUMax", bu.buffers_max.to_string()),
            ("DelayAfterCycles", bu.delay_after_cycles.to_string()),
            ("BUDelay", bu.bu_delay_ms.to_string()),
        ],
    );
    let s = &c.shrink;
    section(
        out,
        "ShrinkUser",
        &[
            ("MinShrinkInterval", s.min_shrink_interval_s.to_string()),
            ("MaxShrinkInterval", s.max_shrink_interval_s.to_string()),
            ("MinExtends", s.min_extends.to_string()),
            ("MaxExtends", s.max_extends.to_string()),
        ],
    );
}

/// Appends `[name]` and its keys, preceded by a blank line.
fn section(out: &mut String, name: &str, keys: &[(&str, String)]) {
    let _ = write!(out, "\n[{name}]\n");
    for (k, v) in keys {
        let _ = writeln!(out, "{k}={v}");
    }
}

/// A boolean as the samples write it.
fn b(v: bool) -> String {
    if v { "TRUE" } else { "FALSE" }.to_string()
}

/// A ratio as percent × 100.
fn r(v: Ratio) -> String {
    v.raw().to_string()
}
