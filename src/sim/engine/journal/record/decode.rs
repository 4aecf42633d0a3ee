//! A journal's tolerant decoding: each whole, valid record in turn, up to the first flaw
//! (bytes that are not a whole record, a record out of bounds, or a gap in the batch numbers),
//! which is described, never an error.

use super::{BackupRecord, Record, RecordKind};
use crate::codec::{crc32, Reader, UnknownVersion, Versioned};
use crate::page::FileRole;
use crate::sim::engine::journal::{JournalFile, JournalVersion, HEADER, MAGIC};

fn decode_payload(kind: RecordKind, payload: &[u8]) -> Option<Record> {
    let mut c = Reader::new(payload);
    let r = match kind {
        RecordKind::Start => {
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
                let max_pages = Some(c.u64()?).filter(|&p| p > 0);
                files.push(JournalFile {
                    file_id,
                    role,
                    path,
                    max_pages,
                });
            }
            Record::Start { run_id, files }
        }
        RecordKind::Durable => {
            let file_id = c.u32()?;
            let n = c.u32()? as usize;
            let mut pages = Vec::with_capacity(n.min(payload.len() / 16));
            for _ in 0..n {
                pages.push((c.u64()?, c.u64()?));
            }
            Record::Durable { file_id, pages }
        }
        RecordKind::Resize => Record::Resize {
            file_id: c.u32()?,
            pages: c.u64()?,
        },
        RecordKind::Log => Record::Log {
            file_id: c.u32()?,
            last_block: c.u64()?,
            durable_end: c.u64()?,
        },
        RecordKind::End => Record::End,
        RecordKind::Mark => Record::Mark {
            time_us: c.u64()?,
            interval_ms: c.u32()?,
            batch: c.u64()?,
        },
        RecordKind::Void => Record::Void {
            time_us: c.u64()?,
            reason: String::from_utf8_lossy(c.bytes()?).into_owned(),
        },
        RecordKind::Backup => {
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
    };
    // A payload longer than its record is not one this version wrote.
    c.is_empty().then_some(r)
}

/// The version a journal's first frame states: `Err` when this build does not read it.
/// Bytes too short to hold a frame header, or that do not begin with the magic, state none
/// (a journal cut before its Start landed, or damage, which the decoding describes).
pub fn version_of(bytes: &[u8]) -> Result<Option<JournalVersion>, UnknownVersion> {
    let mut r = Reader::new(bytes);
    if r.array::<8>() != Some(MAGIC) {
        return Ok(None);
    }
    // The version is read as soon as its bytes are there, before the rest of the frame.
    match (r.u8(), r.u16()) {
        (Some(_), Some(v)) => JournalVersion::check(u32::from(v)).map(Some),
        _ => Ok(None),
    }
}

/// A record's frame header, as read (nothing checked but that it is whole and begins with
/// the magic).
#[derive(Debug, Clone, Copy)]
pub(in crate::sim::engine::journal) struct Frame {
    /// The kind byte.
    pub kind: u8,
    /// The journal version the frame states.
    pub version: u16,
    /// The payload's length.
    pub len: u32,
    /// The payload's CRC32.
    pub crc: u32,
}

/// The frame header at the start of `b`, when `b` holds a whole one that begins with the
/// magic.
pub(in crate::sim::engine::journal) fn frame(b: &[u8]) -> Option<Frame> {
    let mut r = Reader::new(b);
    if r.array::<8>()? != MAGIC {
        return None;
    }
    let (kind, version) = (r.u8()?, r.u16()?);
    r.skip(1)?;
    Some(Frame {
        kind,
        version,
        len: r.u32()?,
        crc: r.u32()?,
    })
}

/// The record at the start of `b` and its length, when it is whole and valid: the magic, a
/// kind this build knows, the version this build writes (a frame of another version amid the
/// journal is damage: [`version_of`] refuses a journal by its first frame), the CRC, and a
/// payload that is exactly its record.
pub(in crate::sim::engine::journal) fn decode_one(b: &[u8]) -> Option<(Record, usize)> {
    let f = frame(b)?;
    let kind = RecordKind::try_from(f.kind).ok()?;
    if u32::from(f.version) != JournalVersion::CURRENT.number() {
        return None;
    }
    let len = usize::try_from(f.len).ok()?;
    let payload = b.get(HEADER..HEADER.checked_add(len)?)?;
    if crc32(payload) != f.crc {
        return None;
    }
    Some((decode_payload(kind, payload)?, HEADER + len))
}
