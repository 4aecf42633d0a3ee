//! Reading the log back: walks the block chain backwards from the last durable block and
//! checks every block it can still find (the circular area keeps about one lap).

use std::io;

use memmap2::MmapMut;

use super::logblock::{self, LogBlockError, Want, MIN_LOG_UNIT};
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
}

/// Walks the chain backwards from `spec.last_block`.
pub fn scan_chain(storage: &dyn Storage, spec: &ChainSpec) -> io::Result<ChainReport> {
    let mut buf = MmapMut::map_anon(1 << 20)?;
    let mut report = ChainReport::default();
    let mut lsn = spec.last_block;
    let oldest_intact = spec.durable_end.saturating_sub(spec.area_len);
    while lsn != NO_PREV && lsn >= oldest_intact && report.blocks_ok < spec.max_blocks {
        let offset = logblock::LOG_AREA_START + lsn % spec.area_len;
        match read_block(storage, &mut buf, offset, spec, lsn)? {
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

/// Reads and checks the one block that must be at `lsn` (a re-read after a problem).
pub fn check_block(
    storage: &dyn Storage,
    spec: &ChainSpec,
    lsn: u64,
) -> io::Result<Result<(), LogBlockError>> {
    let mut buf = MmapMut::map_anon(1 << 20)?;
    let offset = logblock::LOG_AREA_START + lsn % spec.area_len;
    Ok(read_block(storage, &mut buf, offset, spec, lsn)?.map(|_| ()))
}

fn read_block(
    storage: &dyn Storage,
    buf: &mut MmapMut,
    offset: u64,
    spec: &ChainSpec,
    lsn: u64,
) -> io::Result<Result<logblock::LogBlock, LogBlockError>> {
    let unit = spec.unit.max(MIN_LOG_UNIT) as usize;
    let n = storage.read_at(&mut buf[..unit], offset)?;
    if n < unit {
        return Ok(Err(LogBlockError::NeverWritten));
    }
    let header = match logblock::peek(&buf[..unit]) {
        Ok(h) => h,
        Err(e) => return Ok(Err(e)),
    };
    let room = (spec.area_len - lsn % spec.area_len) as usize;
    let len = (header.len as usize).clamp(unit, room.min(buf.len())) / unit * unit;
    if len > unit {
        storage.read_at(&mut buf[unit..len], offset + unit as u64)?;
    }
    let want = Want {
        run_id: spec.run_id,
        file_id: spec.file_id,
        lsn,
        unit: spec.unit,
    };
    Ok(logblock::verify(&buf[..len], &want))
}
