//! The log backup stream (`.trn`, issue #25 §1): what a log backup writes, its verify-only
//! pass and `sqliosim verify` read back.
//!
//! Like the full backup's stream, blocks written back to back in large sequential writes, each
//! saying what it is: a 4 KB header — magic `SQLIOTRN`, version, flags, run id, log backup
//! number, block number and byte offset, the log file's id, the LSN range carried and the LSN
//! of the block before it, a CRC32 of the whole block — then the log blocks themselves, whole
//! and back to back as the log reader read them (each a multiple of the log's sector size),
//! padded with zeros to 4 KB. Every log block is one of ours, so its own header, checksum and
//! regenerable payload say whether it is intact; its `prev_lsn` says whether the chain goes
//! on. The last block carries no log and has the END flag, the whole backup's LSN range and
//! its count of log blocks: a stream without it is a log backup that did not finish, not a
//! damaged one. docs/backup.md shows the layout.

#![warn(clippy::cast_possible_truncation)]

use std::sync::Arc;

use super::scan::Problem;
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::sim::engine::logblock::{self, LogBlock, LOG_HEADER_LEN, MIN_LOG_UNIT};
use crate::sim::engine::wal::NO_PREV;

/// Bytes of a block header, and the unit every block is padded to.
pub const HEADER: usize = 4096;
/// The magic of a log backup block.
pub const MAGIC: &[u8; 8] = b"SQLIOTRN";
/// The format's version.
pub const VERSION: u32 = 1;
/// Flag of the last block of a finished log backup.
pub const FLAG_END: u32 = 1;
/// Offset of the CRC in the header.
const OFF_CRC: usize = 52;

/// What a log backup block header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrnHead {
    /// `FLAG_END` on the last block.
    pub flags: u32,
    /// Run id of the file set the log came from.
    pub run_id: u64,
    /// Which log backup of the run (1-based).
    pub backup_no: u64,
    /// Position of the block in the stream.
    pub block_no: u64,
    /// Byte offset of the block in the stream.
    pub offset: u64,
    /// File id of the log file the block's log blocks are from.
    pub file_id: u32,
    /// Bytes of log carried (the log blocks' lengths summed).
    pub payload: u64,
    /// LSN of the first log block carried (on the END block: of the whole backup).
    pub first_lsn: u64,
    /// LSN right after the last log block carried (on the END block: of the whole backup).
    pub end_lsn: u64,
    /// LSN of the log block before the first carried (`NO_PREV`: not known).
    pub prev_lsn: u64,
    /// On the END block: log blocks carried by the whole backup.
    pub total_blocks: u64,
    /// CRC32 of the block with this field as zero.
    pub crc: u32,
}

impl TrnHead {
    /// Bytes of the whole block: header and payload padded to [`HEADER`].
    pub fn len(&self) -> usize {
        HEADER
            + usize::try_from(self.payload)
                .unwrap_or(usize::MAX)
                .next_multiple_of(HEADER)
    }

    /// True for a block that carries no log (the END block).
    pub fn is_empty(&self) -> bool {
        self.payload == 0
    }
}

/// Writes `head` into `block[..HEADER]` and the CRC of `block[..head.len()]`; returns it.
pub fn seal(head: &TrnHead, block: &mut [u8]) -> u32 {
    let h = &mut block[..HEADER];
    h.fill(0);
    h[..8].copy_from_slice(MAGIC);
    put(h, 8, &VERSION.to_le_bytes());
    put(h, 12, &head.flags.to_le_bytes());
    for (at, v) in [
        (16, head.run_id),
        (24, head.backup_no),
        (32, head.block_no),
        (40, head.offset),
        (56, head.payload),
        (64, head.first_lsn),
        (72, head.end_lsn),
        (80, head.prev_lsn),
        (88, head.total_blocks),
    ] {
        put(h, at, &v.to_le_bytes());
    }
    put(h, 48, &head.file_id.to_le_bytes());
    let crc = crc_of(&block[..head.len()]);
    put(block, OFF_CRC, &crc.to_le_bytes());
    crc
}

/// Reads a header; `Err` says why it is not one of ours.
pub fn read_head(h: &[u8]) -> Result<TrnHead, String> {
    if h.len() < HEADER || &h[..8] != MAGIC {
        return Err(format!(
            "no log backup block header (magic {:02x?})",
            &h[..8.min(h.len())]
        ));
    }
    if get32(h, 8) != VERSION {
        return Err(format!(
            "log backup format version {}, this build reads {VERSION}",
            get32(h, 8)
        ));
    }
    Ok(TrnHead {
        flags: get32(h, 12),
        run_id: get64(h, 16),
        backup_no: get64(h, 24),
        block_no: get64(h, 32),
        offset: get64(h, 40),
        file_id: get32(h, 48),
        crc: get32(h, OFF_CRC),
        payload: get64(h, 56),
        first_lsn: get64(h, 64),
        end_lsn: get64(h, 72),
        prev_lsn: get64(h, 80),
        total_blocks: get64(h, 88),
    })
}

/// The CRC a whole block should carry (its CRC field taken as zero).
pub fn crc_of(block: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&block[..OFF_CRC]);
    h.update(&[0u8; 4]);
    h.update(&block[OFF_CRC + 4..]);
    h.finalize()
}

fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

