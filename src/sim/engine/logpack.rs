//! Packing log records into log blocks, as SQL Server's log manager does: records are appended
//! to the open block until a commit flushes it or it reaches 60 KB ([`MAX_LOG_BLOCK`]); a
//! closed block is rounded up to the log's unit and waits to be written. Pure bookkeeping, no
//! I/O: the [`Wal`](super::wal::Wal) holds one under its lock.
//!
//! A record's LSN is the stream position of its first byte inside its block (the block's LSN
//! plus the header and the records before it), so a data page carrying it may be written once
//! the log is durable past it: once its whole block is.

use super::logblock::NO_PREV;
use super::logblock::{self, LogBlock, LOG_HEADER_LEN, MAX_LOG_BLOCK};

/// The block records are being packed into.
#[derive(Debug, Clone, Copy)]
struct OpenBlock {
    lsn: u64,
    /// Bytes used: the header and the records so far.
    used: u32,
    /// Most bytes the block may reach (60 KB, or less before the end of the area).
    cap: u32,
    records: u32,
}

/// The records appended and not yet handed to a writer.
#[derive(Debug)]
pub struct Packer {
    run_id: u64,
    file_id: u32,
    area_len: u64,
    unit: u32,
    /// Where the next block starts (always a multiple of the unit).
    next_lsn: u64,
    /// LSN of the last block closed.
    prev_lsn: u64,
    open: Option<OpenBlock>,
    closed: Vec<LogBlock>,
}

impl Packer {
    /// An empty packer for a log of `area_len` bytes written in `unit`s.
    pub fn new(run_id: u64, file_id: u32, area_len: u64, unit: u32) -> Packer {
        Packer {
            run_id,
            file_id,
            area_len,
            unit,
            next_lsn: 0,
            prev_lsn: NO_PREV,
            open: None,
            closed: Vec::new(),
        }
    }

    /// New blocks start at `start` (a multiple of the unit), after an existing log.
    pub fn continue_at(&mut self, start: u64) {
        self.next_lsn = start;
        self.open = None;
    }

    /// Appends a record of `bytes` bytes; returns its LSN.
    pub fn append(&mut self, bytes: u32) -> u64 {
        let block_cap = self.block_cap();
        let room = logblock::record_room(bytes, block_cap);
        if self.open.is_some_and(|o| o.used + room > o.cap) {
            self.close();
        }
        let open = match self.open {
            Some(o) => o,
            None => self.open_block(LOG_HEADER_LEN as u32 + room),
        };
        let room = room.min(open.cap - open.used);
        let lsn = open.lsn + u64::from(open.used);
        let open = OpenBlock {
            used: open.used + room,
            records: open.records + 1,
            ..open
        };
        self.open = Some(open);
        if open.cap - open.used < logblock::RECORD_ALIGN {
            // Full: written with the next flush, whoever asks for it.
            self.close();
        }
        lsn
    }

    /// Closes the open block if `lsn` is in it (`NO_PREV`: whatever is open), so that a flush
    /// to `lsn` writes it: the commit that ends a block.
    pub fn close_through(&mut self, lsn: u64) {
        if self.open.is_some_and(|o| lsn == NO_PREV || lsn >= o.lsn) {
            self.close();
        }
    }

    /// The closed blocks, in LSN order, handed to the writer.
    pub fn take_closed(&mut self) -> Vec<LogBlock> {
        std::mem::take(&mut self.closed)
    }

    /// End of everything appended (the open block counted whole units).
    pub fn appended_end(&self) -> u64 {
        self.open.map_or(self.next_lsn, |o| {
            o.lsn + u64::from(logblock::block_len(o.used, self.unit))
        })
    }

    /// The largest block the log takes: 60 KB in whole units, at most the area.
    fn block_cap(&self) -> u32 {
        let unit = self.unit.max(logblock::MIN_LOG_UNIT);
        let cap = u64::from(MAX_LOG_BLOCK / unit * unit).min(self.area_len);
        cap as u32
    }

    /// Opens a block at the next LSN that has room for `need` bytes before the end of the
    /// area: a block never straddles it, so the rest of a lap is skipped.
    fn open_block(&mut self, need: u32) -> OpenBlock {
        let need = u64::from(logblock::block_len(need, self.unit));
        let within = self.next_lsn % self.area_len;
        if within + need > self.area_len {
            self.next_lsn += self.area_len - within;
        }
        let room = self.area_len - self.next_lsn % self.area_len;
        let cap = u64::from(self.block_cap()).min(room) as u32;
        OpenBlock {
            lsn: self.next_lsn,
            used: LOG_HEADER_LEN as u32,
            cap,
            records: 0,
        }
    }

    fn close(&mut self) {
        let Some(o) = self.open.take() else {
            return;
        };
        let len = logblock::block_len(o.used, self.unit).min(o.cap);
        self.closed.push(LogBlock {
            run_id: self.run_id,
            file_id: self.file_id,
            len,
            lsn: o.lsn,
            prev_lsn: self.prev_lsn,
            wrap: (o.lsn / self.area_len) as u32,
            time_us: 0,
            records: o.records,
        });
        self.prev_lsn = o.lsn;
        self.next_lsn = o.lsn + u64::from(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_share_a_block_until_a_commit_closes_it() {
        let mut p = Packer::new(1, 1, 1 << 20, 512);
        let a = p.append(64);
        let b = p.append(100);
        assert_eq!(
            (a, b),
            (64, 128),
            "records follow the header and each other"
        );
        p.close_through(b);
        let blocks = p.take_closed();
        assert_eq!(blocks.len(), 1);
        assert_eq!(
            (blocks[0].lsn, blocks[0].len, blocks[0].records),
            (0, 512, 2)
        );
        let c = p.append(64);
        assert_eq!(c, 512 + 64, "the next block follows in the stream");
        assert_eq!(p.appended_end(), 1024);
    }

    #[test]
    fn a_block_never_passes_60_kb() {
        let mut p = Packer::new(1, 1, 1 << 20, 512);
        let mut last = 0;
        for _ in 0..100 {
            last = p.append(8000);
        }
        p.close_through(last);
        let blocks = p.take_closed();
        assert!(blocks.iter().all(|b| b.len <= MAX_LOG_BLOCK), "{blocks:?}");
        let (last, full) = blocks.split_last().expect("blocks");
        assert!(full.iter().all(|b| b.records == 7), "{blocks:?}");
        assert!(last.records <= 7);
        assert_eq!(blocks.iter().map(|b| b.records).sum::<u32>(), 100);
        for w in blocks.windows(2) {
            assert_eq!(w[0].lsn + u64::from(w[0].len), w[1].lsn);
            assert_eq!(w[1].prev_lsn, w[0].lsn);
        }
    }

    #[test]
    fn a_block_never_straddles_the_end_of_the_area() {
        let area = 64 * 1024;
        let mut p = Packer::new(1, 1, area, 4096);
        let mut last = 0;
        for _ in 0..200 {
            last = p.append(3000);
            p.close_through(last);
        }
        let blocks = p.take_closed();
        assert!(blocks
            .iter()
            .all(|b| b.lsn % area + u64::from(b.len) <= area && b.len % 4096 == 0));
        assert!(last > 2 * area, "wrapped");
    }
}
