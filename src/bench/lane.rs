//! The blocks a worker of a capacity run may touch, and the rule that keeps a stamped run's
//! requests from overlapping one another while in flight.
//!
//! Two requests in flight on the same block may run at once (psync helpers, a device's queue,
//! two workers of one file), and a read that runs while a write copies into the same sector
//! can return half of each: a 4 KiB stamp whose checksum fails though nothing is wrong with
//! the device (seen on tmpfs under load: 3 verifying sweeps in 20 failed, each sector whole
//! at rest). Two overlapping writes may also be stored sector by sector from either, leaving a
//! torn stamp for a later `--verify` to report. fio offers `serialize_overlap` for the same
//! reason. So when writes are stamped, each worker keeps to a lane of its own (every T-th
//! block of the region for random I/O, a contiguous share for sequential I/O, with T workers
//! on the file), and never puts a request in flight on a block one of its own requests holds.
//! Runs that do not stamp writes (zeros, reads only) keep the whole region for every worker,
//! as fio and DiskSpd do.

use std::collections::HashSet;

/// How many random draws a worker tries before it waits for a completion instead.
const DRAWS: usize = 16;

/// One worker's blocks: `first + step * k` for `k` in `0..count` (random I/O), or the
/// contiguous `first..first + count` walked in order (sequential I/O, `step` 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    first: u64,
    step: u64,
    count: u64,
    /// The next block of a sequential walk, as an index into the lane.
    next: u64,
    /// The blocks of this worker's requests in flight, when they must not overlap.
    busy: Option<HashSet<u64>>,
}

impl Lane {
    /// The lane of worker `rank` of `threads` on a region of `blocks` blocks. With
    /// `exclusive` (stamped writes), each worker gets blocks of its own and no two of its
    /// requests in flight share a block; otherwise every worker gets the whole region, a
    /// sequential one starting at its share. `None` when an exclusive lane would be empty
    /// (more workers than blocks).
    pub fn new(
        blocks: u64,
        rank: u32,
        threads: u32,
        sequential: bool,
        exclusive: bool,
        depth: usize,
    ) -> Option<Lane> {
        let (rank, threads) = (u64::from(rank), u64::from(threads.max(1)));
        let share = |r: u64| blocks * r / threads;
        let (first, step, count, next) = match (exclusive && threads > 1, sequential) {
            (false, false) => (0, 1, blocks, 0),
            (false, true) => (0, 1, blocks, share(rank)),
            (true, false) => (
                rank,
                threads,
                blocks.saturating_sub(rank).div_ceil(threads),
                0,
            ),
            (true, true) => (share(rank), 1, share(rank + 1) - share(rank), 0),
        };
        if count == 0 {
            return None;
        }
        Some(Lane {
            first,
            step,
            count,
            next,
            busy: exclusive.then(|| HashSet::with_capacity(depth)),
        })
    }

    /// The next block to put in flight (`draw` gives a random index below its argument, for
    /// random I/O), marked busy; `None` when every block tried is busy: wait for a
    /// completion, then ask again.
    pub fn take(&mut self, sequential: bool, mut draw: impl FnMut(u64) -> u64) -> Option<u64> {
        let tries = if sequential {
            usize::try_from(self.count).unwrap_or(usize::MAX)
        } else {
            DRAWS
        };
        for _ in 0..tries {
            let k = if sequential {
                let k = self.next;
                self.next = (k + 1) % self.count;
                k
            } else {
                draw(self.count)
            };
            let block = self.first + self.step * k;
            let free = match &mut self.busy {
                None => true,
                Some(busy) => busy.insert(block),
            };
            if free {
                return Some(block);
            }
        }
        None
    }

    /// The request on `block` completed: the block may be taken again.
    pub fn release(&mut self, block: u64) {
        if let Some(busy) = &mut self.busy {
            busy.remove(&block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(lane: &Lane) -> Vec<u64> {
        (0..lane.count)
            .map(|k| lane.first + lane.step * k)
            .collect()
    }

    #[test]
    fn exclusive_lanes_share_no_block_and_cover_the_region() {
        for (blocks, threads) in [(10, 3), (7, 7), (100, 4), (5, 1)] {
            for sequential in [false, true] {
                let mut seen = Vec::new();
                for rank in 0..threads {
                    let lane = Lane::new(blocks, rank, threads, sequential, true, 4).expect("room");
                    seen.extend(all(&lane));
                }
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..blocks).collect::<Vec<_>>(),
                    "{blocks} / {threads}"
                );
            }
        }
        assert_eq!(
            Lane::new(3, 3, 4, false, true, 4),
            None,
            "more workers than blocks"
        );
    }

    #[test]
    fn without_stamps_every_worker_has_the_whole_region() {
        let lane = Lane::new(10, 2, 4, false, false, 4).expect("room");
        assert_eq!(all(&lane), (0..10).collect::<Vec<_>>());
        let mut seq = Lane::new(10, 2, 4, true, false, 4).expect("room");
        assert_eq!(seq.take(true, |_| 0), Some(5), "starts at its share");
        assert_eq!(seq.take(true, |_| 0), Some(6));
    }

    #[test]
    fn a_block_in_flight_is_never_taken_again_until_released() {
        let mut lane = Lane::new(3, 0, 1, false, true, 4).expect("room");
        let mut next = 0;
        let mut draw = |n: u64| {
            next += 1;
            next % n
        };
        let mut taken: Vec<u64> = (0..3).filter_map(|_| lane.take(false, &mut draw)).collect();
        taken.sort_unstable();
        assert_eq!(taken, vec![0, 1, 2]);
        assert_eq!(lane.take(false, &mut draw), None, "all three in flight");
        lane.release(1);
        assert_eq!(lane.take(false, &mut draw), Some(1));
        let mut seq = Lane::new(2, 0, 1, true, true, 4).expect("room");
        assert_eq!(
            (seq.take(true, |_| 0), seq.take(true, |_| 0)),
            (Some(0), Some(1))
        );
        assert_eq!(seq.take(true, |_| 0), None);
        seq.release(0);
        assert_eq!(seq.take(true, |_| 0), Some(0));
    }
}
