//! Writes a backup stream: pages are gathered into a block of up to MaxTransferSize of pages,
//! and each full block goes to the stream in one sequential write at the end of the last (the
//! backup device's large sequential writes). What was written is kept — each block's CRC and
//! the pages it carried — so the verify-only pass can check the stream against what was read.

use std::sync::Arc;

use super::{seal, BlockHead, Carried, BLOCK_HEADER, FLAG_END, MAX_BLOCK_PAGES};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::PAGE_SIZE;

/// What a finished stream holds, as its writer knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Each block's CRC, in stream order (the end block's included).
    pub crcs: Vec<u32>,
    /// Every page carried, in stream order.
    pub pages: Vec<Carried>,
    /// Bytes of the stream.
    pub bytes: u64,
}

/// A stream being written.
pub struct StreamWriter {
    storage: Arc<dyn Storage>,
    block: AlignedBuf,
    block_pages: usize,
    run_id: u64,
    backup_no: u64,
    pending: Vec<Carried>,
    written: Written,
}

impl std::fmt::Debug for StreamWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWriter")
            .field("path", &self.storage.path())
            .field("blocks", &self.written.crcs.len())
            .finish()
    }
}

impl StreamWriter {
    /// A writer of blocks of up to `block_pages` pages to `storage`, emptied first.
    pub fn new(
        storage: Arc<dyn Storage>,
        block_pages: usize,
        run_id: u64,
        backup_no: u64,
    ) -> std::io::Result<StreamWriter> {
        let block_pages = block_pages.clamp(1, MAX_BLOCK_PAGES);
        storage.set_len(0)?;
        Ok(StreamWriter {
            block: AlignedBuf::new(BLOCK_HEADER + block_pages * PAGE_SIZE)?,
            storage,
            block_pages,
            run_id,
            backup_no,
            pending: Vec::with_capacity(block_pages),
            written: Written::default(),
        })
    }

    /// Adds one page as it was read; writes the block when it is full.
    pub fn push(&mut self, c: Carried, bytes: &[u8]) -> std::io::Result<()> {
        let at = BLOCK_HEADER + self.pending.len() * PAGE_SIZE;
        self.block[at..at + PAGE_SIZE].copy_from_slice(&bytes[..PAGE_SIZE]);
        self.pending.push(c);
        if self.pending.len() == self.block_pages {
            self.flush(0)?;
        }
        Ok(())
    }

    /// Writes the pages gathered so far as one block (`flags` FLAG_END for the end block).
    fn flush(&mut self, flags: u32) -> std::io::Result<()> {
        if self.pending.is_empty() && flags & FLAG_END == 0 {
            return Ok(());
        }
        let pages = std::mem::take(&mut self.pending);
        let head = BlockHead {
            flags,
            run_id: self.run_id,
            backup_no: self.backup_no,
            block_no: self.written.crcs.len() as u64,
            offset: self.written.bytes,
            total_pages: if flags & FLAG_END != 0 {
                self.written.pages.len() as u64
            } else {
                0
            },
            pages,
            crc: 0,
        };
        let len = head.len();
        let crc = seal(&head, &mut self.block);
        self.storage.write_at(&self.block[..len], head.offset)?;
        self.written.crcs.push(crc);
        self.written.pages.extend_from_slice(&head.pages);
        self.written.bytes += len as u64;
        self.pending = head.pages;
        self.pending.clear();
        Ok(())
    }

    /// Pages gathered but not yet written.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Writes the last pages and the end block, makes the stream durable; returns what it holds.
    pub fn finish(mut self) -> std::io::Result<Written> {
        self.flush(0)?;
        self.flush(FLAG_END)?;
        self.storage.sync_data()?;
        Ok(self.written)
    }

    /// Where the next block goes: the stream's length so far (a failed write's offset).
    pub fn position(&self) -> u64 {
        self.written.bytes
    }

    /// The stream's storage.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }
}
