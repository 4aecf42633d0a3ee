//! The oracle's page latches: striped `RwLock`s taken shared by a verifying read and exclusive
//! by a write, a range in ascending stripe order (see the oracle's module doc).

use crate::sync::{RwLockReadGuard, RwLockWriteGuard};

use super::Oracle;

/// Shared latches over one or more pages (held while a read is verified).
#[derive(Debug)]
pub struct ReadLatch<'a> {
    _guards: Vec<RwLockReadGuard<'a, ()>>,
}

/// Exclusive latches over one or more pages (held from `begin_write` to `complete_write`).
#[derive(Debug)]
pub struct WriteLatch<'a> {
    _guards: Vec<RwLockWriteGuard<'a, ()>>,
}

impl Oracle {
    /// Takes page `page` shared (for a verifying read).
    pub fn read_latch(&self, page: u64) -> ReadLatch<'_> {
        self.read_latch_range(page, 1)
    }

    /// Takes page `page` exclusive (for a write).
    pub fn write_latch(&self, page: u64) -> WriteLatch<'_> {
        self.write_latch_range(page, 1)
    }

    /// Takes `count` consecutive pages shared, in stripe order.
    pub fn read_latch_range(&self, first: u64, count: u64) -> ReadLatch<'_> {
        let guards = self.stripes(first, count).map(|s| self.latches[s].read());
        ReadLatch {
            _guards: guards.collect(),
        }
    }

    /// Takes `count` consecutive pages exclusive, in stripe order.
    pub fn write_latch_range(&self, first: u64, count: u64) -> WriteLatch<'_> {
        let guards = self.stripes(first, count).map(|s| self.latches[s].write());
        WriteLatch {
            _guards: guards.collect(),
        }
    }

    /// Takes `count` consecutive pages shared if no stripe is taken exclusive (or wanted by
    /// a waiting writer); `None` without waiting otherwise. An asynchronous poster, which holds
    /// several latch sets at once, takes them this way and waits only once it holds none.
    pub fn try_read_latch_range(&self, first: u64, count: u64) -> Option<ReadLatch<'_>> {
        let guards: Option<Vec<_>> = self
            .stripes(first, count)
            .map(|s| self.latches[s].try_read())
            .collect();
        guards.map(|g| ReadLatch { _guards: g })
    }

    /// Takes `count` consecutive pages exclusive if no stripe is taken; `None` without
    /// waiting otherwise (see [`Oracle::try_read_latch_range`]).
    pub fn try_write_latch_range(&self, first: u64, count: u64) -> Option<WriteLatch<'_>> {
        let guards: Option<Vec<_>> = self
            .stripes(first, count)
            .map(|s| self.latches[s].try_write())
            .collect();
        guards.map(|g| WriteLatch { _guards: g })
    }

    /// The distinct stripes of a page range, ascending.
    fn stripes(&self, first: u64, count: u64) -> impl Iterator<Item = usize> {
        let n = self.latches.len() as u64;
        let mut v: Vec<usize> = if count >= n {
            (0..self.latches.len()).collect()
        } else {
            (first..first + count).map(|p| (p % n) as usize).collect()
        };
        v.sort_unstable();
        v.dedup();
        v.into_iter()
    }
}
