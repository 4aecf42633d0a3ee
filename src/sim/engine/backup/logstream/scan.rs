//! Reads a log backup stream back and checks it (the verify-only pass, `sqliosim verify
//! FILE.trn`): every block in its place with its CRC, every log block intact, of the run and
//! linked to the one before it in its log, and the END block's count.

use super::writer::TrnWritten;
use super::{crc_of, read_head, TrnHead, FLAG_END, HEADER};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::sim::engine::backup::scan::StreamProblem;
use crate::sim::engine::logblock::NO_PREV;
use crate::sim::engine::logblock::{self, LOG_HEADER_LEN, MIN_LOG_UNIT};

/// What a scan of a log backup stream found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrnScan {
    /// Blocks read (the END block included).
    pub blocks: u64,
    /// Log blocks carried and checked.
    pub log_blocks: u64,
    /// True when the END block was found.
    pub complete: bool,
    /// Run id and log backup number the first block names.
    pub run_id: Option<u64>,
    /// Which log backup of its run.
    pub backup_no: Option<u64>,
    /// The LSN range the END block says the backup carries.
    pub range: Option<(u64, u64)>,
    /// The last log block carried per file: (file id, LSN, end).
    pub last: Vec<(u32, u64, u64)>,
    /// Everything wrong, in stream order.
    pub problems: Vec<StreamProblem>,
    /// The CRC each block read says it has, in order.
    pub crcs: Vec<u32>,
    /// Bytes of the blocks read.
    pub bytes: u64,
}

/// Reads the log backup stream in `storage` from its start and checks it: every block in its
/// place with its CRC (the one written, when `written` is given: a live verify-only pass),
/// every log block intact, of the run, and following the one before it in its log.
pub fn scan(storage: &dyn Storage, written: Option<&TrnWritten>) -> std::io::Result<TrnScan> {
    let len = storage.len()?;
    let mut out = TrnScan::default();
    let mut buf = AlignedBuf::new(HEADER)?;
    let mut offset = 0u64;
    while offset + HEADER as u64 <= len && !out.complete {
        let block_no = out.blocks;
        let bad = |what: String, at: u64, n: u64| StreamProblem {
            offset: at,
            len: n,
            block_no,
            page: None,
            verdict: None,
            what,
        };
        let got = storage.read_at(&mut buf[..HEADER], offset)?;
        let head = if got == HEADER {
            read_head(&buf[..HEADER]).map_err(|e| e.to_string())
        } else {
            Err(format!("header cut short at {got} bytes"))
        };
        let head = match head {
            Ok(h) => h,
            Err(e) => {
                out.problems
                    .push(bad(format!("block {block_no}: {e}"), offset, HEADER as u64));
                break;
            }
        };
        let n = head.len();
        if offset + n as u64 > len || head.payload > (64 << 20) {
            out.problems.push(bad(
                format!(
                    "block {block_no} says {} bytes of log but the stream ends {} bytes after it",
                    head.payload,
                    len - offset
                ),
                offset,
                HEADER as u64,
            ));
            break;
        }
        if buf.len() < n {
            buf = AlignedBuf::new(n)?;
        }
        let got = storage.read_at(&mut buf[..n], offset)?;
        if got < n {
            out.problems.push(bad(
                format!("block {block_no} cut short at {got} of {n} bytes"),
                offset,
                n as u64,
            ));
            break;
        }
        check_block(&head, &buf[..n], offset, written, &mut out);
        out.crcs.push(head.crc);
        out.bytes += n as u64;
        out.blocks += 1;
        out.complete = head.flags & FLAG_END != 0;
        offset += n as u64;
    }
    Ok(out)
}

