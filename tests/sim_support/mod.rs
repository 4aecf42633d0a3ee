//! Helpers for the simulation tests: small run plans built directly, without an INI file.

#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use sqliosim::page::FileRole;
use sqliosim::plan::{BatchPlan, FilePlan, RandomPlan, ShrinkPlan, SimPlan};

/// A batch plan of `users` users doing `min..=max` pages with no delay.
pub fn batch(users: usize, min: u64, max: u64) -> BatchPlan {
    BatchPlan {
        users,
        min_pages: min,
        max_pages: max,
        delay_after_cycles: 1,
        delay: Duration::from_millis(1),
    }
}

/// A small plan: one data file of `data_mb` MB and one 2 MB log file in `dir`.
pub fn small_plan(dir: &Path, data_mb: u64, main: Duration) -> SimPlan {
    SimPlan {
        seed: 42,
        files: vec![
            FilePlan {
                path: dir.join("t.mdx"),
                role: FileRole::Data,
                initial_pages: data_mb * 128,
                max_pages: data_mb * 128 * 2,
                increment_pages: 32,
                shrinkable: true,
                sparse: false,
            },
            FilePlan {
                path: dir.join("t.ldx"),
                role: FileRole::Log,
                initial_pages: 256,
                max_pages: 256,
                increment_pages: 0,
                shrinkable: false,
                sparse: false,
            },
        ],
        cycles: 1,
        cycle_duration: main,
        stop_on_error: false,
        cache_hit_ratio: 0.1,
        direct: true,
        write_through: false,
        max_outstanding_io: 0,
        target_io: Duration::from_millis(100),
        allow_io_bursts: true,
        scatter_gather: true,
        force_read_ahead: true,
        delete_at_startup: true,
        delete_at_shutdown: false,
        stamp_files: false,
        max_memory_mb: 1,
        read_retries: 3,
        force: false,
        journal: true,
        journal_dir: None,
        resume: false,
        run_id: None,
        long_io: Duration::from_secs(15),
        random: RandomPlan {
            users: 2,
            jump: 0.05,
            min_chain: 4,
            max_chain: 32,
            write_ratio: 0.9,
            min_log: 64,
            max_log: 4096,
            rollback: 0.01,
            sleep_after: Duration::from_millis(1),
        },
        audit: batch(1, 32, 32),
        read_ahead: batch(1, 16, 32),
        bulk: batch(1, 16, 32),
        shrink: ShrinkPlan {
            min_interval: Duration::from_millis(200),
            max_interval: Duration::from_millis(400),
            min_extends: 1,
            max_extends: 2,
        },
    }
}
