//! The small run the self-test does for each fault: an 8 MB data file and a 2 MB log, a main
//! phase that only reads, so damage done while the initial update writes every page once
//! stays there until the audit pass at the end of the cycle reads every page.

use std::path::Path;
use std::time::Duration;

use crate::io::faulty::classes::Aim;
use crate::sim::plan::{BatchPlan, FilePlan, RandomPlan, ShrinkPlan, SimPlan};

/// Name of the data file.
pub const DATA: &str = "sqliosim.mdx";
/// Name of the log file.
pub const LOG: &str = "sqliosim.ldx";
/// Pages of the data file (page 0 is the header).
pub const DATA_PAGES: u64 = 1024;

fn batch(users: usize, min: u64, max: u64) -> BatchPlan {
    BatchPlan {
        users,
        min_pages: min,
        max_pages: max,
        delay_after_cycles: 2,
        delay: Duration::from_millis(20),
    }
}

/// The plan: files in `dir`, `main` long main phase, `scatter_gather` as given.
pub fn selftest_plan(dir: &Path, seed: u64, main: Duration, scatter_gather: bool) -> SimPlan {
    SimPlan::builder(seed)
        .file(FilePlan::data(dir.join(DATA), DATA_PAGES))
        .file(FilePlan::log(dir.join(LOG), 256))
        .cycle_duration(main)
        .stop_on_error(false)
        .scatter_gather(scatter_gather)
        .max_memory_mb(16)
        .read_retries(3)
        // The journal is a real file beside the data file: none for files in memory.
        .journal(false)
        .random(RandomPlan {
            min_chain: 8,
            max_chain: 64,
            write_ratio: 0.0,
            sleep_after: Duration::from_millis(1),
            ..RandomPlan::default()
        })
        .audit(batch(1, 64, 64))
        .read_ahead(batch(1, 16, 64))
        .bulk(batch(0, 32, 128))
        .shrink(ShrinkPlan {
            min_interval: Duration::from_secs(5),
            max_interval: Duration::from_secs(10),
            min_extends: 1,
            max_extends: 4,
        })
        .build()
}

/// Turns on, in `plan`, the actor whose file a class of fault classes aims at: the one row
/// of that class runs it, the others' faults being for the data readers.
pub fn aim_plan(plan: &mut SimPlan, aim: Aim) {
    match aim {
        Aim::DataFile => {}
        Aim::BackupStream => plan.backup.users = 1,
        Aim::Snapshot => {
            plan.sections.check_db.user_count = 1;
            plan.sections.check_db.check_delay_ms = 10;
            // Nothing writes the data file during the check: every page is a hole.
            plan.random.users = 0;
            plan.bulk.users = 0;
            plan.files.iter_mut().for_each(|f| f.shrinkable = false);
        }
        Aim::Tempdb => {
            let s = &mut plan.sections.sort;
            s.user_count = 1;
            (
                s.run_pages,
                s.runs_per_merge,
                s.temp_file_mb,
                s.sort_delay_ms,
            ) = (16, 3, 1, 1);
        }
    }
}
