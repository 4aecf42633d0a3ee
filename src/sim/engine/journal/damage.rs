//! Telling a torn tail from a damaged journal.
//!
//! The journal thread writes one batch and `fdatasync`s it before it writes the next, so
//! every record followed by a whole record was durable. Bytes that are not a record with
//! nothing whole after them are the tail a crash while appending leaves: ignored, as they
//! always were. Bytes that are not a record *followed by whole records* are the journal's own
//! device having lost or torn (or corrupted) a write it had acknowledged as durable: the
//! journal is damaged there, and only what comes before the damage is trusted.
//!
//! One exception: the last batch. Until its `fdatasync` returns, a filesystem may write a
//! batch's blocks back in any order, so a crash can keep a later block of the batch and lose
//! an earlier one: a flaw, then whole records of the same batch. When every whole record after
//! the flaw belongs to the batch after the last mark read (none of them a mark but, at most,
//! the very last, carrying the next number: 1 right after a Start, since a snapshot is synced
//! before it is renamed in and ends with its own mark), the flaw and those records are that unsynced
//! batch torn out of order: a torn tail, dropped whole (`reordered` counts the records), as a
//! torn tail always was. A batch with a mark after it was synced before the next was written,
//! so a flaw followed by a second mark stays damage.
//!
//! A loss can also leave no hole: batches are numbered since the last Start, so whole records
//! whose batch number jumps (batch 7 right after batch 5) show that acknowledged batches went
//! missing — appends that landed where a lost one should have been, or older records showing
//! through a write that never reached the device. Only what precedes the first batch after the
//! gap is trusted then, as for any damage.

use std::fmt;

use super::record::{decode_one, Record};
use super::{HEADER, MAGIC};

/// What is at the offset where decoding stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flaw {
    /// Zeros where a record should begin (a lost write of newly allocated blocks).
    Zeros,
    /// A record header whose payload's CRC32 does not match (a torn or corrupted write).
    ChecksumMismatch {
        /// Record kind in the header.
        kind: u8,
        /// Payload length in the header.
        len: u32,
        /// CRC32 in the header.
        stored: u32,
        /// CRC32 of the payload found.
        computed: u32,
    },
    /// A record header whose payload runs past the end of the file.
    Cut,
    /// A whole, checksummed record that cannot be decoded (unknown kind, short payload).
    Unreadable {
        /// Record kind in the header.
        kind: u8,
    },
    /// Bytes that are neither zeros nor a record.
    NotARecord,
    /// A whole record whose checksum matches but which cannot be right: it names a file the
    /// run does not have, or a page or size beyond the file's largest (see `bounds.rs`).
    Invalid {
        /// Record kind.
        kind: u8,
        /// What is wrong with it.
        why: String,
    },
    /// Whole records, but the batch numbers jump: `next` follows `after` (see the module doc).
    MissingBatches {
        /// The last batch before the gap.
        after: u64,
        /// The batch found next.
        next: u64,
    },
}

/// Where a journal stops being readable, and what follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset in the journal where decoding stopped.
    pub offset: u64,
    /// Bytes from there to the next whole record (or to the end).
    pub len: u64,
    /// What is there.
    pub flaw: Flaw,
    /// Whole records found after it (0: a torn tail).
    pub records_after: usize,
    /// Offset of the first of them.
    pub resumes_at: Option<u64>,
    /// An End record (a clean shutdown) is among them.
    pub end_after: bool,
    /// Whole records of the last, unsynced batch after a tear of that batch, dropped with it
    /// (0 but for a batch written back out of order: see the module doc).
    pub reordered: usize,
}

impl Damage {
    /// True when whole records follow, or the flaw is a whole record that cannot be right:
    /// neither is what a crash while appending leaves.
    pub fn is_mid_journal(&self) -> bool {
        self.records_after > 0 || matches!(self.flaw, Flaw::Invalid { .. })
    }

    /// The same flaw taken as the torn tail of an unsynced last batch: everything from it to
    /// `file_len` is dropped, the whole records after it counted in `reordered`.
    pub(super) fn into_torn_tail(self, file_len: usize) -> Damage {
        Damage {
            len: file_len as u64 - self.offset,
            reordered: self.records_after,
            records_after: 0,
            resumes_at: None,
            end_after: false,
            ..self
        }
    }
}

