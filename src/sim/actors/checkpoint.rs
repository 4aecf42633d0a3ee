//! The checkpoint: every dirty page written (the log first, the writes posted
//! asynchronously in runs of consecutive pages), then the recent log read back, every
//! `CHECKPOINT_INTERVAL` in the main phase and between the phases.

use std::time::Duration;

use super::log_writer::check_log_chain;
use super::outstanding::{After, Outstanding};
use super::worker::Worker;
use crate::sim::engine::pool::PageKey;

/// How often the checkpoint runs during the main phase.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(5);
/// Log blocks read back after each checkpoint (the log reader).
const RECENT_LOG_BLOCKS: usize = 64;

/// Groups sorted dirty pages into runs of consecutive pages of one file, at most `max` long;
/// each run carries the highest LSN among its pages. Lazily: a checkpoint of tens of thousands
/// of single-page runs allocates no second list beside the dirty pages (issue #15 §4).
pub fn runs(
    dirty: &[(PageKey, u64)],
    max: u64,
) -> impl Iterator<Item = (usize, u64, u64, u64)> + '_ {
    let mut rest = dirty.iter().peekable();
    std::iter::from_fn(move || {
        let &(k, lsn) = rest.next()?;
        let (mut n, mut l) = (1, lsn);
        while let Some(&&(next, lsn)) = rest.peek() {
            if next.file != k.file || k.page + n != next.page || n >= max {
                break;
            }
            (n, l) = (n + 1, l.max(lsn));
            rest.next();
        }
        Some((k.file, k.page, n, l))
    })
}

/// Posts writes of the given dirty pages without waiting for each (at most the run's
/// asynchronous depth in flight), marks each run clean as its write completes, and waits for
/// the last. Returns the pages written and the flight's figures.
pub(super) fn write_dirty<'a>(w: &mut Worker<'a>, dirty: &[(PageKey, u64)]) -> Outstanding<'a> {
    let mut flight = Outstanding::new(w.run);
    for (file, first, n, lsn) in runs(dirty, w.max_pages() as u64) {
        if w.run.controls.stop.run_stopped() {
            break;
        }
        flight.write(w, file, first, n, lsn, After::Clean(lsn));
    }
    flight.drain(w);
    flight
}

/// One checkpoint: every dirty page written (log first, the writes posted asynchronously),
/// then the recent log read back.
pub fn checkpoint(w: &mut Worker<'_>) -> u64 {
    let dirty = w.run.files.pool.dirty_pages();
    let t = crate::clock::now();
    let flight = write_dirty(w, &dirty);
    let took = crate::clock::since(t);
    if flight.posted > 0 {
        w.run.message(
            crate::findings::Severity::Info,
            "Checkpoint",
            "Checkpoint",
            format!("Checkpoint {}", flight.describe_writes(took)),
        );
    }
    let written = flight.pages;
    for i in 0..w.run.files.logs.len() {
        let file = w.run.files.logs[i].file;
        let _ = w.flush_log_index(i);
        check_log_chain(w, i, file, RECENT_LOG_BLOCKS);
        super::log_writer::read_log_forward(w, i, file);
    }
    let t = crate::clock::now();
    if super::journaling::sync_point(w.run) {
        for &f in &w.run.files.data {
            w.stats.record(
                f,
                w.kind,
                crate::stats::OpKind::Sync,
                0,
                crate::clock::since(t).as_nanos() as u64,
            );
        }
    }
    written
}

/// The checkpoint thread of the main phase.
pub fn checkpointer(w: &mut Worker<'_>) {
    while w.pause(CHECKPOINT_INTERVAL) {
        checkpoint(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(file: usize, page: u64) -> (PageKey, u64) {
        (PageKey { file, page }, page * 10)
    }

    #[test]
    fn runs_split_on_gaps_files_and_length() {
        let dirty = [k(0, 1), k(0, 2), k(0, 3), k(0, 5), k(1, 6), k(1, 7)];
        assert_eq!(
            runs(&dirty, 2).collect::<Vec<_>>(),
            vec![(0, 1, 2, 20), (0, 3, 1, 30), (0, 5, 1, 50), (1, 6, 2, 70)]
        );
    }

    #[test]
    fn runs_of_one_page_and_of_nothing() {
        assert_eq!(runs(&[], 64).count(), 0, "no dirty page, no write");
        let dirty = [k(0, 1), k(0, 2), k(0, 3)];
        assert_eq!(
            runs(&dirty, 1).collect::<Vec<_>>(),
            vec![(0, 1, 1, 10), (0, 2, 1, 20), (0, 3, 1, 30)]
        );
        assert_eq!(
            runs(&dirty, 0).count(),
            3,
            "a maximum of 0 is a page per write"
        );
    }

    proptest::proptest! {
        #[test]
        fn runs_write_every_dirty_page_once_behind_its_lsn(
            pages in proptest::collection::btree_set((0usize..3, 1u64..200), 0..150),
            lsns in proptest::collection::vec(1u64..1_000_000, 150),
            max in 1u64..40,
        ) {
            let dirty: Vec<(PageKey, u64)> = pages
                .iter()
                .zip(&lsns)
                .map(|(&(file, page), &lsn)| (PageKey { file, page }, lsn))
                .collect();
            let out: Vec<_> = runs(&dirty, max).collect();
            let mut at = 0;
            for &(file, first, n, lsn) in &out {
                proptest::prop_assert!((1..=max).contains(&n));
                let covered = &dirty[at..at + n as usize];
                for (i, (key, _)) in covered.iter().enumerate() {
                    proptest::prop_assert_eq!(*key, PageKey { file, page: first + i as u64 });
                }
                // The log is flushed past the newest change of any page in the write.
                let newest = covered.iter().map(|&(_, l)| l).max();
                proptest::prop_assert_eq!(Some(lsn), newest);
                at += n as usize;
            }
            proptest::prop_assert_eq!(at, dirty.len(), "every dirty page once, in order");
            // A run ends only at a gap, another file or the maximum.
            for p in out.windows(2) {
                let ((f0, s0, n0, _), (f1, s1, _, _)) = (p[0], p[1]);
                proptest::prop_assert!(f0 != f1 || s0 + n0 != s1 || n0 == max);
            }
        }
    }
}
