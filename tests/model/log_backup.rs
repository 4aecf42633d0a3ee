//! The Backup User's log backups through the simulation (issue #25 §1): with a log of a few
//! blocks that the users lap many times, every log backup reads on from where the last one
//! ended (one chain, nothing lapped: the log waits for them), each verifies clean; a log
//! backup block damaged at rest is a `backup_corruption` finding on the `.trn`.

use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Fault, Trigger};
use sqliosim::io::FaultyBackend;
use sqliosim::page::{ActorKind, FileRole};
use sqliosim::sim::driver::simulate;
use sqliosim::sim::plan::SimPlan;

/// Log pages: a 120 KB log area after the header page, two 60 KB blocks.
const LOG_PAGES: u64 = 16;

/// A small plan whose users write log fast into a log of [`LOG_PAGES`], backed up every
/// `interval` (the full backups rarely: every 10 s).
fn log_backup_plan(interval: Duration) -> SimPlan {
    let mut plan = small_plan("/lb".as_ref(), 2, Duration::from_millis(1500));
    for f in plan.files.iter_mut().filter(|f| f.role == FileRole::Log) {
        f.initial_pages = LOG_PAGES;
        f.max_pages = LOG_PAGES;
    }
    plan.journal = false;
    plan.backup.users = 1;
    plan.backup.transfer_pages = 16;
    plan.backup.delay = Duration::from_secs(10);
    plan.backup.log_interval = Some(interval);
    plan
}

/// The LSN ranges each log backup's line says it carried, in order: (backup, first, end).
fn ranges(sink: &MemorySink) -> Vec<(u64, u64, u64)> {
    sink.messages()
        .into_iter()
        .filter(|m| m.user == "Backup User" && m.text.starts_with("log backup "))
        .filter_map(|m| {
            let no = m.text["log backup ".len()..]
                .split(':')
                .next()?
                .parse()
                .ok()?;
            let lsn = m.text.split("LSN ").nth(1)?;
            let (a, b) = lsn.split(')').next()?.split_once("..")?;
            Some((no, a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

#[test]
fn log_backups_read_the_log_on_as_one_chain_while_the_users_lap_it() {
    let plan = log_backup_plan(Duration::from_millis(40));
    let area = (LOG_PAGES - 1) * 8192;
    let backend = FaultyBackend::stepped(11);
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked);
    assert_eq!(sink.findings(), vec![], "clean log backups report nothing");
    let got = ranges(&sink);
    assert!(got.len() >= 5, "{got:?}");
    for pair in got.windows(2) {
        // Where the one before ended, or the start of the next lap when the writer skipped
        // the rest of this one (too short for a block).
        let (end, next) = (pair[0].2, pair[1].1);
        let skipped = next % area == 0 && next > end && next - end < 60 * 1024;
        assert!(
            next == end || skipped,
            "each log backup begins where the one before ended: {pair:?}"
        );
    }
    let carried = got.last().map_or(0, |r| r.2) - got.first().map_or(0, |r| r.1);
    assert!(
        carried > 4 * area,
        "the log backups carried {carried} bytes of a log of {area}: it lapped several times"
    );
    let clean = sink
        .messages()
        .into_iter()
        .filter(|m| m.text.starts_with("verify-only of") && m.text.contains(".trn"))
        .filter(|m| m.text.ends_with("clean"))
        .count();
    assert!(clean >= got.len(), "{clean} of {}", got.len());
}

#[test]
fn a_log_backup_block_damaged_at_rest_is_found_on_the_trn() {
    let plan = log_backup_plan(Duration::from_millis(200));
    let trn = plan.backup.log_file();
    let backend = FaultyBackend::stepped(12);
    // Page 1 of the stream: inside the first block's log (a 4 KB header, then the log).
    backend.inject(
        Fault::BitFlip(None),
        Trigger::Page {
            path: plan.backup.log_partial(),
            page: 1,
        },
    );
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    assert_eq!(backend.fired().len(), 1, "the flip fired");
    let found = sink.findings();
    assert!(!found.is_empty(), "the damaged block went unnoticed");
    for f in &found {
        assert_eq!(f.class, FindingClass::BackupCorruption, "{f:?}");
        assert_eq!(f.actor, ActorKind::BackupUser);
        assert_eq!(f.path, trn);
    }
}
