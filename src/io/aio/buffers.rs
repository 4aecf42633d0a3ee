//! Page-aligned I/O buffer slots from one anonymous mapping, as O_DIRECT requires.

use super::RingError;
use memmap2::MmapMut;

/// `slots` buffers of `slot_len` bytes each, every one starting on a 4096-byte boundary.
pub struct AlignedBuffers {
    map: MmapMut,
    slot_len: usize,
    stride: usize,
    slots: usize,
}

impl AlignedBuffers {
    /// Maps `slots × slot_len` bytes (each slot rounded up to 4096) of zeroed memory. With a
    /// `slot_len` of 0 (a ring that only carries caller-owned memory) one page is mapped.
    pub fn new(slots: usize, slot_len: usize) -> Result<Self, RingError> {
        let stride = slot_len.div_ceil(4096) * 4096;
        let bytes = (stride * slots.max(1)).max(4096);
        let map = MmapMut::map_anon(bytes).map_err(|cause| RingError::Buffers { bytes, cause })?;
        Ok(AlignedBuffers {
            map,
            slot_len,
            stride,
            slots,
        })
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Usable length of each slot.
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// The bytes of `slot`.
    pub fn slot(&self, slot: u32) -> &[u8] {
        let start = slot as usize * self.stride;
        &self.map[start..start + self.slot_len]
    }

    /// The bytes of `slot`, writable.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let start = slot as usize * self.stride;
        &mut self.map[start..start + self.slot_len]
    }

    /// Raw pointer to the start of `slot`, for the kernel; valid while `self` lives.
    pub fn slot_ptr(&mut self, slot: u32) -> *mut u8 {
        assert!(
            (slot as usize) < self.slots,
            "buffer slot {slot} out of range"
        );
        let start = slot as usize * self.stride;
        // The index is checked above, so the pointer stays inside the mapping.
        self.map[start..].as_mut_ptr()
    }

    /// One iovec per slot, for `io_uring_register_buffers`.
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        (0..self.slots as u32)
            .map(|s| libc::iovec {
                iov_base: self.slot_ptr(s).cast(),
                iov_len: self.slot_len,
            })
            .collect()
    }
}