/// Checks one block: its place, its CRC, the log blocks it carries.
fn check_block(
    head: &TrnHead,
    block: &[u8],
    offset: u64,
    written: Option<&TrnWritten>,
    out: &mut TrnScan,
) {
    let block_no = out.blocks;
    let mut found = Vec::new();
    let mut bad = |what: String, at: u64, n: usize| {
        found.push(StreamProblem {
            offset: at,
            len: n as u64,
            block_no,
            page: None,
            verdict: None,
            what: format!("block {block_no}: {what}"),
        });
    };
    let first = *out.run_id.get_or_insert(head.run_id);
    let no = *out.backup_no.get_or_insert(head.backup_no);
    if head.block_no != block_no || head.offset != offset {
        bad(
            format!(
                "names itself block {} at offset {}, found as block {block_no} at {offset}",
                head.block_no, head.offset
            ),
            offset,
            block.len(),
        );
    }
    if head.run_id != first || head.backup_no != no {
        bad(
            format!(
                "of run {:016x} log backup {}, in a stream of run {first:016x} log backup {no}",
                head.run_id, head.backup_no
            ),
            offset,
            block.len(),
        );
    }
    let crc = crc_of(block);
    if crc != head.crc {
        bad(
            format!("CRC 0x{:08X} stored, 0x{crc:08X} calculated", head.crc),
            offset,
            block.len(),
        );
    }
    let want = written.and_then(|w| w.crcs.get(usize::try_from(block_no).unwrap_or(usize::MAX)));
    if written.is_some() && want != Some(&head.crc) {
        bad(
            format!(
                "CRC 0x{:08X}, not the one written ({})",
                head.crc,
                want.map_or("no such block was written".into(), |c| format!("0x{c:08X}"))
            ),
            offset,
            block.len(),
        );
    }
    if head.flags & FLAG_END != 0 {
        out.range = Some((head.first_lsn, head.end_lsn));
        // A block found bad before was not counted: that problem is already said.
        let clean = out.problems.is_empty();
        if head.total_blocks != out.log_blocks && clean {
            bad(
                format!(
                    "END block counts {} log blocks, the stream carried {}",
                    head.total_blocks, out.log_blocks
                ),
                offset,
                block.len(),
            );
        }
        out.problems.extend(found);
        return;
    }
    out.problems.extend(found);
    check_log_blocks(head, block, offset, out);
}

/// Checks the log blocks one block carries: each intact and of its run and file, each
/// following the one before it in its log.
fn check_log_blocks(head: &TrnHead, block: &[u8], offset: u64, out: &mut TrnScan) {
    let block_no = out.blocks;
    let end = HEADER + usize::try_from(head.payload).unwrap_or(0);
    let mut at = HEADER;
    let mut prev = out
        .last
        .iter()
        .find(|l| l.0 == head.file_id)
        .map(|l| l.1)
        .unwrap_or(head.prev_lsn);
    let mut problem = None;
    while at + LOG_HEADER_LEN <= end {
        let found = logblock::peek(&block[at..end]).and_then(|b| {
            let len = (b.len as usize).min(end - at);
            let want = logblock::Want {
                run_id: head.run_id,
                file_id: head.file_id,
                lsn: b.lsn,
                unit: MIN_LOG_UNIT,
            };
            logblock::verify(&block[at..at + len], &want)
        });
        let what = match found {
            Ok(b) if prev != NO_PREV && b.prev_lsn != prev => Some(format!(
                "the log block at LSN {} links to LSN {}, the block before it is at {prev}: the log chain is broken",
                b.lsn, b.prev_lsn
            )),
            Ok(b) => {
                prev = b.lsn;
                out.log_blocks += 1;
                match out.last.iter_mut().find(|l| l.0 == head.file_id) {
                    Some(l) => *l = (head.file_id, b.lsn, b.lsn + u64::from(b.len)),
                    None => out.last.push((head.file_id, b.lsn, b.lsn + u64::from(b.len))),
                }
                at += b.len as usize;
                None
            }
            Err(e) => Some(format!("log block {} bytes into it: {e}", at - HEADER)),
        };
        if what.is_some() {
            problem = what;
            break;
        }
    }
    let left = end - at;
    let problem = problem
        .or_else(|| (left > 0).then(|| format!("{left} bytes of log left that hold no log block")));
    if let Some(what) = problem {
        out.problems.push(StreamProblem {
            offset: offset + at as u64,
            len: left as u64,
            block_no,
            page: None,
            verdict: None,
            what: format!("block {block_no}: {what}"),
        });
    }
}
