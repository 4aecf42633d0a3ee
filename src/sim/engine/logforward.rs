//! Reading the log forward (issue #24 §1), as SQL Server's recovery, log backup and
//! Availability Group sends do: from a block's LSN to the durable end, in large sequential
//! reads of up to [`MAX_FORWARD_READ`] (120 KB), following the stream and checking every block
//! with the backward walk's check ([`super::logscan`]) and its link to the block before.
//!
//! A block never straddles the end of the circular area: when the rest of a lap has no room for
//! the next block the writer skips it ([`super::logpack`]). So where a block should follow and
//! something else is found, the reader looks at the start of the next lap: a block there that
//! links back to the one before is the skip, else the first look was the problem.
//!
//! Where it runs: at the audit's log-chain check ([`crate::sim::engine`]'s callers in
//! `sim::actors::log_writer`), in addition to the backward walk, over what the log wrote since
//! the last forward read — what a log backup reads, and the next issue's log backup (#25) will
//! call it from the backup's LSN. The backward walk stays after every checkpoint and at the
//! audit: it reaches from the newest block, which a forward read can only reach by reading
//! everything before it.

use std::io;

use memmap2::MmapMut;

use super::logblock::NO_PREV;
use super::logblock::{self, LogBlock, LogBlockError, MIN_LOG_UNIT};
use super::logio::{LogGate, LogIo};
use super::logscan::{check, extent, ChainSpec, LogProblem};
use crate::io::Storage;

/// The largest forward read: SQL Server reads the log forward in up to 120 KB.
pub const MAX_FORWARD_READ: usize = 120 * 1024;

/// What a forward read found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ForwardReport {
    /// The headers of the blocks read and found valid, in LSN order.
    pub blocks: Vec<LogBlock>,
    /// The first problem met (the read stops there).
    pub problem: Option<LogProblem>,
    /// The reads made, for the caller's statistics.
    pub reads: Vec<LogIo>,
}

/// Reads the log forward from the block at `from` (or, when the writer skipped the rest of that
/// lap, at the start of the next) up to `spec.durable_end` (at most `spec.max_blocks` blocks),
/// each read through `gate`; `visit` is given every valid block whole, in LSN order. `from`
/// must be where a block of the last lap starts (no older than `durable_end - area_len`);
/// `after` is the LSN of the block before it, which the first block must link to (`NO_PREV`:
/// not known, not checked).
pub fn read_forward(
    storage: &dyn Storage,
    spec: &ChainSpec,
    after: u64,
    from: u64,
    gate: &LogGate<'_>,
    mut visit: impl FnMut(&LogBlock, &[u8]),
) -> io::Result<ForwardReport> {
    let mut r = Reader {
        storage,
        spec,
        gate,
        buf: MmapMut::map_anon(MAX_FORWARD_READ)?,
        start: 0,
        have: 0,
        report: ForwardReport::default(),
    };
    let unit = u64::from(spec.unit.max(MIN_LOG_UNIT));
    let end = spec.durable_end;
    let mut lsn = from;
    let mut prev = (after != NO_PREV).then_some(after);
    while lsn < end && r.report.blocks.len() < spec.max_blocks {
        let found = match r.block_at(lsn)? {
            Ok(b) if prev.is_none_or(|p| b.prev_lsn == p) => Ok(b),
            Ok(b) => Err(LogBlockError::WrongLsn {
                found: b.prev_lsn,
                found_wrap: b.wrap,
                expected: prev.unwrap_or_default(),
            }),
            Err(e) => Err(e),
        };
        let found = match found {
            Ok(b) => Ok((lsn, b)),
            Err(e) => {
                // The writer skips the rest of a lap that has no room for the next block.
                let lap = (lsn / spec.area_len + 1) * spec.area_len;
                let skipped = if !lsn.is_multiple_of(spec.area_len) && lap < end {
                    r.block_at(lap)?
                        .ok()
                        .filter(|b| prev.is_none_or(|p| b.prev_lsn == p))
                } else {
                    None
                };
                skipped.map(|b| (lap, b)).ok_or(e)
            }
        };
        match found {
            Ok((at, b)) => {
                let off = (at - r.start) as usize;
                visit(&b, &r.buf[off..off + b.len as usize]);
                r.report.blocks.push(b);
                prev = Some(b.lsn);
                lsn = at + u64::from(b.len).max(unit);
            }
            Err(error) => {
                r.report.problem = Some(LogProblem {
                    lsn,
                    offset: logblock::LOG_AREA_START + lsn % spec.area_len,
                    error,
                });
                break;
            }
        }
    }
    Ok(r.report)
}

