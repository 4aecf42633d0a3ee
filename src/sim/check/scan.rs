//! Offline scans for `sqliosim verify`: every page of a data file and every block of a log
//! file, judged by what they say about themselves and, when a journal is present, against the
//! generation each page must hold at least and the log position that was durable.

use std::convert::Infallible;
use std::io;

use crate::findings::{Finding, FindingClass};
use crate::io::{AlignedBuf, Storage};
use crate::page::{
    verify, ActorKind, Expect, ExpectedState, FileHeader, Verdict, VerdictKind, PAGE_SIZE,
};
use crate::sim::engine::journal::JournalState;
use crate::sim::engine::logblock::{self, Want, LOG_AREA_START, MIN_LOG_UNIT};
use crate::sim::engine::logscan::{lap_back, walk_back, Break};
use crate::sim::engine::logwrites::unflushed_bound;
pub use crate::sim::engine::tear::{allowed_tear, allowed_tears};

/// Pages read per request while scanning.
const SCAN_PAGES: usize = 128;

/// A page seen by the scan (its bytes are kept only when it failed).
#[derive(Debug, Clone)]
pub struct BadPage {
    /// Page number.
    pub page: u64,
    /// What was found.
    pub verdict: Verdict,
    /// What was expected.
    pub expected: Option<ExpectedState>,
    /// The bytes read (empty when the page was acceptable).
    pub received: Vec<u8>,
    /// The file's sector size (its header's), in which a torn write is told.
    pub sector_size: u32,
    /// A tear the device was allowed to leave ([`allowed_tear`]): counted, not a finding.
    pub allowed_tear: bool,
}

impl BadPage {
    /// True when the page is an integrity finding (not an allowed tear).
    pub fn is_finding(&self) -> bool {
        !self.allowed_tear && !acceptable(&self.verdict)
    }

    /// The finding for this page of `path` (file `file_id`), found by the offline verifier.
    pub fn into_finding(self, seed: u64, path: &std::path::Path, file_id: u32) -> Finding {
        let mut f = Finding::page(
            seed,
            path.to_path_buf(),
            file_id,
            self.page,
            ActorKind::Verifier,
            0,
            self.verdict,
        );
        f.expected = self.expected;
        f.received_header = crate::page::layout::read_stamp(&self.received);
        f.received = Some(self.received);
        f.detail = f.verdict.device_detail(self.sector_size);
        f
    }
}

/// Counts of a data-file scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataScan {
    /// Pages checked (page 0 excluded).
    pub pages: u64,
    /// Pages that read as never written (and may).
    pub never_written: u64,
    /// Pages newer than the journal knew (written after its last sync point).
    pub newer_than_journal: u64,
    /// Pages torn as the device may tear a write it never acknowledged ([`allowed_tear`]).
    pub allowed_tears: u64,
}

/// What a page must hold according to the journal (when it belongs to this file set).
pub fn expectation(h: &FileHeader, journal: Option<&JournalState>, page: u64) -> Expect {
    match journal {
        Some(j) if j.run_id == h.run_id => {
            let d = j.durable_gen(h.file_id, page);
            let state = if d > 0 {
                ExpectedState::Written { generation: d }
            } else {
                ExpectedState::NeverWritten
            };
            Expect::known(h.run_id, h.file_id, page, state)
        }
        _ => Expect::offline(Some(h.run_id), h.file_id, page),
    }
}

/// The journal, when it is this file's run's.
fn journaled<'j>(h: &FileHeader, journal: Option<&'j JournalState>) -> Option<&'j JournalState> {
    journal.filter(|j| j.run_id == h.run_id)
}

/// True when a verdict is acceptable after a crash: a newer generation than the journal
/// recorded was written after its last sync point and may have survived.
pub fn acceptable(v: &Verdict) -> bool {
    matches!(v.kind(), VerdictKind::Ok | VerdictKind::FutureGeneration)
}

/// Scans every data page of a file; `bad` receives each page that fails.
pub fn scan_data(
    storage: &dyn Storage,
    h: &FileHeader,
    journal: Option<&JournalState>,
    bad: impl FnMut(BadPage),
) -> io::Result<DataScan> {
    scan_data_all(storage, h, journal, |_, _| {}, bad)
}

