//! Buffers aligned for direct I/O, carved from anonymous memory mappings.
//!
//! An anonymous `mmap` is page aligned (4096), which satisfies every O_DIRECT alignment this
//! project meets (ext4/xfs ask for 512). [`AlignedBuf`] is one standalone mapping (for the rare
//! paths: retries, dumps). [`BufPool`] is one mapping cut into `frames` equal frames, allocated
//! once at start; a [`Frame`] is handed out by [`BufPool::take`], owns its slice exclusively
//! and returns to the pool when dropped, so frames are always disjoint.

#![expect(
    unsafe_code,
    reason = "aligned buffers are carved out of one allocation by raw pointer, and the pool is shared between threads (Send/Sync by hand)"
)]

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::sync::Mutex;
use memmap2::MmapMut;

/// Alignment guaranteed for every buffer handed out here.
pub const BUF_ALIGN: usize = 4096;

/// Rounds `len` up to a multiple of [`BUF_ALIGN`] (at least one block).
pub fn round_up(len: usize) -> usize {
    len.max(1).div_ceil(BUF_ALIGN) * BUF_ALIGN
}

/// One standalone 4096-aligned, zero-initialised buffer.
pub struct AlignedBuf {
    map: MmapMut,
    len: usize,
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (the mapping is rounded up to 4096).
    pub fn new(len: usize) -> std::io::Result<AlignedBuf> {
        let map = MmapMut::map_anon(round_up(len))?;
        Ok(AlignedBuf { map, len })
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[..self.len]
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
    }
}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AlignedBuf({} bytes at {:p})",
            self.len,
            self.map.as_ptr()
        )
    }
}

/// A fixed set of equal, 4096-aligned frames in one anonymous mapping.
pub struct BufPool {
    /// Keeps the mapping alive; only touched through `base` by frames.
    _map: MmapMut,
    base: *mut u8,
    frame_size: usize,
    frames: usize,
    free: Mutex<Vec<usize>>,
}

// SAFETY: the mapping is owned by the pool and lives as long as it; the memory is only
// reached through `Frame`s, each of which owns a disjoint range (an index is in the free list
// or in exactly one frame), so sharing the pool between threads cannot alias a frame.
unsafe impl Send for BufPool {}
// SAFETY: see `Send`: `&BufPool` gives no access to frame memory without taking a frame.
unsafe impl Sync for BufPool {}

impl BufPool {
    /// A pool of `frames` frames of `frame_size` bytes (rounded up to 4096), all free.
    pub fn new(frames: usize, frame_size: usize) -> std::io::Result<Arc<BufPool>> {
        let frame_size = round_up(frame_size);
        let total = frame_size.checked_mul(frames.max(1)).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "buffer pool too large")
        })?;
        let mut map = MmapMut::map_anon(total)?;
        let base = map.as_mut_ptr();
        // Hand out low frames first: pop() takes from the end.
        let free = (0..frames).rev().collect();
        Ok(Arc::new(BufPool {
            _map: map,
            base,
            frame_size,
            frames,
            free: Mutex::new(free),
        }))
    }

    /// Size of each frame in bytes.
    pub fn frame_size(&self) -> usize {
        self.frame_size
    }

    /// Total number of frames.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Number of frames not handed out.
    pub fn available(&self) -> usize {
        self.free.lock().len()
    }

    /// Takes a free frame, or `None` when all are in use.
    pub fn take(self: &Arc<Self>) -> Option<Frame> {
        let index = self.free.lock().pop()?;
        Some(Frame {
            pool: Arc::clone(self),
            index,
        })
    }

    /// Takes `n` free frames at once, or none when fewer than `n` are free.
    pub fn take_many(self: &Arc<Self>, n: usize) -> Option<Vec<Frame>> {
        let mut free = self.free.lock();
        if free.len() < n {
            return None;
        }
        let at = free.len() - n;
        let taken: Vec<usize> = free.drain(at..).collect();
        drop(free);
        let pool = |index| Frame {
            pool: Arc::clone(self),
            index,
        };
        Some(taken.into_iter().rev().map(pool).collect())
    }
}

impl fmt::Debug for BufPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufPool")
            .field("frames", &self.frames)
            .field("frame_size", &self.frame_size)
            .field("available", &self.available())
            .finish()
    }
}

/// One frame of a [`BufPool`], exclusively owned until dropped.
pub struct Frame {
    pool: Arc<BufPool>,
    index: usize,
}

impl Frame {
    /// Index of the frame in its pool.
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Deref for Frame {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        let size = self.pool.frame_size;
        // SAFETY: index < frames, so the range lies inside the live mapping; this frame owns
        // the range exclusively (see BufPool), and `&self` forbids a concurrent `&mut`.
        unsafe { std::slice::from_raw_parts(self.pool.base.add(self.index * size), size) }
    }
}

impl DerefMut for Frame {
    fn deref_mut(&mut self) -> &mut [u8] {
        let size = self.pool.frame_size;
        // SAFETY: as in `deref`; `&mut self` makes this the only reference to the range.
        unsafe { std::slice::from_raw_parts_mut(self.pool.base.add(self.index * size), size) }
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        self.pool.free.lock().push(self.index);
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Frame({} of {:?})", self.index, self.pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_aligned_disjoint_and_returned() {
        let pool = BufPool::new(4, 8192).expect("mmap");
        let mut a = pool.take().expect("frame");
        let mut b = pool.take().expect("frame");
        assert_eq!(a.as_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(a.len(), 8192);
        a.fill(0xAA);
        b.fill(0x55);
        assert!(a.iter().all(|&x| x == 0xAA), "frames overlap");
        let many = pool.take_many(2).expect("two left");
        assert!(pool.take().is_none());
        assert!(pool.take_many(1).is_none());
        drop(many);
        drop(a);
        assert_eq!(pool.available(), 3);
    }

    #[test]
    fn aligned_buf_rounds_the_mapping_not_the_slice() {
        let buf = AlignedBuf::new(1000).expect("mmap");
        assert_eq!(buf.len(), 1000);
        assert_eq!(buf.as_ptr() as usize % BUF_ALIGN, 0);
        assert!(buf.iter().all(|&x| x == 0));
    }
}
