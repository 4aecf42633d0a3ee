//! Turns the validated configuration into the run plan the scheduler works from.

use std::time::Duration;

use super::{BackupPlan, BatchPlan, FilePlan, RandomPlan, ShrinkPlan, SimPlan};
use crate::config::{Config, RunSettings, PAGES_PER_MB};
use crate::page::FileRole;

/// Re-reads of a page that failed verification (SQLIOSim reads 15 more times).
pub const READ_RETRIES: u32 = 15;

/// The run plan for resolved settings.
pub fn plan_from(s: &RunSettings) -> SimPlan {
    let c = &s.config;
    let g = &c.general;
    SimPlan {
        seed: s.seed,
        files: files(c),
        cycles: g.test_cycles,
        cycle_duration: Duration::from_secs(g.test_cycle_duration_s),
        stop_on_error: g.stop_on_error,
        cache_hit_ratio: g.cache_hit_ratio.fraction(),
        // SQLIOSim forces NoBuffering on with scatter/gather.
        direct: g.no_buffering || g.use_scatter_gather,
        write_through: g.write_through,
        durability: g.durability_mode,
        flush_per_write: g.forced_flush_per_write,
        max_outstanding_io: g.max_outstanding_io as usize,
        target_io: Duration::from_millis(u64::from(g.target_io_duration_ms)),
        allow_io_bursts: g.allow_io_bursts,
        scatter_gather: g.use_scatter_gather,
        force_read_ahead: g.force_read_ahead,
        delete_at_startup: g.delete_files_at_startup,
        delete_at_shutdown: g.delete_files_at_shutdown,
        stamp_files: g.stamp_files,
        force_4k_log_io: g.force_4k_log_io,
        iovec_4k: g.iovec_4k,
        max_memory_mb: g.max_memory_mb,
        read_retries: READ_RETRIES,
        force: s.force,
        journal: true,
        journal_dir: s.journal_dir.clone(),
        witness: s.witness.clone(),
        resume: s.resume,
        run_id: None,
        judged: None,
        long_io: crate::sim::control::io_ages::LONG_IO,
        random: random(c),
        audit: batch(
            c.audit.user_count,
            c.audit.buffers_validated,
            c.audit.buffers_validated,
            c.audit.delay_after_cycles,
            c.audit.audit_delay_ms,
        ),
        read_ahead: batch(
            c.read_ahead.user_count,
            c.read_ahead.buffers_min,
            c.read_ahead.buffers_max,
            c.read_ahead.delay_after_cycles,
            c.read_ahead.ra_delay_ms,
        ),
        bulk: batch(
            c.bulk_update.user_count,
            c.bulk_update.buffers_min,
            c.bulk_update.buffers_max,
            c.bulk_update.delay_after_cycles,
            c.bulk_update.bu_delay_ms,
        ),
        shrink: ShrinkPlan {
            min_interval: Duration::from_secs(u64::from(c.shrink.min_shrink_interval_s)),
            max_interval: Duration::from_secs(u64::from(c.shrink.max_shrink_interval_s)),
            min_extends: u64::from(c.shrink.min_extends),
            max_extends: u64::from(c.shrink.max_extends),
        },
        backup: backup(c),
        sections: c.fixed_sections(),
        caps: g.io_generation.caps_in(g.edition),
        affinity: g.affinity,
        io_affinity: g.io_affinity,
    }
}

fn files(c: &Config) -> Vec<FilePlan> {
    c.files
        .iter()
        .map(|f| FilePlan {
            path: f.path.clone(),
            role: if f.log_file {
                FileRole::Log
            } else {
                FileRole::Data
            },
            initial_pages: f.initial_pages().max(2),
            max_pages: f.max_pages().max(f.initial_pages()).max(2),
            increment_pages: f.increment_mb * PAGES_PER_MB,
            shrinkable: f.shrinkable,
            sparse: f.sparse,
        })
        .collect()
}

fn random(c: &Config) -> RandomPlan {
    let r = &c.random;
    RandomPlan {
        users: r.user_count as usize,
        jump: r.jump_to_new_region.fraction(),
        min_chain: u64::from(r.min_io_chain_length.max(1)),
        max_chain: u64::from(r.max_io_chain_length.max(r.min_io_chain_length).max(1)),
        write_ratio: r.read_write_ratio.fraction(),
        min_log: r.min_log_per_buffer,
        max_log: r.max_log_per_buffer.max(r.min_log_per_buffer),
        rollback: r.rollback_chance.fraction(),
        sleep_after: Duration::from_millis(u64::from(r.sleep_after_ms)),
    }
}

fn batch(users: u32, min: u32, max: u32, every: u32, delay_ms: u32) -> BatchPlan {
    BatchPlan {
        users: users as usize,
        min_pages: u64::from(min),
        max_pages: u64::from(max.max(min)),
        delay_after_cycles: every,
        delay: Duration::from_millis(u64::from(delay_ms)),
    }
}

fn backup(c: &Config) -> BackupPlan {
    let b = &c.backup;
    let first_data = c
        .files
        .iter()
        .find(|f| !f.log_file)
        .map(|f| f.path.as_path());
    BackupPlan {
        users: b.user_count as usize,
        transfer_pages: u64::from(b.max_transfer_size) / crate::page::PAGE_SIZE as u64,
        buffer_count: b.buffer_count.max(1) as usize,
        delay: Duration::from_millis(u64::from(b.backup_delay_ms)),
        file: stream_path(first_data, &b.backup_file),
        verify_only: b.verify_only,
        restore: b.restore_after_backup,
        restore_transfer_pages: u64::from(b.restore_max_transfer_size)
            / crate::page::PAGE_SIZE as u64,
        restore_buffers: b.restore_buffer_count.max(1) as usize,
        instant_file_init: b.instant_file_initialization,
        log_interval: (b.log_backup_interval_ms > 0)
            .then(|| Duration::from_millis(u64::from(b.log_backup_interval_ms))),
    }
}

/// The backup stream's path: `BackupFile` (a relative one taken from the first data file's
/// folder), else the first data file's name with `.bak` for its extension.
pub fn stream_path(first_data: Option<&std::path::Path>, backup_file: &str) -> std::path::PathBuf {
    let data = first_data.unwrap_or(std::path::Path::new("sqliosim.mdx"));
    if backup_file.is_empty() {
        return data.with_extension("bak");
    }
    data.parent()
        .unwrap_or(std::path::Path::new(""))
        .join(backup_file)
}
