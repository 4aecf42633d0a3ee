//! The ages of the I/Os in flight, for the long-I/O monitor: each I/O takes a slot with its
//! start time; the monitor counts those older than 15 s, each once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::sync::Mutex;

/// An I/O outstanding longer than this is reported (SQLIOSim's 15 seconds).
pub const LONG_IO: Duration = Duration::from_secs(15);

/// Table of in-flight I/O start times.
#[derive(Debug)]
pub struct IoAges {
    origin: Instant,
    slots: Box<[AtomicU64]>,
    /// Which I/O holds each slot (a sequence number), so a long I/O is reported once even if
    /// the next one in the same slot started in the same microsecond.
    ids: Box<[AtomicU64]>,
    next_id: AtomicU64,
    free: Mutex<Vec<usize>>,
    warned: Box<[AtomicU64]>,
    long_total: AtomicU64,
}

/// A registered in-flight I/O; unregisters on drop.
#[derive(Debug)]
pub struct IoAgeGuard<'a> {
    table: &'a IoAges,
    slot: Option<usize>,
}

impl IoAges {
    /// A table with room for `n` concurrent I/Os (more are simply not watched).
    pub fn new(n: usize) -> IoAges {
        IoAges {
            origin: crate::clock::now(),
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
            ids: (0..n).map(|_| AtomicU64::new(0)).collect(),
            next_id: AtomicU64::new(1),
            free: Mutex::new((0..n).rev().collect()),
            warned: (0..n).map(|_| AtomicU64::new(0)).collect(),
            long_total: AtomicU64::new(0),
        }
    }

    /// Registers an I/O starting now.
    pub fn begin(&self) -> IoAgeGuard<'_> {
        let slot = self.free.lock().pop();
        if let Some(s) = slot {
            let now = crate::clock::since(self.origin).as_micros() as u64 + 1;
            self.ids[s].store(
                self.next_id.fetch_add(1, Ordering::Relaxed),
                Ordering::Release,
            );
            self.slots[s].store(now, Ordering::Release);
        }
        IoAgeGuard { table: self, slot }
    }

    /// Counts I/Os outstanding for longer than `limit` that were not reported before.
    pub fn newly_long(&self, limit: Duration) -> u64 {
        let now = crate::clock::since(self.origin).as_micros() as u64 + 1;
        let limit = limit.as_micros() as u64;
        let mut n = 0;
        for ((slot, id), warned) in self
            .slots
            .iter()
            .zip(self.ids.iter())
            .zip(self.warned.iter())
        {
            let start = slot.load(Ordering::Acquire);
            if start == 0 || now - start.min(now) < limit {
                continue;
            }
            let id = id.load(Ordering::Acquire);
            if warned.swap(id, Ordering::AcqRel) != id {
                n += 1;
            }
        }
        self.long_total.fetch_add(n, Ordering::Relaxed);
        n
    }

    /// All long I/Os reported so far.
    pub fn long_total(&self) -> u64 {
        self.long_total.load(Ordering::Relaxed)
    }
}

impl Drop for IoAgeGuard<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.slot {
            self.table.slots[s].store(0, Ordering::Release);
            self.table.free.lock().push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_io_is_reported_once() {
        let t = IoAges::new(4);
        let g = t.begin();
        assert_eq!(t.newly_long(Duration::from_secs(3600)), 0);
        assert_eq!(t.newly_long(Duration::ZERO), 1);
        assert_eq!(t.newly_long(Duration::ZERO), 0, "reported once only");
        drop(g);
        let _g2 = t.begin();
        assert_eq!(
            t.newly_long(Duration::ZERO),
            1,
            "a new I/O in the same slot counts again"
        );
        assert_eq!(t.long_total(), 2);
    }
}
