//! The simulated buffer pool: MaxMemoryMB of page frames with dirty tracking and clock
//! eviction.
//!
//! A frame holds a page's identity, whether it is dirty and the LSN of its newest change; the
//! page image itself is regenerated from (run, file, page, generation) when it is written, so
//! the pool costs a few dozen bytes per frame, not 8 KB. Reads that hit the pool do no I/O;
//! writes of dirty pages are left to the checkpoint and the lazy writer.

use std::collections::HashMap;

use crate::sync::Mutex;

/// A page of the file set: (file index, page number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey {
    /// Index of the file in the run plan.
    pub file: usize,
    /// Page number.
    pub page: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Frame {
    key: Option<PageKey>,
    dirty: bool,
    lsn: u64,
    referenced: bool,
    /// When the page went from clean to dirty, ms since the pool was made (its age for
    /// indirect checkpoint's recovery writer).
    dirty_since_ms: u64,
}

#[derive(Debug)]
struct Inner {
    map: HashMap<PageKey, usize>,
    frames: Vec<Frame>,
    hand: usize,
    dirty: usize,
}

/// The buffer pool.
#[derive(Debug)]
pub struct BufferPool {
    inner: Mutex<Inner>,
    /// The clock of the frames' `dirty_since_ms`; `None`: ages are not kept (no recovery
    /// writer), so marking a page dirty reads no clock.
    start: Option<std::time::Instant>,
}

impl BufferPool {
    /// A pool of `frames` frames (at least 16).
    pub fn new(frames: usize) -> BufferPool {
        let frames = frames.max(16);
        BufferPool {
            inner: Mutex::new(Inner {
                map: HashMap::with_capacity(frames),
                frames: vec![Frame::default(); frames],
                hand: 0,
                dirty: 0,
            }),
            start: None,
        }
    }

    /// The same pool keeping when each page went dirty, for [`BufferPool::aged_dirty`] (indirect
    /// checkpoint's recovery writer); without it marking a page dirty reads no clock.
    pub fn keeping_ages(self) -> BufferPool {
        BufferPool {
            start: Some(crate::clock::now()),
            ..self
        }
    }

    /// Milliseconds since the pool was made, when it keeps ages.
    fn now_ms(&self) -> Option<u64> {
        self.start
            .map(|s| crate::clock::since(s).as_millis() as u64)
    }

    /// Number of frames.
    pub fn capacity(&self) -> usize {
        self.inner.lock().frames.len()
    }

    /// Number of dirty frames.
    pub fn dirty_count(&self) -> usize {
        self.inner.lock().dirty
    }

    /// True when more than three quarters of the frames are dirty: the lazy writer's cue.
    pub fn under_pressure(&self) -> bool {
        let g = self.inner.lock();
        g.dirty * 4 > g.frames.len() * 3
    }

    /// True when the page is in the pool (and marks it recently used).
    pub fn lookup(&self, key: PageKey) -> bool {
        let mut g = self.inner.lock();
        match g.map.get(&key).copied() {
            Some(i) => {
                g.frames[i].referenced = true;
                true
            }
            None => false,
        }
    }

    /// Caches a clean page just read; returns false when no clean frame could be freed.
    pub fn insert_clean(&self, key: PageKey) -> bool {
        let mut g = self.inner.lock();
        if g.map.contains_key(&key) {
            return true;
        }
        g.claim(key).is_some()
    }

    /// Marks a page changed by a log record of LSN `lsn`; false when the pool is full of dirty
    /// pages (the change must then be written through by the caller).
    pub fn mark_dirty(&self, key: PageKey, lsn: u64) -> bool {
        let mut g = self.inner.lock();
        let idx = match g.map.get(&key).copied() {
            Some(i) => i,
            None => match g.claim(key) {
                Some(i) => i,
                None => return false,
            },
        };
        let f = &mut g.frames[idx];
        let was_dirty = f.dirty;
        if !was_dirty {
            if let Some(now) = self.now_ms() {
                f.dirty_since_ms = now;
            }
        }
        f.dirty = true;
        f.lsn = f.lsn.max(lsn);
        f.referenced = true;
        if !was_dirty {
            g.dirty += 1;
        }
        true
    }

