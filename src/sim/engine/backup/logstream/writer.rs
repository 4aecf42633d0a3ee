//! Writes a log backup stream: log blocks gathered into a block of up to MaxTransferSize of
//! log, each full block written in one sequential write at the end of the last; what was
//! written is kept (each block's CRC, the LSN ranges) for the verify-only pass and the journal.

use std::sync::Arc;

use super::{seal, TrnHead, FLAG_END, HEADER};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::sim::engine::logblock::NO_PREV;
use crate::sim::engine::logblock::{self, LogBlock};

/// What a finished log backup holds, as its writer knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrnWritten {
    /// Each block's CRC, in stream order (the END block's included).
    pub crcs: Vec<u32>,
    /// Log blocks carried.
    pub blocks: u64,
    /// Bytes of the stream.
    pub bytes: u64,
    /// The LSN range carried, per log file: (file id, first LSN, end LSN).
    pub ranges: Vec<(u32, u64, u64)>,
}

/// A log backup stream being written: log blocks gathered into a block of up to `capacity`
/// bytes of log, each full block written in one sequential write.
pub struct TrnWriter {
    storage: Arc<dyn Storage>,
    block: AlignedBuf,
    capacity: usize,
    head: TrnHead,
    written: TrnWritten,
}

impl TrnWriter {
    /// A writer of log backup `backup_no` to `storage` (emptied first), up to `capacity`
    /// bytes of log a block (MaxTransferSize).
    pub fn new(
        storage: Arc<dyn Storage>,
        capacity: usize,
        run_id: u64,
        backup_no: u64,
    ) -> std::io::Result<TrnWriter> {
        let capacity = capacity.max(logblock::MAX_LOG_BLOCK as usize);
        storage.set_len(0)?;
        Ok(TrnWriter {
            block: AlignedBuf::new(HEADER + capacity.next_multiple_of(HEADER))?,
            storage,
            capacity,
            head: TrnHead {
                run_id,
                backup_no,
                ..TrnHead::default()
            },
            written: TrnWritten::default(),
        })
    }

    /// Adds one log block `b` of file `file_id` (`bytes`, whole) as the log reader read it.
    pub fn push(&mut self, file_id: u32, b: &LogBlock, bytes: &[u8]) -> std::io::Result<()> {
        let len = bytes.len();
        let other_file = self.head.payload > 0 && self.head.file_id != file_id;
        if other_file || self.used() + len > self.capacity {
            self.flush(0)?;
        }
        if self.head.payload == 0 {
            self.head.file_id = file_id;
            self.head.first_lsn = b.lsn;
            self.head.prev_lsn = b.prev_lsn;
        }
        let at = HEADER + self.used();
        self.block[at..at + len].copy_from_slice(bytes);
        self.head.payload += len as u64;
        self.head.end_lsn = b.lsn + u64::from(b.len);
        self.written.blocks += 1;
        match self.written.ranges.last_mut() {
            Some(r) if r.0 == file_id => r.2 = self.head.end_lsn,
            _ => self
                .written
                .ranges
                .push((file_id, b.lsn, self.head.end_lsn)),
        }
        Ok(())
    }

    /// Bytes of log gathered in the block (at most the capacity, a `usize`).
    fn used(&self) -> usize {
        usize::try_from(self.head.payload).unwrap_or(usize::MAX)
    }

    /// Writes what was gathered as one block (`flags` FLAG_END for the END block).
    fn flush(&mut self, flags: u32) -> std::io::Result<()> {
        if self.head.payload == 0 && flags & FLAG_END == 0 {
            return Ok(());
        }
        let mut head = self.head;
        head.flags = flags;
        head.block_no = self.written.crcs.len() as u64;
        head.offset = self.written.bytes;
        if flags & FLAG_END != 0 {
            head.total_blocks = self.written.blocks;
            // The whole backup's range: from the first range's start to the last one's end,
            // and the file of the last block carried.
            let (first, last) = (self.written.ranges.first(), self.written.ranges.last());
            head.first_lsn = first.map_or(0, |r| r.1);
            head.end_lsn = last.map_or(0, |r| r.2);
            head.file_id = last.map_or(0, |r| r.0);
            head.prev_lsn = NO_PREV;
        }
        let len = head.len();
        let used = HEADER + self.used();
        self.block[used..len].fill(0);
        let crc = seal(&head, &mut self.block);
        self.storage.write_at(&self.block[..len], head.offset)?;
        self.written.crcs.push(crc);
        self.written.bytes += len as u64;
        self.head.payload = 0;
        Ok(())
    }

    /// Where the next block goes (a failed write's offset).
    pub fn position(&self) -> u64 {
        self.written.bytes
    }

    /// Writes the last log blocks and the END block and makes the stream durable.
    pub fn finish(mut self) -> std::io::Result<TrnWritten> {
        self.flush(0)?;
        self.flush(FLAG_END)?;
        self.storage.sync_data()?;
        Ok(self.written)
    }
}
