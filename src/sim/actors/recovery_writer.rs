//! Indirect checkpoint's recovery writer (issue #24 §2; SQL Server 2016 makes indirect
//! checkpoint the default for new databases): with `TargetRecoveryTime` above 0, one thread
//! wakes every [`TICK`] and writes the pages that have been dirty for longer than that target,
//! as SQL Server's recovery writer keeps the redo work after a crash within the target. It is
//! a continuous trickle beside the periodic checkpoint's burst, which then finds fewer dirty
//! pages. It backs off while the data files' running average I/O duration is above
//! [`BACK_OFF_MS`] (SQL Server's recovery writer slows when its writes take longer than 50 ms),
//! so that it does not add to a device already slow.
//!
//! Its writes are the checkpoint's: gathered runs of consecutive dirty pages, the log flushed
//! first (the WAL rule of `flight`), each run marked clean when its write completes.

use std::time::Duration;

use super::checkpoint::write_dirty;
use super::worker::Worker;
use crate::findings::Severity;

/// How often the recovery writer looks for aged pages.
pub const TICK: Duration = Duration::from_millis(100);
/// The running average I/O duration above which it pauses a round.
pub const BACK_OFF_MS: u64 = 50;

/// The recovery writer's thread of the main phase.
pub fn run(w: &mut Worker<'_>) {
    let target = Duration::from_secs(u64::from(
        w.run.plan.sections.general.target_recovery_time_s,
    ));
    let (mut rounds, mut pages, mut backed_off) = (0u64, 0u64, 0u64);
    while w.pause(TICK) {
        let slowest = slowest_average_ms(w);
        if slowest > BACK_OFF_MS {
            backed_off += 1;
            continue;
        }
        let aged = w.run.files.pool.aged_dirty(target, w.max_pages() * 8);
        if aged.is_empty() {
            continue;
        }
        let flight = write_dirty(w, &aged);
        rounds += 1;
        pages += flight.pages;
    }
    w.run.message(
        Severity::Info,
        "Recovery Writer",
        "RecoveryWriter",
        format!(
            "recovery writer: {pages} pages dirty for over {} s written in {rounds} rounds; backed off {backed_off} times (running average I/O duration above {BACK_OFF_MS} ms)",
            target.as_secs()
        ),
    );
}

/// The highest running average I/O duration among the data files, ms.
fn slowest_average_ms(w: &Worker<'_>) -> u64 {
    let run = w.run;
    run.files
        .data
        .iter()
        .map(|&f| run.controls.throttles[f].running_average_ms())
        .max()
        .unwrap_or(0)
}