/// A forward read in progress: the window `[start, start + have)` of the log held in `buf`,
/// and what was read so far.
struct Reader<'a> {
    storage: &'a dyn Storage,
    spec: &'a ChainSpec,
    gate: &'a LogGate<'a>,
    buf: MmapMut,
    start: u64,
    have: usize,
    report: ForwardReport,
}

impl Reader<'_> {
    /// True when the window holds `len` bytes from `lsn`, within one lap.
    fn holds(&self, lsn: u64, len: usize) -> bool {
        lsn >= self.start
            && lsn + len as u64 <= self.start + self.have as u64
            && lsn / self.spec.area_len == self.start / self.spec.area_len
    }

    /// The block at `lsn`, read from the window, which is read anew (one read of up to
    /// 120 KB, never past the durable end or the end of the area) when it does not hold the
    /// block whole.
    fn block_at(&mut self, lsn: u64) -> io::Result<Result<LogBlock, LogBlockError>> {
        let unit = self.spec.unit.max(MIN_LOG_UNIT) as usize;
        if !self.holds(lsn, unit) {
            self.fill(lsn)?;
        }
        let off = (lsn - self.start) as usize;
        if self.have < off + unit {
            return Ok(Err(LogBlockError::NeverWritten));
        }
        let header = match logblock::peek(&self.buf[off..off + unit]) {
            Ok(h) => h,
            Err(e) => return Ok(Err(e)),
        };
        let len = extent(self.spec, lsn, header.len, MAX_FORWARD_READ);
        if !self.holds(lsn, len) {
            self.fill(lsn)?;
        }
        let off = (lsn - self.start) as usize;
        let len = len.min(self.have - off) / unit * unit;
        Ok(check(&self.buf[off..off + len], self.spec, lsn))
    }

    /// Reads the window from `lsn`: up to 120 KB, to the durable end (rounded up to the unit)
    /// or the end of the area, whichever is first.
    fn fill(&mut self, lsn: u64) -> io::Result<()> {
        let spec = self.spec;
        let unit = u64::from(spec.unit.max(MIN_LOG_UNIT));
        let room = spec.area_len - lsn % spec.area_len;
        let to_end = spec.durable_end.saturating_sub(lsn).div_ceil(unit) * unit;
        let len = (MAX_FORWARD_READ as u64).min(room).min(to_end.max(unit)) as usize;
        let offset = logblock::LOG_AREA_START + lsn % spec.area_len;
        let (storage, buf) = (self.storage, &mut self.buf);
        let (n, io) = self.gate.request(len as u64, true, || {
            storage.read_at(&mut buf[..len], offset)
        })?;
        self.report.reads.push(io);
        self.start = lsn;
        self.have = n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::sim::engine::logblock::NO_PREV as NONE;
    use crate::sim::engine::logio::OwnControls;
    use crate::sim::engine::wal::Wal;

    /// A log file of `len` bytes in memory (its backend seeded with `seed`) and its WAL.
    fn log_of(seed: u64, path: &str, len: u64) -> (Arc<dyn crate::io::Storage>, Wal) {
        let backend = crate::io::FaultyBackend::new(seed);
        let storage = crate::io::Backend::open(
            &backend,
            std::path::Path::new(path),
            crate::io::OpenOptions::default(),
        )
        .expect("open");
        storage.set_len(len).expect("size");
        let wal = Wal::new(Arc::clone(&storage), 4, 2, len, false, 512).expect("wal");
        (storage, wal)
    }

    #[test]
    fn reads_back_exactly_the_blocks_written_in_order_across_a_wrap_in_reads_of_at_most_120_kb() {
        let len = 8192 + 512 * 1024;
        let (storage, wal) = log_of(11, "/f.ldx", len);
        let own = OwnControls::default();
        let gate = own.gate();
        // Into the second half of a lap first, then the blocks the reader must return: three
        // quarters of a lap from there, so over the end of the area.
        let mut i = 0u32;
        while wal.durable_end() < wal.area_len()
            || wal.durable_end() % wal.area_len() < wal.area_len() / 2
        {
            let l = wal.append(200 + (i * 977) % 9000);
            if i.is_multiple_of(3) {
                wal.flush_to(l, &gate).expect("flush");
            }
            i += 1;
        }
        let (wal_before, from) = (wal.last_block(), wal.durable_end());
        let mut written = Vec::new();
        while wal.durable_end() < from + wal.area_len() * 3 / 4 {
            for i in 0..7u32 {
                let l = wal.append(100 + (i * 4099) % 12_000);
                if i.is_multiple_of(2) {
                    wal.flush_to(l, &gate).expect("flush");
                }
            }
            wal.flush_all(&gate).expect("flush");
        }
        // The blocks written since `from`, as the chain holds them (walked back from the end).
        let spec = ChainSpec {
            run_id: 4,
            file_id: 2,
            area_len: wal.area_len(),
            last_block: wal.last_block(),
            durable_end: wal.durable_end(),
            max_blocks: usize::MAX,
            unit: 512,
        };
        let mut lsn = spec.last_block;
        while lsn >= from && lsn != NONE {
            let mut b = vec![0u8; 61_440];
            storage.read_at(&mut b, wal.offset_of(lsn)).expect("read");
            let h = logblock::peek(&b).expect("block");
            written.push(h.lsn);
            lsn = h.prev_lsn;
        }
        written.reverse();
        let lap = |l: &u64| l / wal.area_len();
        assert!(
            written.first().map(lap) < written.last().map(lap),
            "the blocks wrap round the area: {written:?}"
        );
        let mut whole = 0;
        let after = wal_before;
        let report = read_forward(storage.as_ref(), &spec, after, from, &gate, |b, bytes| {
            assert_eq!(bytes.len(), b.len as usize);
            whole += 1;
        })
        .expect("read");
        assert_eq!(report.problem, None);
        let read: Vec<u64> = report.blocks.iter().map(|b| b.lsn).collect();
        assert_eq!(read, written, "exactly the blocks written, in order");
        assert_eq!(whole, written.len());
        assert!(report
            .reads
            .iter()
            .all(|r| r.bytes <= MAX_FORWARD_READ as u64));
        assert!(
            report.reads.iter().any(|r| r.bytes > 7680),
            "large sequential reads: {:?}",
            report.reads.iter().map(|r| r.bytes).collect::<Vec<_>>()
        );
        assert!(
            report.reads.len() * 4 < written.len(),
            "several blocks per read"
        );
    }

    #[test]
    fn a_damaged_block_stops_the_forward_read_where_it_is() {
        let len = 8192 + 256 * 1024;
        let (storage, wal) = log_of(12, "/d.ldx", len);
        let own = OwnControls::default();
        let gate = own.gate();
        let mut starts = Vec::new();
        for i in 0..40u32 {
            let l = wal.append(1000 + i * 10);
            wal.flush_to(l, &gate).expect("flush");
            starts.push(wal.last_block());
        }
        let victim = starts[20];
        storage
            .write_at(&[0xEE; 512], wal.offset_of(victim) + 512)
            .ok();
        let spec = ChainSpec {
            run_id: 4,
            file_id: 2,
            area_len: wal.area_len(),
            last_block: wal.last_block(),
            durable_end: wal.durable_end(),
            max_blocks: usize::MAX,
            unit: 512,
        };
        let report = read_forward(
            storage.as_ref(),
            &spec,
            NO_PREV,
            starts[0],
            &gate,
            |_, _| {},
        )
        .expect("read");
        assert_eq!(report.blocks.len(), 20);
        assert_eq!(report.problem.map(|p| p.lsn), Some(victim));
    }
}
