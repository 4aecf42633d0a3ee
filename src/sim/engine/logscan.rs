//! Reading the log back: walks the block chain backwards from the last durable block and
//! checks every block it can still find (the circular area keeps about one lap).

use std::io;

use memmap2::MmapMut;

use super::logblock::{self, LogBlockError, Want, MIN_LOG_UNIT};
use super::logio::{LogGate, LogIo};
use super::wal::NO_PREV;
use crate::io::Storage;

/// A log block that is not what the chain says it must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogProblem {
    /// LSN expected at this place.
    pub lsn: u64,
    /// File offset read.
    pub offset: u64,
    /// What is wrong.
    pub error: LogBlockError,
}

/// Where the chain walk starts and what bounds it.
#[derive(Debug, Clone, Copy)]
pub struct ChainSpec {
    /// Run id of the file set.
    pub run_id: u64,
    /// File id of the log file.
    pub file_id: u32,
    /// Length of the circular log area.
    pub area_len: u64,
    /// LSN of the last durable block.
    pub last_block: u64,
    /// End of the durable log.
    pub durable_end: u64,
    /// Most blocks to check.
    pub max_blocks: usize,
    /// The log's unit (its sector size): the first read of a block is one unit.
    pub unit: u32,
}

/// Result of a chain walk.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ChainReport {
    /// Blocks read and found valid.
    pub blocks_ok: usize,
    /// The first problem met (the walk stops there: the chain cannot be followed further).
    pub problem: Option<LogProblem>,
    /// The reads the walk made, for the caller's statistics.
    pub reads: Vec<LogIo>,
}

/// Walks the chain backwards from `spec.last_block`, each read through `gate`.
pub fn scan_chain(
    storage: &dyn Storage,
    spec: &ChainSpec,
    gate: &LogGate<'_>,
) -> io::Result<ChainReport> {
    let mut buf = MmapMut::map_anon(1 << 20)?;
    let mut report = ChainReport::default();
    let mut lsn = spec.last_block;
    let oldest_intact = spec.durable_end.saturating_sub(spec.area_len);
    while lsn != NO_PREV && lsn >= oldest_intact && report.blocks_ok < spec.max_blocks {
        let at = Read::at(storage, gate, spec, lsn);
        let offset = at.offset;
        match read_block(&at, &mut buf, spec, &mut report.reads)? {
            Ok(block) => {
                report.blocks_ok += 1;
                if block.prev_lsn != NO_PREV && block.prev_lsn >= lsn {
                    report.problem = Some(LogProblem {
                        lsn,
                        offset,
                        error: LogBlockError::WrongLsn {
                            found: block.prev_lsn,
                            found_wrap: block.wrap,
                            expected: lsn,
                        },
                    });
                    break;
                }
                lsn = block.prev_lsn;
            }
            Err(error) => {
                report.problem = Some(LogProblem { lsn, offset, error });
                break;
            }
        }
    }
    Ok(report)
}

/// Reads and checks the one block that must be at `lsn` (a re-read after a problem); the
/// reads it made are added to `reads`.
pub fn check_block(
    storage: &dyn Storage,
    spec: &ChainSpec,
    lsn: u64,
    gate: &LogGate<'_>,
    reads: &mut Vec<LogIo>,
) -> io::Result<Result<(), LogBlockError>> {
    let mut buf = MmapMut::map_anon(1 << 20)?;
    let at = Read::at(storage, gate, spec, lsn);
    Ok(read_block(&at, &mut buf, spec, reads)?.map(|_| ()))
}

/// Where one block is read from, and through which controls.
struct Read<'a, 'g> {
    storage: &'a dyn Storage,
    gate: &'a LogGate<'g>,
    offset: u64,
    lsn: u64,
}

impl<'a, 'g> Read<'a, 'g> {
    /// The place of the block that must be at `lsn` in the circular area.
    fn at(storage: &'a dyn Storage, gate: &'a LogGate<'g>, spec: &ChainSpec, lsn: u64) -> Self {
        Read {
            storage,
            gate,
            offset: logblock::LOG_AREA_START + lsn % spec.area_len,
            lsn,
        }
    }

    /// One read of `buf` at `at` bytes past the block's start.
    fn read(&self, buf: &mut [u8], at: u64, reads: &mut Vec<LogIo>) -> io::Result<usize> {
        let (n, io) = self.gate.request(buf.len() as u64, true, || {
            self.storage.read_at(buf, self.offset + at)
        })?;
        reads.push(io);
        Ok(n)
    }
}

fn read_block(
    at: &Read<'_, '_>,
    buf: &mut MmapMut,
    spec: &ChainSpec,
    reads: &mut Vec<LogIo>,
) -> io::Result<Result<logblock::LogBlock, LogBlockError>> {
    let lsn = at.lsn;
    let unit = spec.unit.max(MIN_LOG_UNIT) as usize;
    let n = at.read(&mut buf[..unit], 0, reads)?;
    if n < unit {
        return Ok(Err(LogBlockError::NeverWritten));
    }
    let header = match logblock::peek(&buf[..unit]) {
        Ok(h) => h,
        Err(e) => return Ok(Err(e)),
    };
    let len = extent(spec, lsn, header.len, buf.len());
    if len > unit {
        at.read(&mut buf[unit..len], unit as u64, reads)?;
    }
    Ok(check(&buf[..len], spec, lsn))
}

/// How many bytes the block at `lsn` whose header says `header_len` is read as: whole units,
/// at least one, never past the end of the area nor past `have` bytes of buffer (a damaged
/// length is then caught by the check). The backward walk and the forward reader share it.
pub(super) fn extent(spec: &ChainSpec, lsn: u64, header_len: u32, have: usize) -> usize {
    let unit = spec.unit.max(MIN_LOG_UNIT) as usize;
    let room = (spec.area_len - lsn % spec.area_len) as usize;
    (header_len as usize).clamp(unit, room.min(have).max(unit)) / unit * unit
}

/// The check of one block read whole: what must be at `lsn` of this log (shared by the
/// backward walk and the forward reader).
pub(super) fn check(
    block: &[u8],
    spec: &ChainSpec,
    lsn: u64,
) -> Result<logblock::LogBlock, LogBlockError> {
    let want = Want {
        run_id: spec.run_id,
        file_id: spec.file_id,
        lsn,
        unit: spec.unit,
    };
    logblock::verify(block, &want)
}
