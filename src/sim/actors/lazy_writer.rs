//! The lazy writer: when the buffer pool is under pressure, dirty pages written in clock
//! order, as the checkpoint writes them.

use std::time::Duration;

use super::checkpoint::write_dirty;
use super::worker::Worker;
use crate::sim::engine::pool::PageKey;

/// How long the lazy writer sleeps when the pool is not under pressure, or holds no victim.
pub const IDLE: Duration = Duration::from_millis(10);

/// The lazy writer: when the pool is under pressure, writes dirty pages in clock order.
pub fn lazy_writer(w: &mut Worker<'_>) {
    while !w.run.controls.stop.phase_over() {
        if w.run.files.pool.under_pressure() {
            let victims = w.run.files.pool.lazy_victims(victim_batch(w.max_pages()));
            let victims = write_order(victims);
            if !victims.is_empty() {
                write_dirty(w, &victims);
                continue;
            }
        }
        if !w.pause(IDLE) {
            break;
        }
    }
}

/// The dirty pages one round of the lazy writer takes from the clock: four requests of the
/// worker's buffer (`max_pages`), so that a round frees a useful share of the pool without
/// holding the pool's lock for long.
pub fn victim_batch(max_pages: usize) -> usize {
    max_pages.saturating_mul(4)
}

/// The clock's victims in the order they are written: by file and page, so that neighbours
/// the clock met apart are gathered into one run (`checkpoint::runs`).
pub fn write_order(mut victims: Vec<(PageKey, u64)>) -> Vec<(PageKey, u64)> {
    victims.sort_unstable();
    victims
}

#[cfg(test)]
mod tests {
    use super::super::checkpoint::runs;
    use super::*;

    fn k(file: usize, page: u64, lsn: u64) -> (PageKey, u64) {
        (PageKey { file, page }, lsn)
    }

    #[test]
    fn a_round_takes_four_requests_of_victims() {
        assert_eq!(victim_batch(64), 256);
        assert_eq!(victim_batch(1), 4);
        assert_eq!(victim_batch(usize::MAX), usize::MAX, "no overflow");
    }

    #[test]
    fn victims_met_apart_by_the_clock_are_written_as_runs() {
        // The clock met them in frame order: pages of two files, neighbours apart.
        let clock = vec![k(1, 9, 5), k(0, 3, 7), k(1, 8, 2), k(0, 2, 9), k(0, 4, 1)];
        let order = write_order(clock);
        assert_eq!(
            order,
            vec![k(0, 2, 9), k(0, 3, 7), k(0, 4, 1), k(1, 8, 2), k(1, 9, 5)]
        );
        // Two writes, each carrying the highest LSN of its pages (the log is flushed past it).
        assert_eq!(
            runs(&order, 64).collect::<Vec<_>>(),
            vec![(0, 2, 3, 9), (1, 8, 2, 5)]
        );
        assert!(write_order(Vec::new()).is_empty());
    }
}
