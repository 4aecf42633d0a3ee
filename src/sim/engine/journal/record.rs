//! Journal records: their byte layout, encoding and tolerant decoding (a torn or damaged tail
//! ends the decoding, it is never an error).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::damage::Damage;
use super::{JournalFile, HEADER, MAGIC};
use crate::page::layout::{get_u32, get_u64};
use crate::page::FileRole;

/// A journal record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A new run: its id and files.
    Start {
        /// Run id.
        run_id: u64,
        /// The files.
        files: Vec<JournalFile>,
    },
    /// These pages of this file are durable at least at these generations.
    Durable {
        /// File id.
        file_id: u32,
        /// (page, generation) pairs.
        pages: Vec<(u64, u64)>,
    },
    /// The file now has this many pages.
    Resize {
        /// File id.
        file_id: u32,
        /// Pages.
        pages: u64,
    },
    /// The log of this file is durable up to here.
    Log {
        /// File id of the log file.
        file_id: u32,
        /// LSN of the last durable block.
        last_block: u64,
        /// End of the durable log.
        durable_end: u64,
    },
    /// The run ended cleanly.
    End,
    /// A batch of acknowledgements was journaled at `time_us`; the journal thread writes one
    /// every `interval_ms` at most, so acknowledgements younger than that may be missing.
    Mark {
        /// Wall-clock time of the batch, microseconds since the Unix epoch.
        time_us: u64,
        /// The batch interval.
        interval_ms: u32,
        /// The batch's number since the last Start: 1, 2, 3… (a snapshot's mark repeats the
        /// last one). A gap means whole batches went missing without a hole — a lost append
        /// followed by appends where it should have been, or older records showing through
        /// (see `damage.rs`). 0: a journal written before batches were numbered (not checked).
        batch: u64,
    },
    /// The journal could not be written from `time_us` on: nothing acknowledged afterwards
    /// is held to account.
    Void {
        /// When the write failed, microseconds since the Unix epoch.
        time_us: u64,
        /// The error.
        reason: String,
    },
    /// A backup finished: its stream was made durable and renamed into place, so the device
    /// owes it whole from here on (until a later finished backup replaces it).
    Backup(BackupRecord),
}

/// What the journal holds of the last finished backup of one kind (issue #25 §1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupRecord {
    /// A log backup's stream (`.trn`), else a full backup's (`.bak`).
    pub log: bool,
    /// Which backup of its kind in the run.
    pub backup_no: u64,
    /// Blocks of the stream, its END block included.
    pub blocks: u64,
    /// Bytes of the stream.
    pub bytes: u64,
    /// CRC32 of the blocks' CRCs in order (each little-endian): the stream's fingerprint.
    pub digest: u32,
    /// Where the stream is.
    pub path: PathBuf,
}

impl BackupRecord {
    /// The record of a finished stream at `path` whose blocks carry `crcs` (in order) in
    /// `bytes` bytes.
    pub fn finished(log: bool, backup_no: u64, crcs: &[u32], bytes: u64, path: PathBuf) -> Self {
        BackupRecord {
            log,
            backup_no,
            blocks: crcs.len() as u64,
            bytes,
            digest: Self::digest_of(crcs),
            path,
        }
    }

    /// The fingerprint of a stream whose blocks carry `crcs`, in order.
    pub fn digest_of(crcs: &[u32]) -> u32 {
        let mut h = crc32fast::Hasher::new();
        for c in crcs {
            h.update(&c.to_le_bytes());
        }
        h.finalize()
    }
}

fn put_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// A path as its length and its bytes, as the kernel has them: a name that is not UTF-8 (a
/// directory named in Latin-1, say) is found again by the same bytes. A UTF-8 path is the
/// same bytes as the text journals held before, so either reads the other's.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a path is at most PATH_MAX (4096) bytes"
)]
fn put_path(v: &mut Vec<u8>, path: &Path) {
    let bytes = path.as_os_str().as_bytes();
    put_u32(v, bytes.len() as u32);
    v.extend_from_slice(bytes);
}

impl Record {
    /// The record's kind byte.
    pub fn kind(&self) -> u8 {
        match self {
            Record::Start { .. } => 1,
            Record::Durable { .. } => 2,
            Record::Resize { .. } => 3,
            Record::Log { .. } => 4,
            Record::End => 5,
            Record::Mark { .. } => 6,
            Record::Void { .. } => 7,
            Record::Backup(_) => 8,
        }
    }

