//! A journal's tolerant decoding: each whole, valid record in turn, up to the first flaw
//! (bytes that are not a whole record, a record out of bounds, or a gap in the batch numbers),
//! which is described, never an error.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{BackupRecord, Record};
use crate::page::layout::{get_u32, get_u64};
use crate::page::FileRole;
use crate::sim::engine::journal::damage::Damage;
use crate::sim::engine::journal::{self, JournalFile, HEADER, MAGIC};

/// A cursor over a payload that fails instead of panicking on short input.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| get_u32(b, 0))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| get_u64(b, 0))
    }
    /// A path written by `put_path`.
    fn path(&mut self) -> Option<PathBuf> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
}

fn decode_payload(kind: u8, payload: &[u8]) -> Option<Record> {
    let mut c = Cursor(payload);
    Some(match kind {
        1 => {
            let run_id = c.u64()?;
            let n = c.u32()?;
            let mut files = Vec::new();
            for _ in 0..n {
                let file_id = c.u32()?;
                let role = if c.u8()? == 2 {
                    FileRole::Log
                } else {
                    FileRole::Data
                };
                let path = c.path()?;
                files.push(JournalFile {
                    file_id,
                    role,
                    path,
                    max_pages: None,
                });
            }
            // Journals written before the bound was recorded end here.
            if c.0.len() == files.len() * 8 {
                for f in &mut files {
                    f.max_pages = c.u64().filter(|&p| p > 0);
                }
            }
            Record::Start { run_id, files }
        }
        2 => {
            let file_id = c.u32()?;
            let n = c.u32()? as usize;
            let mut pages = Vec::with_capacity(n.min(payload.len() / 16));
            for _ in 0..n {
                pages.push((c.u64()?, c.u64()?));
            }
            Record::Durable { file_id, pages }
        }
        3 => Record::Resize {
            file_id: c.u32()?,
            pages: c.u64()?,
        },
        4 => Record::Log {
            file_id: c.u32()?,
            last_block: c.u64()?,
            durable_end: c.u64()?,
        },
        5 => Record::End,
        6 => Record::Mark {
            time_us: c.u64()?,
            interval_ms: c.u32()?,
            // Marks written before batches were numbered end here.
            batch: c.u64().unwrap_or(0),
        },
        7 => {
            let time_us = c.u64()?;
            let len = c.u32()? as usize;
            let reason = String::from_utf8_lossy(c.take(len)?).into_owned();
            Record::Void { time_us, reason }
        }
        8 => {
            let log = c.u8()? == 1;
            let (backup_no, blocks, bytes, digest) = (c.u64()?, c.u64()?, c.u64()?, c.u32()?);
            let path = c.path()?;
            Record::Backup(BackupRecord {
                log,
                backup_no,
                blocks,
                bytes,
                digest,
                path,
            })
        }
        _ => return None,
    })
}

/// A journal decoded: its whole records up to where it stops being readable, and what is
/// wrong there (a torn tail, or damage with whole records after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Every whole, valid record before the first flaw.
    pub records: Vec<Record>,
    /// Where and how decoding stopped, if it did before the end.
    pub damage: Option<Damage>,
}

/// Decodes a journal up to its first flaw (bytes that are not a whole record, or a gap in the
/// batch numbers) and describes the flaw.
pub fn decode(bytes: &[u8]) -> Decoded {
    let mut records = Vec::new();
    let mut at = 0;
    let mut seq = BatchSeq::default();
    let mut bounds = journal::bounds::Bounds::default();
    while at < bytes.len() {
        let Some((rec, n)) = decode_one(&bytes[at..]) else {
            let mut damage = journal::damage::assess(bytes, at);
            if journal::damage::within_last_batch(bytes, at, seq.last) {
                damage = damage.into_torn_tail(bytes.len());
            }
            return Decoded {
                records,
                damage: Some(damage),
            };
        };
        if let Err(why) = bounds.check(&rec) {
            let damage = journal::damage::invalid(bytes, at, n, &rec, why);
            return Decoded {
                records,
                damage: Some(damage),
            };
        }
        if let Some((after, next)) = seq.gap(&rec) {
            records.truncate(seq.kept);
            let damage = journal::damage::missing_batches(bytes, seq.trusted_to, after, next);
            return Decoded {
                records,
                damage: Some(damage),
            };
        }
        at += n;
        records.push(rec);
        seq.passed(&records, at);
    }
    Decoded {
        records,
        damage: None,
    }
}

/// The batch numbers read so far: the last one since the last Start, and where the records
/// after it begin (what is trusted if the next number jumps).
#[derive(Debug, Default)]
struct BatchSeq {
    last: Option<u64>,
    kept: usize,
    trusted_to: usize,
}

impl BatchSeq {
    /// `(last, found)` when `r` is a numbered mark that does not follow the last one.
    fn gap(&self, r: &Record) -> Option<(u64, u64)> {
        match (r, self.last) {
            (Record::Mark { batch, .. }, Some(last)) if *batch != 0 && *batch != last + 1 => {
                Some((last, *batch))
            }
            _ => None,
        }
    }

    /// The last of `records`, ending at byte `end`, was accepted.
    fn passed(&mut self, records: &[Record], end: usize) {
        match records.last() {
            // A new run or a snapshot: its first mark may carry any number.
            Some(Record::Start { .. }) => self.last = None,
            Some(Record::Mark { batch: 0, .. }) => self.last = None,
            Some(Record::Mark { batch, .. }) => self.last = Some(*batch),
            _ => return,
        }
        self.kept = records.len();
        self.trusted_to = end;
    }
}

/// Decodes every whole, valid record of a journal; returns them and whether a damaged or
/// torn tail was dropped.
pub fn decode_all(bytes: &[u8]) -> (Vec<Record>, bool) {
    let d = decode(bytes);
    (d.records, d.damage.is_some())
}

/// The record at the start of `b` and its length, when it is whole and valid.
pub(in crate::sim::engine::journal) fn decode_one(b: &[u8]) -> Option<(Record, usize)> {
    if b.len() < HEADER || b[..8] != MAGIC {
        return None;
    }
    let len = get_u32(b, 12) as usize;
    let crc = get_u32(b, 16);
    let payload = b.get(HEADER..HEADER + len)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    Some((decode_payload(b[8], payload)?, HEADER + len))
}