/// True when every whole record after the flaw at `at` belongs to the batch after `last` (the
/// last mark read since the last Start, if any): no mark among them but, at most, the very
/// last record, numbered `last + 1` (1 right after a Start). Then the flaw lies in the
/// journal's last batch, which a crash may have torn in any order (see the module doc).
pub(super) fn within_last_batch(bytes: &[u8], at: usize, last: Option<u64>) -> bool {
    let mut mark: Option<u64> = None;
    for (_, r) in records_from(bytes, at + 1) {
        if mark.is_some() {
            return false; // A record after the batch's mark: a later batch.
        }
        if let Record::Mark { batch, .. } = r {
            mark = Some(batch);
        }
    }
    match (mark, last) {
        (Some(0), _) => false,
        (Some(b), Some(l)) => b == l + 1,
        // Right after a Start, only a fresh run's first batch can be torn: a snapshot (a
        // compaction's or a resume's carried-over state) is synced before it is renamed in,
        // and ends with its own mark, so a flaw before a mark other than 1 is inside it.
        (Some(b), None) => b == 1,
        (None, _) => true,
    }
}

impl fmt::Display for Flaw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flaw::Zeros => write!(f, "zeros where a record should begin (a lost write)"),
            Flaw::ChecksumMismatch {
                kind,
                len,
                stored,
                computed,
            } => write!(
                f,
                "a record (kind {kind}, {len}-byte payload) whose checksum does not match: stored {stored:08x}, computed {computed:08x} (a torn or corrupted write)"
            ),
            Flaw::Cut => write!(f, "a record cut short by the end of the file"),
            Flaw::Unreadable { kind } => {
                write!(f, "a record of kind {kind} that cannot be decoded")
            }
            Flaw::NotARecord => write!(f, "bytes that are not a record"),
            Flaw::Invalid { kind, why } => write!(
                f,
                "a whole record (kind {kind}) whose checksum matches but which cannot be right: {why}"
            ),
            Flaw::MissingBatches { after, next } => write!(
                f,
                "batch {next} follows batch {after}: {} batch(es) of acknowledgements missing with no hole where they were (a lost write)",
                next.saturating_sub(*after).saturating_sub(1)
            ),
        }
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len == 0 {
            write!(f, "at offset {}: {}", self.offset, self.flaw)?;
        } else {
            write!(
                f,
                "{} bytes at offset {}: {}",
                self.len, self.offset, self.flaw
            )?;
        }
        if let Some(at) = self.resumes_at {
            write!(
                f,
                "; {} whole record(s) follow from offset {at}{}",
                self.records_after,
                if self.end_after {
                    ", the run's End record among them"
                } else {
                    ""
                }
            )?;
        }
        Ok(())
    }
}

/// What is wrong at `at`, where [`decode_one`] failed.
fn flaw_at(bytes: &[u8], at: usize, until: usize) -> Flaw {
    let b = &bytes[at..];
    if bytes[at..until].iter().all(|&x| x == 0) {
        return Flaw::Zeros;
    }
    let Some(f) = super::record::frame(b) else {
        return if b.len() < HEADER && MAGIC.starts_with(&b[..b.len().min(8)]) {
            Flaw::Cut
        } else {
            Flaw::NotARecord
        };
    };
    let Some(payload) = b.get(HEADER..HEADER.saturating_add(f.len as usize)) else {
        return Flaw::Cut;
    };
    let computed = crate::codec::crc32(payload);
    if computed != f.crc {
        return Flaw::ChecksumMismatch {
            kind: f.kind,
            len: f.len,
            stored: f.crc,
            computed,
        };
    }
    // Whole and checksummed, but of another version, an unknown kind, or a payload that is
    // not its record.
    Flaw::Unreadable { kind: f.kind }
}

