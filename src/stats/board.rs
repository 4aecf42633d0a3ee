//! The running statistics of a run: every worker's [`ThreadStats`] flushed into one shared
//! [`StatsBoard`] about once a second and once as the worker ends, so the statistics of the
//! run so far can be summarised at any moment (the JSON heartbeat, the metrics file) and not
//! only when a phase's workers are done.
//!
//! A worker still records without locks: the flush is the one moment it takes the board's
//! lock, and it hands over what it recorded since the last flush (its own counters start again
//! from zero), so nothing is counted twice and the board is the run's merged statistics.

use std::time::Duration;

use crate::sync::Mutex;

use super::run::RunStats;
use super::thread::ThreadStats;

/// How often a worker that is recording flushes into the board.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The merged statistics of every worker, as of their last flush.
#[derive(Debug)]
pub struct StatsBoard {
    merged: Mutex<RunStats>,
}

impl StatsBoard {
    /// An empty board of a run that started at `start`.
    pub fn new(start: std::time::Instant) -> StatsBoard {
        StatsBoard {
            merged: Mutex::new(RunStats::new(start)),
        }
    }

    /// Adds what `delta` recorded (a worker's statistics since its last flush).
    pub(crate) fn absorb(&self, delta: &ThreadStats) {
        self.merged.lock().absorb(delta);
    }

    /// A copy of the merged statistics now.
    pub fn snapshot(&self) -> RunStats {
        self.merged.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::ActorKind;
    use crate::stats::OpKind;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn flushed_and_final_records_add_up_once() {
        let start = Instant::now();
        let board = Arc::new(StatsBoard::new(start));
        let mut t = ThreadStats::new(start).with_board(board.clone());
        let later = start + FLUSH_EVERY * 2;
        t.record_at(0, ActorKind::RandomUser, OpKind::Read, 8192, 1000, start);
        // Nothing flushed yet: the board is empty until a second has passed.
        assert_eq!(
            board
                .snapshot()
                .merged()
                .ops(0, ActorKind::RandomUser, OpKind::Read),
            0
        );
        t.record_at(0, ActorKind::RandomUser, OpKind::Read, 8192, 1000, later);
        let mid = board.snapshot();
        assert_eq!(mid.merged().ops(0, ActorKind::RandomUser, OpKind::Read), 2);
        t.record_at(1, ActorKind::RandomUser, OpKind::Write, 8192, 1000, later);
        t.throttled(1);
        t.flush();
        t.flush();
        let end = board.snapshot();
        assert_eq!(end.merged().ops(0, ActorKind::RandomUser, OpKind::Read), 2);
        assert_eq!(end.merged().ops(1, ActorKind::RandomUser, OpKind::Write), 1);
        let s = end.summary(&[], Duration::from_secs(1));
        assert_eq!(s.files[1].throttled, 1);
        assert_eq!(s.total.latency.count, 3);
        let tl: u64 = end
            .merged()
            .timeline()
            .buckets()
            .iter()
            .map(|b| b.reads)
            .sum();
        assert_eq!(tl, 2);
    }
}