/// Scans every data page of a file as [`scan_data`] does; `seen` is also told the verdict of
/// every page, good or bad (a restart takes what it found as the expected state).
pub fn scan_data_all(
    storage: &dyn Storage,
    h: &FileHeader,
    journal: Option<&JournalState>,
    mut seen: impl FnMut(u64, &Verdict),
    mut bad: impl FnMut(BadPage),
) -> io::Result<DataScan> {
    let pages = storage.len()? / PAGE_SIZE as u64;
    let mut buf = AlignedBuf::new(SCAN_PAGES * PAGE_SIZE)?;
    let mut out = DataScan::default();
    let mut page = 1;
    while page < pages {
        let n = (SCAN_PAGES as u64).min(pages - page) as usize;
        let got = storage.read_at(&mut buf[..n * PAGE_SIZE], page * PAGE_SIZE as u64)?;
        for i in 0..n {
            let p = page + i as u64;
            let bytes = &buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
            let exp = expectation(h, journal, p);
            let verdict = if got < (i + 1) * PAGE_SIZE {
                Verdict::ShortRead {
                    bytes: got.saturating_sub(i * PAGE_SIZE) as u32,
                }
            } else {
                verify(bytes, &exp)
            };
            out.pages += 1;
            match verdict {
                Verdict::Ok { generation: 0 } => out.never_written += 1,
                Verdict::FutureGeneration { .. } => out.newer_than_journal += 1,
                _ => {}
            }
            seen(p, &verdict);
            let allowed = journaled(h, journal).is_some_and(|j| {
                allowed_tear(&verdict, j.durable_gen(h.file_id, p), h.sector_size)
            });
            out.allowed_tears += u64::from(allowed);
            if !acceptable(&verdict) {
                bad(BadPage {
                    page: p,
                    verdict,
                    expected: exp.state,
                    received: bytes.to_vec(),
                    sector_size: h.sector_size,
                    allowed_tear: allowed,
                });
            }
        }
        page += n as u64;
    }
    Ok(out)
}

/// A problem of the log found by the scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogIssue {
    /// File offset concerned.
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

impl LogIssue {
    /// The finding for this problem of the log file `path` (file `file_id`).
    pub fn into_finding(self, seed: u64, path: &std::path::Path, file_id: u32) -> Finding {
        let page = self.offset / PAGE_SIZE as u64;
        let mut f = Finding::page(
            seed,
            path.to_path_buf(),
            file_id,
            page,
            ActorKind::Verifier,
            0,
            Verdict::Garbage {
                first_bytes: [0; 16],
            },
        );
        f.class = FindingClass::LogCorruption;
        f.offset = self.offset;
        f.detail = Some(self.what);
        f
    }
}

/// Result of a log scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogScan {
    /// Valid blocks found in the area.
    pub blocks: usize,
    /// Blocks checked along the chain.
    pub chained: usize,
    /// End of the newest valid block (0: none).
    pub newest_end: u64,
    /// Problems.
    pub issues: Vec<LogIssue>,
    /// The version stated by whole, checksummed blocks of a version this build does not read
    /// (the first such found): with no valid block beside them, the log is another sqliosim's.
    pub other_version: Option<u32>,
}

impl LogScan {
    /// The refusal of the log at `path` when its blocks are all of a version this build does
    /// not read: not judged (another sqliosim wrote it), refused by name.
    pub fn foreign(&self, path: &std::path::Path) -> Option<crate::codec::ForeignFile> {
        let found = self.other_version.filter(|_| self.blocks == 0)?;
        Some(logblock::unknown_version(found).at(path))
    }
}

/// Scans a whole log file held in memory (`bytes`, from offset 0): finds the newest valid
/// block, walks the chain back, and checks it against the journal's durable position. Blocks
/// are multiples of the sector size the header records (512 for files that record none).
///
/// A log file is created a whole number of pages long, and that size made durable before any
/// block is written, so its area is taken from its length rounded up to a page: a file the
/// device or filesystem left short of its size keeps the area its blocks were written in (the
/// blocks map to offsets by LSN modulo the area), the blocks there are judged, and the bytes
/// lost are one issue of their own once the journal holds a durable log position.
pub fn scan_log(bytes: &[u8], h: &FileHeader, durable: Option<(u64, u64)>) -> LogScan {
    let unit = u64::from(log_unit(h));
    let len = bytes.len() as u64;
    let whole = len.div_ceil(PAGE_SIZE as u64) * PAGE_SIZE as u64;
    let area = whole.saturating_sub(LOG_AREA_START) / unit * unit;
    let mut out = LogScan::default();
    // The size is owed once the journal holds a durable log position: the log's creation (its
    // size made durable) came before any block was written. A cut while the file was still
    // being created (the crash models cut the stamping writes) leaves a short file nothing
    // was acknowledged in.
    if whole != len && durable.is_some_and(|(_, end)| end > 0) {
        out.issues.push(LogIssue {
            offset: len,
            what: format!(
                "the log file is {len} bytes long, {} bytes short of its size ({whole} bytes, whole pages, made durable when it was created): the device or filesystem lost its tail; the blocks that are there are judged",
                whole - len
            ),
        });
    }
    // A log cut to its header (or to nothing) holds no block: a durable log is lost whole.
    let newest = (area > 0)
        .then(|| newest_block(bytes, h, area, &mut out))
        .flatten();
    out.newest_end = newest.map_or(0, |b| b.lsn + u64::from(b.len));
    if let Some((_, end)) = durable {
        if out.newest_end < end {
            out.issues.push(LogIssue {
                offset: LOG_AREA_START + out.newest_end.checked_rem(area).unwrap_or(0),
                what: format!("durable log lost: the journal says the log was durable up to LSN {end}, but the newest valid block ends at LSN {}", out.newest_end),
            });
        }
    }
    if let Some(b) = newest {
        walk_chain(
            bytes,
            h,
            area,
            b.lsn,
            out.newest_end,
            durable.map(|d| d.1),
            &mut out,
        );
    }
    out
}

