//! The log backups' choices, tested on their own: when the wait ends, and where the next log
//! backup of a log starts.

use super::choice::{Mark, POLL};
use super::*;
use crate::sim::engine::logblock::NO_PREV;

const AREA: u64 = 64 << 20;

fn log(durable_end: u64, from: u64) -> LogView {
    LogView {
        durable_end,
        from,
        area_len: AREA,
    }
}

#[test]
fn the_wait_sleeps_in_short_steps_until_the_interval_is_over() {
    let quiet = [log(10 << 20, 9 << 20)];
    let left = Duration::from_secs(30);
    assert_eq!(wait_step(quiet, left), Wait::Sleep(POLL), "at most a poll");
    assert_eq!(
        wait_step(quiet, Duration::from_millis(7)),
        Wait::Sleep(Duration::from_millis(7)),
        "no sleep past the interval"
    );
    assert_eq!(wait_step(quiet, Duration::ZERO), Wait::Now);
    assert_eq!(wait_step([], Duration::ZERO), Wait::Now, "no log: on time");
    assert_eq!(wait_step([], left), Wait::Sleep(POLL));
}

#[test]
fn half_a_log_waiting_takes_the_log_backup_early() {
    let left = Duration::from_secs(30);
    let from = 100 << 20;
    // Exactly half the area waiting: now; a byte less: wait on.
    assert_eq!(wait_step([log(from + AREA / 2, from)], left), Wait::Now);
    assert_eq!(
        wait_step([log(from + AREA / 2 - 1, from)], left),
        Wait::Sleep(POLL)
    );
    // One log of several is enough.
    let logs = [log(from, from), log(from + AREA, from), log(from + 1, from)];
    assert_eq!(wait_step(logs, left), Wait::Now);
    // A mark ahead of the durable end (a chain started over) is nothing waiting.
    assert_eq!(wait_step([log(from, from + 5)], left), Wait::Sleep(POLL));
}

#[test]
fn the_next_log_backup_starts_past_the_last_block_read() {
    assert_eq!(
        Mark::after_block(4096, 12_288, 4096),
        Mark {
            after: 4096,
            from: 16_384
        }
    );
    // A block shorter than the write unit: the writer's next block starts a unit on.
    assert_eq!(Mark::after_block(8192, 512, 4096).from, 12_288);
    assert_eq!(Mark::after_block(8192, 0, 512).from, 8704);
    // A new chain: its first block's link is not known.
    assert_eq!(
        Mark::start(1 << 20),
        Mark {
            after: NO_PREV,
            from: 1 << 20
        }
    );
}