    /// Records that the page was written carrying changes up to `lsn`; it stays dirty if a
    /// newer change came in meanwhile.
    pub fn mark_clean(&self, key: PageKey, lsn: u64) {
        let mut g = self.inner.lock();
        if let Some(i) = g.map.get(&key).copied() {
            if g.frames[i].dirty && g.frames[i].lsn <= lsn {
                g.frames[i].dirty = false;
                g.dirty -= 1;
            }
        }
    }

    /// Every dirty page with its LSN, sorted by file and page (checkpoint order).
    pub fn dirty_pages(&self) -> Vec<(PageKey, u64)> {
        let g = self.inner.lock();
        // Sized exactly: no growth by doubling through a checkpoint's tens of thousands of
        // pages (issue #15 §4: fewer freed blocks for the allocator to keep).
        let dirty = g.frames.iter().filter(|f| f.dirty && f.key.is_some());
        let mut v: Vec<(PageKey, u64)> = Vec::with_capacity(dirty.count());
        v.extend(
            g.frames
                .iter()
                .filter(|f| f.dirty)
                .filter_map(|f| f.key.map(|k| (k, f.lsn))),
        );
        v.sort_unstable();
        v
    }

    /// Up to `n` pages dirty for at least `age`, the oldest first, then sorted by file and
    /// page: what indirect checkpoint's recovery writer writes. Empty for a pool that keeps no
    /// ages ([`BufferPool::keeping_ages`]).
    pub fn aged_dirty(&self, age: std::time::Duration, n: usize) -> Vec<(PageKey, u64)> {
        let Some(now) = self.now_ms() else {
            return Vec::new();
        };
        let limit = now.saturating_sub(age.as_millis() as u64);
        let g = self.inner.lock();
        let mut aged: Vec<(u64, PageKey, u64)> = g
            .frames
            .iter()
            .filter(|f| f.dirty && f.dirty_since_ms <= limit)
            .filter_map(|f| f.key.map(|k| (f.dirty_since_ms, k, f.lsn)))
            .collect();
        drop(g);
        if aged.len() > n {
            aged.select_nth_unstable(n);
            aged.truncate(n);
        }
        let mut v: Vec<(PageKey, u64)> = aged.into_iter().map(|(_, k, l)| (k, l)).collect();
        v.sort_unstable();
        v
    }

    /// Up to `n` dirty pages in clock order, for the lazy writer: the hand sweeps on, giving
    /// a recently used dirty page a second chance (its bit is cleared) before choosing it.
    pub fn lazy_victims(&self, n: usize) -> Vec<(PageKey, u64)> {
        let mut g = self.inner.lock();
        let len = g.frames.len();
        let mut out = Vec::new();
        for _ in 0..2 * len {
            if out.len() >= n {
                break;
            }
            let i = g.hand;
            g.hand = (g.hand + 1) % len;
            let f = &mut g.frames[i];
            if !f.dirty {
                continue;
            }
            if f.referenced {
                f.referenced = false;
            } else if let Some(k) = f.key {
                out.push((k, f.lsn));
            }
        }
        out
    }

    /// Forgets every page of `file` from page `from` on (the file shrank).
    pub fn drop_from(&self, file: usize, from: u64) {
        let mut g = self.inner.lock();
        let gone: Vec<(PageKey, usize)> = g
            .map
            .iter()
            .filter(|(k, _)| k.file == file && k.page >= from)
            .map(|(k, i)| (*k, *i))
            .collect();
        for (k, i) in gone {
            g.map.remove(&k);
            if g.frames[i].dirty {
                g.dirty -= 1;
            }
            g.frames[i] = Frame::default();
        }
    }
}