    #[expect(
        clippy::cast_possible_truncation,
        reason = "counts of files and pages and lengths of paths and reasons, each far below u32::MAX"
    )]
    fn payload(&self) -> Vec<u8> {
        let mut v = Vec::new();
        match self {
            Record::Start { run_id, files } => {
                put_u64(&mut v, *run_id);
                put_u32(&mut v, files.len() as u32);
                for f in files {
                    put_u32(&mut v, f.file_id);
                    v.push(if f.role == FileRole::Log { 2 } else { 1 });
                    put_path(&mut v, &f.path);
                }
                // After the list, so that journals written before the bound still decode.
                for f in files {
                    put_u64(&mut v, f.max_pages.unwrap_or(0));
                }
            }
            Record::Durable { file_id, pages } => {
                put_u32(&mut v, *file_id);
                put_u32(&mut v, pages.len() as u32);
                for (p, g) in pages {
                    put_u64(&mut v, *p);
                    put_u64(&mut v, *g);
                }
            }
            Record::Resize { file_id, pages } => {
                put_u32(&mut v, *file_id);
                put_u64(&mut v, *pages);
            }
            Record::Log {
                file_id,
                last_block,
                durable_end,
            } => {
                put_u32(&mut v, *file_id);
                put_u64(&mut v, *last_block);
                put_u64(&mut v, *durable_end);
            }
            Record::End => {}
            Record::Mark {
                time_us,
                interval_ms,
                batch,
            } => {
                put_u64(&mut v, *time_us);
                put_u32(&mut v, *interval_ms);
                put_u64(&mut v, *batch);
            }
            Record::Void { time_us, reason } => {
                put_u64(&mut v, *time_us);
                put_u32(&mut v, reason.len() as u32);
                v.extend_from_slice(reason.as_bytes());
            }
            Record::Backup(b) => {
                v.push(u8::from(b.log));
                put_u64(&mut v, b.backup_no);
                put_u64(&mut v, b.blocks);
                put_u64(&mut v, b.bytes);
                put_u32(&mut v, b.digest);
                put_path(&mut v, &b.path);
            }
        }
        v
    }

    /// The record as bytes: magic, kind, payload length, CRC32 of the payload, payload.
    pub fn encode(&self) -> Vec<u8> {
        let payload = self.payload();
        let mut v = Vec::with_capacity(HEADER + payload.len());
        v.extend_from_slice(&MAGIC);
        v.push(self.kind());
        v.extend_from_slice(&[0, 0, 0]);
        // A payload is far below 4 GiB (its counts and lengths are, see `payload`).
        put_u32(&mut v, u32::try_from(payload.len()).unwrap_or(u32::MAX));
        put_u32(&mut v, crc32fast::hash(&payload));
        v.extend_from_slice(&payload);
        v
    }
}

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

/// Merges each run of consecutive Durable records into one per file, keeping the highest
/// generation of each page: replaying them gives the same state (replay keeps the highest
/// generation of a page), and a batch then carries each page at most once, so one batch is never
/// larger than a snapshot however many times a hot page was written while it gathered. Other
/// records (Resize, Log, Start…) stay where they are: a Durable never moves across them.
pub fn coalesce_durable(records: Vec<Record>) -> Vec<Record> {
    let mut out = Vec::with_capacity(records.len());
    let mut run = PagesByFile::new();
    for r in records {
        match r {
            Record::Durable { file_id, pages } => {
                let m = run.entry(file_id).or_default();
                for (p, g) in pages {
                    let e = m.entry(p).or_insert(g);
                    *e = (*e).max(g);
                }
            }
            other => {
                flush_run(&mut run, &mut out);
                out.push(other);
            }
        }
    }
    flush_run(&mut run, &mut out);
    out
}

/// Per file id, per page, the highest generation of a run of Durable records.
type PagesByFile = BTreeMap<u32, BTreeMap<u64, u64>>;

fn flush_run(run: &mut PagesByFile, out: &mut Vec<Record>) {
    for (file_id, pages) in std::mem::take(run) {
        out.push(Record::Durable {
            file_id,
            pages: pages.into_iter().collect(),
        });
    }
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
    let mut bounds = super::bounds::Bounds::default();
    while at < bytes.len() {
        let Some((rec, n)) = decode_one(&bytes[at..]) else {
            let mut damage = super::damage::assess(bytes, at);
            if super::damage::within_last_batch(bytes, at, seq.last) {
                damage = damage.into_torn_tail(bytes.len());
            }
            return Decoded {
                records,
                damage: Some(damage),
            };
        };
        if let Err(why) = bounds.check(&rec) {
            let damage = super::damage::invalid(bytes, at, n, &rec, why);
            return Decoded {
                records,
                damage: Some(damage),
            };
        }
        if let Some((after, next)) = seq.gap(&rec) {
            records.truncate(seq.kept);
            let damage = super::damage::missing_batches(bytes, seq.trusted_to, after, next);
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
pub(super) fn decode_one(b: &[u8]) -> Option<(Record, usize)> {
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
