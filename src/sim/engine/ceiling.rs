//! The durable generation ceiling of a data file: a promise, kept in the file's header page,
//! that no page of the file was ever issued a generation above it.
//!
//! Before any write may carry a generation above the ceiling, the header is rewritten with a
//! ceiling [`STEP`] higher and made durable (fdatasync). A run that restarts over the file —
//! `--resume`, or any later opening — starts every page above the ceiling it reads, so no
//! generation is issued twice, not even one a lost write carried and the disk no longer shows
//! (docs/page-format.md §2.1).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;

use crate::io::{AlignedBuf, Storage};
use crate::page::{generation_ceiling, set_generation_ceiling, PAGE_SIZE};

/// How far each rewrite of the header raises the ceiling: one header write and fdatasync per
/// this many writes of the file's most written page, and at most this many generations skipped
/// by each restart.
pub const STEP: u64 = 4096;

/// The ceiling of one data file and the image of its header page.
#[derive(Debug)]
pub struct Ceiling {
    storage: Arc<dyn Storage>,
    /// Generations up to this one are durably covered by the header.
    reserved: AtomicU64,
    /// The header page as it is on disk; held while it is rewritten.
    header: Mutex<AlignedBuf>,
}

impl Ceiling {
    /// Reads the header page of `storage`; returns the ceiling and what the header records.
    pub fn open(storage: Arc<dyn Storage>) -> io::Result<(Ceiling, u64)> {
        let mut header = AlignedBuf::new(PAGE_SIZE)?;
        let n = storage.read_at(&mut header, 0)?;
        if n < PAGE_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the header page is short ({n} bytes)"),
            ));
        }
        let on_disk = generation_ceiling(&header);
        let c = Ceiling {
            storage,
            reserved: AtomicU64::new(on_disk),
            header: Mutex::new(header),
        };
        Ok((c, on_disk))
    }

    /// The ceiling the header holds durably.
    pub fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::Acquire)
    }

    /// Makes sure generation `gen` is covered by the durable ceiling before a write carries
    /// it: rewrites and syncs the header when it is not. Only a write of the header fails this.
    pub fn reserve(&self, gen: u64) -> io::Result<()> {
        if gen <= self.reserved() {
            return Ok(());
        }
        let mut header = self.header.lock();
        if gen <= self.reserved() {
            return Ok(());
        }
        self.rewrite(&mut header, gen.saturating_add(STEP))
    }

    /// Raises the ceiling to at least `to` now (a restart, before the first write).
    pub fn raise(&self, to: u64) -> io::Result<()> {
        let mut header = self.header.lock();
        if to <= self.reserved() {
            return Ok(());
        }
        self.rewrite(&mut header, to)
    }

    fn rewrite(&self, header: &mut AlignedBuf, ceiling: u64) -> io::Result<()> {
        set_generation_ceiling(header, ceiling);
        // Only bytes 24..32 and the checksum change, both in the first sector: a tear at a
        // sector boundary leaves the old or the new header, each valid.
        self.storage.write_at(header, 0)?;
        self.storage.sync_data()?;
        self.reserved.store(ceiling, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{Backend, FaultyBackend, OpenOptions};
    use crate::page::{FileHeader, FileRole};

    fn file_with_header() -> Arc<dyn Storage> {
        let b = FaultyBackend::new(1);
        let s = b
            .open(std::path::Path::new("/mem/a.mdx"), OpenOptions::default())
            .expect("open");
        let h = FileHeader {
            run_id: 3,
            file_id: 0,
            page_size: PAGE_SIZE as u32,
            role: FileRole::Data,
            tool_version: String::new(),
            created_us: 0,
            sector_size: 512,
        };
        let mut buf = AlignedBuf::new(PAGE_SIZE).expect("buf");
        buf.copy_from_slice(&h.encode());
        s.write_at(&buf, 0).expect("write header");
        s
    }

    #[test]
    fn reserving_past_the_ceiling_rewrites_the_header_durably() {
        let s = file_with_header();
        let (c, on_disk) = Ceiling::open(Arc::clone(&s)).expect("open");
        assert_eq!(on_disk, 0);
        c.reserve(1).expect("reserve");
        assert_eq!(c.reserved(), 1 + STEP);
        c.reserve(STEP).expect("within the ceiling: no rewrite");
        assert_eq!(c.reserved(), 1 + STEP);
        let (again, on_disk) = Ceiling::open(Arc::clone(&s)).expect("reopen");
        assert_eq!(on_disk, 1 + STEP, "the header holds the new ceiling");
        again.raise(10 * STEP).expect("raise");
        let (_, on_disk) = Ceiling::open(s).expect("reopen");
        assert_eq!(on_disk, 10 * STEP);
    }
}