impl Inner {
    /// Finds a frame for `key`: a free one, or a clean one the clock hand passes twice.
    fn claim(&mut self, key: PageKey) -> Option<usize> {
        let len = self.frames.len();
        for _ in 0..2 * len {
            let i = self.hand;
            self.hand = (self.hand + 1) % len;
            let f = &mut self.frames[i];
            if f.dirty {
                continue;
            }
            if f.referenced {
                f.referenced = false;
                continue;
            }
            if let Some(old) = f.key.take() {
                self.map.remove(&old);
            }
            *f = Frame {
                key: Some(key),
                dirty: false,
                lsn: 0,
                referenced: true,
                dirty_since_ms: 0,
            };
            self.map.insert(key, i);
            return Some(i);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn aged_dirty_gives_the_pages_dirty_for_long_enough_oldest_first() {
        use std::time::Duration;
        let p = BufferPool::new(64).keeping_ages();
        let k = |page| PageKey { file: 0, page };
        p.mark_dirty(k(9), 1);
        p.mark_dirty(k(3), 2);
        std::thread::sleep(Duration::from_millis(200));
        let young = std::time::Instant::now();
        p.mark_dirty(k(5), 3);
        // A page dirtied again keeps the age of its first change.
        p.mark_dirty(k(9), 4);
        // Between page 5's age (at most `young.elapsed()`) and pages 3 and 9's (200 ms more),
        // with 100 ms on either side: a thread paused that long between two statements is all
        // a loaded machine could fail this with (a 20 ms bound once was closer).
        let target = || young.elapsed() + Duration::from_millis(100);
        let old = p.aged_dirty(target(), 10);
        assert_eq!(old, vec![(k(3), 2), (k(9), 4)], "sorted by page");
        assert_eq!(p.aged_dirty(Duration::ZERO, 10).len(), 3);
        assert_eq!(p.aged_dirty(Duration::ZERO, 1).len(), 1);
        p.mark_clean(k(3), 2);
        assert_eq!(p.aged_dirty(target(), 10), vec![(k(9), 4)]);
        // A pool that keeps no ages reads no clock and has none to give.
        let q = BufferPool::new(64);
        q.mark_dirty(k(1), 1);
        assert_eq!(q.aged_dirty(Duration::ZERO, 10), vec![]);
    }

    use super::*;

    fn k(page: u64) -> PageKey {
        PageKey { file: 0, page }
    }

    #[test]
    fn dirty_pages_survive_eviction_and_clean_only_up_to_lsn() {
        let pool = BufferPool::new(16);
        assert!(pool.mark_dirty(k(1), 10));
        for p in 100..200 {
            pool.insert_clean(k(p));
        }
        assert!(pool.lookup(k(1)), "a dirty page is never evicted");
        assert_eq!(pool.dirty_pages(), vec![(k(1), 10)]);
        pool.mark_dirty(k(1), 20);
        pool.mark_clean(k(1), 10);
        assert_eq!(pool.dirty_count(), 1, "a newer change keeps the page dirty");
        pool.mark_clean(k(1), 20);
        assert_eq!(pool.dirty_count(), 0);
    }

    #[test]
    fn full_of_dirty_pages_refuses_and_signals_pressure() {
        let pool = BufferPool::new(16);
        for p in 0..16 {
            assert!(pool.mark_dirty(k(p), p));
        }
        assert!(pool.under_pressure());
        assert!(!pool.mark_dirty(k(99), 1));
        assert!(!pool.insert_clean(k(98)));
        let victims = pool.lazy_victims(4);
        assert_eq!(
            victims.len(),
            4,
            "recently used dirty pages get a second chance, then go"
        );
        pool.drop_from(0, 8);
        assert_eq!(pool.dirty_count(), 8);
        assert!(pool.insert_clean(k(98)));
    }
}
