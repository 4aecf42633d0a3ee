//! Reading the log back: the one walk back along the block chain ([`walk_back`], bounded by
//! [`lap_back`]: the circular area keeps about one lap), over any source of blocks: storage
//! through the gate while the run goes on ([`scan_chain`], the log reader after a checkpoint
//! and at the audit) or a file's bytes at rest (`sim::check::scan::scan_log`, for `verify`
//! and `run --resume`). Each caller decides what a [`Break`] means. The forward readers read
//! in the other direction: a log backup's (`logforward`, which shares this module's extent
//! and check of a block) and the `.trn` scan (which checks each block with `logblock::verify`).

use std::io;

use memmap2::MmapMut;

use super::logblock::NO_PREV;
use super::logblock::{self, LogBlockError, Want, MIN_LOG_UNIT};
use super::logio::{LogGate, LogIo};
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

/// Why a walk back along the log chain stopped before its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Break {
    /// The block that must be at the LSN is not there: what its check found.
    Block(LogBlockError),
    /// The block at the LSN is right, but points back to a block that is not earlier.
    PointsForward {
        /// The LSN it points back to.
        prev: u64,
        /// Its lap count.
        wrap: u32,
    },
}

/// What a walk back along the chain found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// Blocks found right along the chain.
    pub blocks_ok: usize,
    /// Where the chain broke (the LSN and why): the walk stops there.
    pub broken: Option<(u64, Break)>,
}

/// The oldest LSN a walk back holds whole: a lap of an area of `area` bytes back from
/// `furthest`, the furthest a write may have reached. The one bound rule of every walk back:
/// a slot older than that may hold a later lap's block, written or half written.
pub fn lap_back(furthest: u64, area: u64) -> u64 {
    furthest.saturating_sub(area)
}

/// The one walk back along the log's chain: from the block at `from`, each block's
/// `prev_lsn` in turn, down to `oldest` (see [`lap_back`]), at most `max_blocks` blocks.
/// `block_at(lsn)` reads and checks the block that must be at `lsn` wherever the log is
/// (storage through the gate while the run goes on, a file's bytes at rest); its error
/// (`E`) ends the walk as an error. Used by the live reader ([`scan_chain`]) and by the
/// at-rest scan of `verify` and `run --resume` (`sim::check::scan::scan_log`), each of which
/// decides what a break means.
pub fn walk_back<E>(
    from: u64,
    oldest: u64,
    max_blocks: usize,
    mut block_at: impl FnMut(u64) -> Result<Result<logblock::LogBlock, LogBlockError>, E>,
) -> Result<Walk, E> {
    let mut walk = Walk::default();
    let mut lsn = from;
    while lsn != NO_PREV && lsn >= oldest && walk.blocks_ok < max_blocks {
        match block_at(lsn)? {
            Ok(block) => {
                walk.blocks_ok += 1;
                if block.prev_lsn != NO_PREV && block.prev_lsn >= lsn {
                    let (prev, wrap) = (block.prev_lsn, block.wrap);
                    walk.broken = Some((lsn, Break::PointsForward { prev, wrap }));
                    break;
                }
                lsn = block.prev_lsn;
            }
            Err(error) => {
                walk.broken = Some((lsn, Break::Block(error)));
                break;
            }
        }
    }
    Ok(walk)
}

/// Walks the chain backwards from `spec.last_block` to a lap back from the durable end, each
/// read through `gate`. The writer goes on meanwhile: the caller drops a problem at a block
/// the writer has lapped since (`sim::actors::log_writer`).
pub fn scan_chain(
    storage: &dyn Storage,
    spec: &ChainSpec,
    gate: &LogGate<'_>,
) -> io::Result<ChainReport> {
    let mut buf = MmapMut::map_anon(1 << 20)?;
    let mut reads = Vec::new();
    let oldest = lap_back(spec.durable_end, spec.area_len);
    let walk = walk_back(spec.last_block, oldest, spec.max_blocks, |lsn| {
        read_block(
            &Read::at(storage, gate, spec, lsn),
            &mut buf,
            spec,
            &mut reads,
        )
    })?;
    let problem = walk.broken.map(|(lsn, broken)| LogProblem {
        lsn,
        offset: logblock::LOG_AREA_START + lsn % spec.area_len,
        error: match broken {
            Break::Block(error) => error,
            Break::PointsForward { prev, wrap } => LogBlockError::WrongLsn {
                found: prev,
                found_wrap: wrap,
                expected: lsn,
            },
        },
    });
    Ok(ChainReport {
        blocks_ok: walk.blocks_ok,
        problem,
        reads,
    })
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::convert::Infallible;

    use super::{lap_back, walk_back, Break, Walk};
    use crate::sim::engine::logblock::NO_PREV;
    use crate::sim::engine::logblock::{LogBlock, LogBlockError};

    fn block(lsn: u64, prev_lsn: u64) -> LogBlock {
        LogBlock {
            run_id: 1,
            file_id: 1,
            len: 512,
            lsn,
            prev_lsn,
            wrap: 0,
            time_us: 0,
            records: 1,
        }
    }

    /// A chain of blocks by LSN; a missing LSN reads as never written.
    fn walk(chain: &BTreeMap<u64, LogBlock>, from: u64, oldest: u64, max: usize) -> Walk {
        let read = |lsn: u64| {
            Ok::<_, Infallible>(chain.get(&lsn).copied().ok_or(LogBlockError::NeverWritten))
        };
        let Ok(walk) = walk_back(from, oldest, max, read);
        walk
    }

    fn chain(links: &[(u64, u64)]) -> BTreeMap<u64, LogBlock> {
        links.iter().map(|&(l, p)| (l, block(l, p))).collect()
    }

    #[test]
    fn the_walk_follows_the_chain_down_to_its_bound_and_no_further() {
        let c = chain(&[(0, NO_PREV), (512, 0), (1024, 512), (1536, 1024)]);
        // From the first block to the newest: every block.
        assert_eq!(walk(&c, 1536, 0, usize::MAX).blocks_ok, 4);
        // A lap of 1,024 bytes back from 2,048: the blocks from 1,024 on.
        let w = walk(&c, 1536, lap_back(2048, 1024), usize::MAX);
        assert_eq!((w.blocks_ok, w.broken), (2, None));
        // At most two blocks.
        assert_eq!(walk(&c, 1536, 0, 2).blocks_ok, 2);
        assert_eq!(lap_back(100, 1024), 0, "no bound below the log's start");
    }

    #[test]
    fn a_missing_block_and_a_block_pointing_forward_break_the_chain_where_they_are() {
        let c = chain(&[(0, NO_PREV), (1024, 512), (1536, 1024)]);
        let w = walk(&c, 1536, 0, usize::MAX);
        assert_eq!(w.blocks_ok, 2);
        assert_eq!(
            w.broken,
            Some((512, Break::Block(LogBlockError::NeverWritten)))
        );
        let c = chain(&[(0, NO_PREV), (512, 1536), (1024, 512), (1536, 1024)]);
        let w = walk(&c, 1536, 0, usize::MAX);
        assert_eq!(w.blocks_ok, 3, "the block pointing forward was read right");
        assert_eq!(
            w.broken,
            Some((
                512,
                Break::PointsForward {
                    prev: 1536,
                    wrap: 0
                }
            ))
        );
    }

    #[test]
    fn a_read_error_ends_the_walk_as_an_error() {
        let failed = walk_back(1536, 0, usize::MAX, |_| {
            Err::<Result<LogBlock, _>, _>("EIO")
        });
        assert_eq!(failed, Err("EIO"));
    }
}
