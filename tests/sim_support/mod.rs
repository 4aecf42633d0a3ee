//! Helpers for the simulation tests: small run plans built directly, without an INI file.

use std::path::Path;
use std::time::Duration;

use sqliosim::sim::plan::{BatchPlan, FilePlan, RandomPlan, ShrinkPlan, SimPlan};

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
    let pages = data_mb * 128;
    SimPlan::builder(42)
        .file(FilePlan::data(dir.join("t.mdx"), pages).growing(pages * 2, 32))
        .file(FilePlan::log(dir.join("t.ldx"), 256))
        .cycle_duration(main)
        .stop_on_error(false)
        .write_through(false)
        .max_memory_mb(1)
        .read_retries(3)
        .random(RandomPlan {
            min_chain: 4,
            max_chain: 32,
            max_log: 4096,
            sleep_after: Duration::from_millis(1),
            ..RandomPlan::default()
        })
        .audit(batch(1, 32, 32))
        .read_ahead(batch(1, 16, 32))
        .bulk(batch(1, 16, 32))
        .shrink(ShrinkPlan {
            min_interval: Duration::from_millis(200),
            max_interval: Duration::from_millis(400),
            min_extends: 1,
            max_extends: 2,
        })
        .build()
}