/// The unit of a log file's blocks, from its header (512..=8192).
pub fn log_unit(h: &FileHeader) -> u32 {
    h.sector_size
        .clamp(MIN_LOG_UNIT, logblock::MAX_LOG_UNIT)
        .next_power_of_two()
}

fn block_at(
    bytes: &[u8],
    h: &FileHeader,
    area: u64,
    lsn: u64,
) -> Result<logblock::LogBlock, logblock::LogBlockError> {
    let off = ((LOG_AREA_START + lsn % area) as usize).min(bytes.len());
    let end = (LOG_AREA_START + area) as usize;
    let want = Want {
        run_id: h.run_id,
        file_id: h.file_id,
        lsn,
        unit: log_unit(h),
    };
    logblock::verify(&bytes[off..end.min(bytes.len())], &want)
}

fn newest_block(
    bytes: &[u8],
    h: &FileHeader,
    area: u64,
    out: &mut LogScan,
) -> Option<logblock::LogBlock> {
    let mut newest: Option<logblock::LogBlock> = None;
    let mut off = LOG_AREA_START;
    let unit = u64::from(log_unit(h));
    while off + unit <= LOG_AREA_START + area {
        let at = bytes.get(off as usize..).unwrap_or(&[]);
        let step = match logblock::peek(at) {
            Ok(b) if (b.lsn % area) + LOG_AREA_START == off => {
                match block_at(bytes, h, area, b.lsn) {
                    Ok(b) => {
                        out.blocks += 1;
                        if newest.is_none_or(|n| b.lsn > n.lsn) {
                            newest = Some(b);
                        }
                        u64::from(b.len)
                    }
                    Err(logblock::LogBlockError::Version(v)) => {
                        out.other_version.get_or_insert(v);
                        unit
                    }
                    Err(_) => unit,
                }
            }
            _ => unit,
        };
        off += step.max(unit);
    }
    newest
}

/// The oldest LSN the walk back from a newest block ending at `newest_end` holds whole in an
/// area of `area` bytes: a lap back from the furthest a write not yet durable may have
/// reached. Such writes lie before `durable_end + unflushed_bound` (the log writer's bound,
/// `engine::logwrites`), and the durable end is at most `newest_end` (the newest valid block
/// is at or past it on an honest device), so what a cut tore or dropped of them can have
/// broken, a lap back, only blocks before the result. Walking back to `newest_end - area`
/// called those breaks a durable chain broken (a false `log chain broken`, found by
/// `tests/crash_model_compact.rs` once the forced-flush log lost `O_DSYNC`).
pub fn oldest_held(newest_end: u64, area: u64) -> u64 {
    lap_back(newest_end + unflushed_bound(area), area)
}

fn walk_chain(
    bytes: &[u8],
    h: &FileHeader,
    area: u64,
    from: u64,
    newest_end: u64,
    durable_end: Option<u64>,
    out: &mut LogScan,
) {
    let oldest = oldest_held(newest_end, area);
    let Ok(walk) = walk_back(from, oldest, usize::MAX, |lsn| {
        Ok::<_, Infallible>(block_at(bytes, h, area, lsn))
    });
    out.chained += walk.blocks_ok;
    let Some((lsn, broken)) = walk.broken else {
        return;
    };
    let offset = LOG_AREA_START + lsn % area;
    match broken {
        Break::PointsForward { prev, .. } => out.issues.push(LogIssue {
            offset,
            what: format!("log block {lsn} points back to a later block {prev}"),
        }),
        // Only a break inside the durable part of the log is a finding: blocks after the
        // journal's durable end (or with no journal, anything) may be a torn tail.
        Break::Block(e) if durable_end.is_some_and(|end| lsn < end) => out.issues.push(LogIssue {
            offset,
            what: format!("log chain broken at LSN {lsn}: {e}"),
        }),
        Break::Block(_) => {}
    }
}

#[cfg(test)]
#[path = "scan_log_tests.rs"]
mod log_tests;