/// Describes the damage at `at` (where decoding stopped) and the whole records after it.
pub(super) fn assess(bytes: &[u8], at: usize) -> Damage {
    let after = whole_records(bytes, at + 1);
    let until = after.first.unwrap_or(bytes.len());
    Damage {
        offset: at as u64,
        len: (until - at) as u64,
        flaw: flaw_at(bytes, at, until),
        records_after: after.count,
        resumes_at: after.first.map(|p| p as u64),
        end_after: after.end,
        reordered: 0,
    }
}

/// The damage of a gap in the batch numbers: the records from `at` (the first after the last
/// batch before the gap) on are whole but not trusted.
pub(super) fn missing_batches(bytes: &[u8], at: usize, after: u64, next: u64) -> Damage {
    let rest = whole_records(bytes, at);
    Damage {
        offset: at as u64,
        len: 0,
        flaw: Flaw::MissingBatches { after, next },
        records_after: rest.count,
        resumes_at: rest.first.map(|p| p as u64),
        end_after: rest.end,
        reordered: 0,
    }
}

/// The damage of a whole record (at `at`, `len` bytes) that cannot be right.
pub(super) fn invalid(bytes: &[u8], at: usize, len: usize, r: &Record, why: String) -> Damage {
    let rest = whole_records(bytes, at + len);
    Damage {
        offset: at as u64,
        len: len as u64,
        flaw: Flaw::Invalid {
            kind: r.kind().into(),
            why,
        },
        records_after: rest.count,
        resumes_at: rest.first.map(|p| p as u64),
        end_after: rest.end,
        reordered: 0,
    }
}

/// Whole records found from `from` on, skipping whatever is not one.
struct WholeRecords {
    count: usize,
    first: Option<usize>,
    end: bool,
}

fn whole_records(bytes: &[u8], from: usize) -> WholeRecords {
    let mut out = WholeRecords {
        count: 0,
        first: None,
        end: false,
    };
    for (p, r) in records_from(bytes, from) {
        out.first.get_or_insert(p);
        out.count += 1;
        out.end |= r == Record::End;
    }
    out
}

/// How many bytes a scan for whole records may checksum, per byte of the journal (plus
/// [`SCAN_HASH_MIN`]). A candidate record's checksum covers the length its header claims, and a
/// failed candidate is passed by one byte only (a record may start inside it), so crafted bytes
/// (a magic every few bytes, each claiming the length to the end) would cost the square of the
/// journal's size: a verify that never ends. A journal the tool wrote has a magic only where a
/// record starts, so its scan checksums each byte about once.
const SCAN_HASH_FACTOR: usize = 16;
/// Bytes a scan may checksum whatever the journal's size (the largest record is about 1 MiB).
const SCAN_HASH_MIN: usize = 64 << 20;

/// The whole records found from `from` on, with their offsets, skipping whatever is not one.
/// The scan ends early once the checksums it has computed pass its budget (see
/// [`SCAN_HASH_FACTOR`]): records after that point in such crafted bytes are not counted.
fn records_from(bytes: &[u8], mut from: usize) -> impl Iterator<Item = (usize, Record)> + '_ {
    let mut budget = bytes
        .len()
        .saturating_mul(SCAN_HASH_FACTOR)
        .saturating_add(SCAN_HASH_MIN);
    std::iter::from_fn(move || {
        while let Some(i) = find_magic(bytes.get(from..).unwrap_or_default()) {
            let p = from + i;
            let claimed = claimed_len(&bytes[p..]);
            if claimed > budget {
                return None;
            }
            budget -= claimed;
            match decode_one(&bytes[p..]) {
                Some((r, n)) => {
                    from = p + n;
                    return Some((p, r));
                }
                None => from = p + 1,
            }
        }
        None
    })
}

/// The bytes the checksum of a candidate record at the start of `b` would cover: the length
/// its header claims (0 when the header is not whole or the length passes the end of `b`,
/// which [`decode_one`] refuses without a checksum).
fn claimed_len(b: &[u8]) -> usize {
    let Some(len) = super::record::frame(b).map(|f| f.len as usize) else {
        return 0;
    };
    if len > b.len() - HEADER {
        0
    } else {
        len
    }
}

fn find_magic(b: &[u8]) -> Option<usize> {
    b.windows(MAGIC.len()).position(|w| w == MAGIC)
}
