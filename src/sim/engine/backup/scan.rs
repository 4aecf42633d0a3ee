//! Reads a backup stream back and checks it (`RESTORE VERIFYONLY`, and `sqliosim verify` on a
//! `.bak`): every block in its place (magic, number, offset, CRC) and every carried page intact
//! and of the generation its block names. With what the writer kept ([`Written`]), each block
//! must also be the one written and carry the pages read, in order.

use super::writer::Written;
use super::{crc_of, read_head, BlockHead, Carried, BLOCK_HEADER, MAX_BLOCK_PAGES};
use crate::findings::{Finding, FindingClass};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, ActorKind, Expect, ExpectedState, Verdict, PAGE_SIZE};

/// One thing wrong with a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamProblem {
    /// Byte offset in the stream of the block (or page) at fault.
    pub offset: u64,
    /// Bytes of the stream at fault from `offset` (the block, or the one page).
    pub len: u64,
    /// Position of the block in the stream.
    pub block_no: u64,
    /// The carried page at fault, if it is one page.
    pub page: Option<Carried>,
    /// The page's verdict, for a carried page that is not intact.
    pub verdict: Option<Verdict>,
    /// What is wrong, in a sentence.
    pub what: String,
}

impl StreamProblem {
    /// The problem as a `backup_corruption` finding of the Backup User: its path is the
    /// stream's (`stream`), its pages the stream's pages at fault (the carried page it
    /// concerns is named in the detail). `actor_id` is the thread that found it (0 offline).
    pub fn finding(&self, seed: u64, stream: &std::path::Path, actor_id: u16) -> Finding {
        let verdict = self.verdict.clone().unwrap_or(Verdict::Garbage {
            first_bytes: [0; 16],
        });
        let page = self.offset / PAGE_SIZE as u64;
        let mut f = Finding::page(
            seed,
            stream.to_path_buf(),
            self.page.map_or(0, |c| c.file),
            page,
            ActorKind::BackupUser,
            actor_id,
            verdict,
        );
        f.class = FindingClass::BackupCorruption;
        f.offset = self.offset;
        f.page_count =
            u32::try_from(self.len.div_ceil(PAGE_SIZE as u64).max(1)).unwrap_or(u32::MAX);
        f.detail = Some(format!("backup stream: {}", self.what));
        f
    }
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamScan {
    /// Blocks read (the end block included).
    pub blocks: u64,
    /// Pages carried and checked.
    pub pages: u64,
    /// True when the end block was found: the backup finished.
    pub complete: bool,
    /// Run id the first block names.
    pub run_id: Option<u64>,
    /// Backup number the first block names.
    pub backup_no: Option<u64>,
    /// Everything wrong, in stream order.
    pub problems: Vec<StreamProblem>,
    /// The CRC each block read says it has, in order (what the journal's fingerprint of a
    /// finished backup is made of).
    pub crcs: Vec<u32>,
    /// Bytes of the blocks read.
    pub bytes: u64,
    /// The highest page carried of each file (by file id): a restore sizes its copies by it.
    pub last_pages: std::collections::BTreeMap<u32, u64>,
}

/// Reads the stream in `storage` from its start and checks it; `written`, when given, is what
/// the writer wrote (a live verify-only pass).
pub fn scan(storage: &dyn Storage, written: Option<&Written>) -> std::io::Result<StreamScan> {
    let len = storage.len()?;
    let mut buf = AlignedBuf::new(BLOCK_HEADER + MAX_BLOCK_PAGES * PAGE_SIZE)?;
    let mut out = StreamScan::default();
    let mut offset = 0u64;
    let mut carried = 0usize;
    while offset + BLOCK_HEADER as u64 <= len && !out.complete {
        let got = storage.read_at(&mut buf[..BLOCK_HEADER], offset)?;
        let block_no = out.blocks;
        let bad = |what: String| StreamProblem {
            offset,
            len: BLOCK_HEADER as u64,
            block_no,
            page: None,
            verdict: None,
            what,
        };
        if got < BLOCK_HEADER {
            out.problems
                .push(bad(format!("block header cut short at {got} bytes")));
            break;
        }
        let head = match read_head(&buf[..BLOCK_HEADER]) {
            Ok(h) => h,
            Err(e) => {
                out.problems.push(bad(format!("block {block_no}: {e}")));
                break;
            }
        };
        let body = head.len() - BLOCK_HEADER;
        let got = storage.read_at(
            &mut buf[BLOCK_HEADER..head.len()],
            offset + BLOCK_HEADER as u64,
        )?;
        if got < body {
            out.problems.push(bad(format!(
                "block {block_no} names {} pages but the stream ends {} bytes into them",
                head.pages.len(),
                got
            )));
            break;
        }
        let block = &buf[..head.len()];
        check_place(&head, block, &mut out, offset, written);
        check_pages(&head, block, &mut out, offset);
        if let Some(w) = written {
            check_carried(&head, w, carried, &mut out, offset);
        }
        carried += head.pages.len();
        out.crcs.push(head.crc);
        out.bytes += head.len() as u64;
        for c in &head.pages {
            let last = out.last_pages.entry(c.file).or_insert(c.page);
            *last = (*last).max(c.page);
        }
        out.run_id.get_or_insert(head.run_id);
        out.backup_no.get_or_insert(head.backup_no);
        out.blocks += 1;
        out.pages += head.pages.len() as u64;
        out.complete = head.is_end();
        if head.is_end() && head.total_pages != out.pages {
            out.problems.push(bad(format!(
                "the end block counts {} pages, the stream carries {}",
                head.total_pages, out.pages
            )));
        }
        offset += head.len() as u64;
    }
    if let (Some(w), false) = (written, out.complete) {
        out.problems.push(StreamProblem {
            offset,
            len: BLOCK_HEADER as u64,
            block_no: out.blocks,
            page: None,
            verdict: None,
            what: format!(
                "the stream ends after {} of the {} blocks written ({} of {} bytes)",
                out.blocks,
                w.crcs.len(),
                len,
                w.bytes
            ),
        });
    }
    Ok(out)
}

/// The block's number, offset, run and CRC (and, live, the CRC written).
fn check_place(
    head: &BlockHead,
    block: &[u8],
    out: &mut StreamScan,
    offset: u64,
    written: Option<&Written>,
) {
    let block_no = out.blocks;
    let mut say = |what: String| {
        out.problems.push(StreamProblem {
            offset,
            len: head.len() as u64,
            block_no,
            page: None,
            verdict: None,
            what,
        })
    };
    if head.block_no != block_no || head.offset != offset {
        say(format!(
            "block {block_no} at offset {offset} says it is block {} at offset {}: a block out of place",
            head.block_no, head.offset
        ));
    }
    if out.run_id.is_some_and(|r| r != head.run_id)
        || out.backup_no.is_some_and(|b| b != head.backup_no)
    {
        say(format!(
            "block {block_no} belongs to run {:016x} backup {}, the stream's first block to another",
            head.run_id, head.backup_no
        ));
    }
    let crc = crc_of(block);
    if crc != head.crc {
        say(format!(
            "block {block_no}: CRC32 {crc:08x} of what was read, {:08x} written in its header",
            head.crc
        ));
    }
    if let Some(w) = written {
        match usize::try_from(block_no).ok().and_then(|i| w.crcs.get(i)) {
            Some(&c) if c != head.crc => say(format!(
                "block {block_no}: its header's CRC32 {:08x} is not the {c:08x} of the block written",
                head.crc
            )),
            None => say(format!("block {block_no} was never written ({} were)", w.crcs.len())),
            _ => {}
        }
    }
}

/// Every carried page intact and of the generation the block names.
fn check_pages(head: &BlockHead, block: &[u8], out: &mut StreamScan, offset: u64) {
    for (i, c) in head.pages.iter().enumerate() {
        let at = BLOCK_HEADER + i * PAGE_SIZE;
        let state = if c.generation == 0 {
            ExpectedState::NeverWritten
        } else {
            ExpectedState::Written {
                generation: c.generation,
            }
        };
        let exp = Expect::known(head.run_id, c.file, c.page, state);
        let v = verify::verify(&block[at..at + PAGE_SIZE], &exp);
        if !v.is_ok() {
            out.problems.push(StreamProblem {
                offset: offset + at as u64,
                len: PAGE_SIZE as u64,
                block_no: out.blocks,
                page: Some(*c),
                what: format!(
                    "block {}: carried page {} of file {} (generation {}): {}",
                    out.blocks,
                    c.page,
                    c.file,
                    c.generation,
                    v.describe()
                ),
                verdict: Some(v),
            });
        }
    }
}

/// Live: the block carries the pages read, in the order written.
fn check_carried(head: &BlockHead, w: &Written, from: usize, out: &mut StreamScan, offset: u64) {
    let want = w.pages.get(from..from + head.pages.len());
    if want != Some(head.pages.as_slice()) {
        out.problems.push(StreamProblem {
            offset,
            len: head.len() as u64,
            block_no: out.blocks,
            page: None,
            verdict: None,
            what: format!(
                "block {} does not name the {} pages the backup read and wrote there",
                out.blocks,
                head.pages.len()
            ),
        });
    }
}