fn get32(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn get64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

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
    /// The log block before the next one pushed, per file (for the next block's `prev_lsn`).
    last: Option<(u32, u64, u64)>,
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
            last: None,
            written: TrnWritten::default(),
        })
    }

    /// Adds one log block `b` of file `file_id` (`bytes`, whole) as the log reader read it.
    pub fn push(&mut self, file_id: u32, b: &LogBlock, bytes: &[u8]) -> std::io::Result<()> {
        let len = bytes.len();
        let other_file = self.head.payload > 0 && self.head.file_id != file_id;
        if other_file || self.head.payload as usize + len > self.capacity {
            self.flush(0)?;
        }
        if self.head.payload == 0 {
            self.head.file_id = file_id;
            self.head.first_lsn = b.lsn;
            self.head.prev_lsn = b.prev_lsn;
        }
        let at = HEADER + self.head.payload as usize;
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
        self.last = Some((file_id, b.lsn, self.head.end_lsn));
        Ok(())
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
            let first = self.written.ranges.first();
            head.first_lsn = first.map_or(0, |r| r.1);
            head.end_lsn = self.last.map_or(0, |l| l.2);
            head.file_id = self.last.map_or(0, |l| l.0);
            head.prev_lsn = NO_PREV;
        }
        let len = head.len();
        let used = HEADER + usize::try_from(head.payload).unwrap_or(0);
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
    pub problems: Vec<Problem>,
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
        let bad = |what: String, at: u64, n: u64| Problem {
            offset: at,
            len: n,
            block_no,
            page: None,
            verdict: None,
            what,
        };
        let got = storage.read_at(&mut buf[..HEADER], offset)?;
        let head = match (got == HEADER)
            .then(|| read_head(&buf[..HEADER]))
            .unwrap_or_else(|| Err(format!("header cut short at {got} bytes")))
        {
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
        found.push(Problem {
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
        if let Some(what) = what {
            out.problems.push(Problem {
                offset: offset + at as u64,
                len: (end - at) as u64,
                block_no,
                page: None,
                verdict: None,
                what: format!("block {block_no}: {what}"),
            });
            return;
        }
    }
    if at != end {
        out.problems.push(Problem {
            offset: offset + at as u64,
            len: (end - at) as u64,
            block_no,
            page: None,
            verdict: None,
            what: format!(
                "block {block_no}: {} bytes of log left that hold no log block",
                end - at
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::FaultyBackend;

    fn mem_stream() -> Arc<dyn Storage> {
        let backend = FaultyBackend::new(1);
        backend.open_faulty(std::path::Path::new("/x.trn"))
    }

    fn log_block(lsn: u64, prev: u64, len: u32) -> (LogBlock, Vec<u8>) {
        let b = LogBlock {
            run_id: 9,
            file_id: 1,
            len,
            lsn,
            prev_lsn: prev,
            wrap: 0,
            time_us: 1,
            records: 1,
        };
        let mut bytes = vec![0u8; len as usize];
        logblock::encode(&mut bytes, &b);
        (b, bytes)
    }

    /// A finished stream of `n` chained log blocks of 4 KB, 60 KB of log a block.
    fn stream(n: u64) -> (Arc<dyn Storage>, TrnWritten) {
        let storage = mem_stream();
        let mut w = TrnWriter::new(Arc::clone(&storage), 60 * 1024, 9, 3).unwrap();
        let mut prev = 100_000 - 4096;
        for i in 0..n {
            let lsn = 100_000 + i * 4096;
            let (b, bytes) = log_block(lsn, prev, 4096);
            w.push(1, &b, &bytes).unwrap();
            prev = lsn;
        }
        (storage, w.finish().unwrap())
    }

    #[test]
    fn a_finished_stream_reads_back_clean_with_its_range() {
        let (s, written) = stream(40);
        let scan = scan(s.as_ref(), Some(&written)).unwrap();
        assert_eq!(scan.problems, vec![]);
        assert!(scan.complete);
        assert_eq!(scan.log_blocks, 40);
        // 15 log blocks of 4 KB fill a 60 KB block: 3 blocks of log and the END block.
        assert_eq!(scan.blocks, 4);
        assert_eq!(scan.range, Some((100_000, 100_000 + 40 * 4096)));
        assert_eq!(written.ranges, vec![(1, 100_000, 100_000 + 40 * 4096)]);
    }

    #[test]
    fn a_flipped_byte_of_a_carried_log_block_is_found_there() {
        let (s, written) = stream(20);
        let mut byte = [0u8; 1];
        let at = (HEADER + 4096 * 3 + 200) as u64;
        s.read_at(&mut byte, at).unwrap();
        s.write_at(&[byte[0] ^ 0x10], at).unwrap();
        let scan = scan(s.as_ref(), Some(&written)).unwrap();
        assert!(scan.problems.len() >= 2, "{:?}", scan.problems);
        assert!(scan.problems[0].what.contains("CRC"), "{:?}", scan.problems);
        let log = scan.problems.iter().find(|p| p.what.contains("log block"));
        assert_eq!(log.map(|p| p.offset), Some((HEADER + 4096 * 3) as u64));
    }

    #[test]
    fn a_gap_in_the_chain_is_a_broken_log_chain() {
        let storage = mem_stream();
        let mut w = TrnWriter::new(Arc::clone(&storage), 60 * 1024, 9, 1).unwrap();
        let (a, ab) = log_block(0, NO_PREV, 4096);
        let (c, cb) = log_block(8192, 4096, 4096);
        w.push(1, &a, &ab).unwrap();
        w.push(1, &c, &cb).unwrap();
        w.finish().unwrap();
        let scan = scan(storage.as_ref(), None).unwrap();
        assert_eq!(scan.problems.len(), 1, "{:?}", scan.problems);
        assert!(scan.problems[0].what.contains("chain is broken"));
    }

    #[test]
    fn a_stream_without_its_end_block_is_unfinished_not_damaged() {
        let (s, written) = stream(20);
        let end = written.bytes - HEADER as u64;
        s.set_len(end).unwrap();
        let scan = scan(s.as_ref(), None).unwrap();
        assert_eq!(scan.problems, vec![]);
        assert!(!scan.complete);
    }
}
