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
        if backs_off(averages_ms(w)) {
            backed_off += 1;
            continue;
        }
        let aged = w.run.files.pool.aged_dirty(target, batch(w.max_pages()));
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

/// The data files' running average I/O durations, ms.
fn averages_ms<'w>(w: &'w Worker<'_>) -> impl Iterator<Item = u64> + 'w {
    let run = w.run;
    run.files
        .data
        .iter()
        .map(move |&f| run.controls.throttles[f].running_average_ms())
}

/// Whether a round backs off: when the slowest data file's running average I/O duration
/// (`averages_ms`) is above [`BACK_OFF_MS`]; never without a data file.
pub fn backs_off(averages_ms: impl IntoIterator<Item = u64>) -> bool {
    averages_ms.into_iter().max().unwrap_or(0) > BACK_OFF_MS
}

/// The aged pages one round writes at most: eight requests of the worker's buffer
/// (`max_pages`), a trickle beside the checkpoint's burst.
pub fn batch(max_pages: usize) -> usize {
    max_pages.saturating_mul(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_backs_off_only_above_the_threshold_on_the_slowest_file() {
        assert!(!backs_off([]), "no data file");
        assert!(!backs_off([0, 10, BACK_OFF_MS]), "at the threshold: writes");
        assert!(
            backs_off([0, BACK_OFF_MS + 1, 3]),
            "one slow file is enough"
        );
        assert!(backs_off([u64::MAX]));
    }

    #[test]
    fn a_round_writes_at_most_eight_requests() {
        assert_eq!(batch(64), 512);
        assert_eq!(batch(1), 8);
        assert_eq!(batch(usize::MAX), usize::MAX, "no overflow");
    }
}
