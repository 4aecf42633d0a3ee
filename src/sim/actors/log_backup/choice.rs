//! The log backups' choices, apart from their I/O: when the wait for the next log backup
//! ends (the interval, or half a log waiting), and where the next log backup of a log starts.

use std::time::Duration;

use crate::sim::engine::logblock::NO_PREV;

/// Where the next log backup of one log starts: the block before it and its LSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    /// The LSN of the block before it (`NO_PREV` when not known).
    pub(super) after: u64,
    /// The LSN it starts at.
    pub(super) from: u64,
}

impl Mark {
    /// A new chain at `durable_end`: the link of its first block is not known.
    pub(super) fn start(durable_end: u64) -> Mark {
        Mark {
            after: NO_PREV,
            from: durable_end,
        }
    }

    /// The mark after the last block a log backup read, at `lsn`, `len` bytes long: the next
    /// one starts past it, at least a write unit (`unit`) on, where the writer's next block
    /// begins.
    pub(super) fn after_block(lsn: u64, len: u32, unit: u32) -> Mark {
        Mark {
            after: lsn,
            from: lsn + u64::from(len).max(u64::from(unit)),
        }
    }
}

/// What the wait for the next log backup reads of one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogView {
    /// How far the log is durable.
    pub durable_end: u64,
    /// Where the next log backup of it starts (what the log is held from).
    pub from: u64,
    /// The size of its circular area.
    pub area_len: u64,
}

/// How often the wait looks at the logs.
pub(super) const POLL: Duration = Duration::from_millis(20);

/// What the wait for the next log backup does now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Take the log backup.
    Now,
    /// Sleep this long, then look again.
    Sleep(Duration),
}

/// The wait's next step, `left` of the interval to go: a log backup now when half of a log
/// waits for one (`logs`; a DBA's log-space alert, so the users are not held long on a full
/// log) or the interval is over, else a sleep of at most [`POLL`].
pub fn wait_step(logs: impl IntoIterator<Item = LogView>, left: Duration) -> Wait {
    let half_full = logs
        .into_iter()
        .any(|l| l.durable_end.saturating_sub(l.from) >= l.area_len / 2);
    if half_full || left.is_zero() {
        Wait::Now
    } else {
        Wait::Sleep(left.min(POLL))
    }
}
