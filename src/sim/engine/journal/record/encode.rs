//! A journal record's encoding: its payload's fields through the shared codec
//! ([`crate::codec::Writer`]), and the frame around the payload (magic, kind, the journal's
//! version, length, CRC32); the layout is in docs/journal.md.

use super::{Record, RecordKind};
use crate::codec::{crc32, Versioned, Writer};
use crate::page::FileRole;
use crate::sim::engine::journal::{JournalVersion, HEADER, MAGIC};

/// A count or length as the `u32` the layout stores. Counts of files and pages are far below
/// `u32::MAX` (a batch is coalesced, a file set is a few hundred files).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Record {
    /// The record's kind.
    pub fn kind(&self) -> RecordKind {
        RecordKind::of(self)
    }

    fn payload(&self) -> Vec<u8> {
        let mut w = Writer::new();
        match self {
            Record::Start { run_id, files } => {
                w.put_u64(*run_id).put_u32(count(files.len()));
                for f in files {
                    w.put_u32(f.file_id)
                        .put_u8(if f.role == FileRole::Log { 2 } else { 1 })
                        .put_path(&f.path)
                        .put_u64(f.max_pages.unwrap_or(0));
                }
            }
            Record::Durable { file_id, pages } => {
                w.put_u32(*file_id).put_u32(count(pages.len()));
                for (p, g) in pages {
                    w.put_u64(*p).put_u64(*g);
                }
            }
            Record::Resize { file_id, pages } => {
                w.put_u32(*file_id).put_u64(*pages);
            }
            Record::Log {
                file_id,
                last_block,
                durable_end,
            } => {
                w.put_u32(*file_id)
                    .put_u64(*last_block)
                    .put_u64(*durable_end);
            }
            Record::End => {}
            Record::Mark {
                time_us,
                interval_ms,
                batch,
            } => {
                w.put_u64(*time_us).put_u32(*interval_ms).put_u64(*batch);
            }
            Record::Void { time_us, reason } => {
                w.put_u64(*time_us).put_bytes(reason.as_bytes());
            }
            Record::Backup(b) => {
                w.put_u8(u8::from(b.log))
                    .put_u64(b.backup_no)
                    .put_u64(b.blocks)
                    .put_u64(b.bytes)
                    .put_u32(b.digest)
                    .put_path(&b.path);
            }
        }
        w.into_vec()
    }

    /// The record as bytes: magic, kind, version (`u16`), a spare byte, payload length, CRC32
    /// of the payload, payload.
    pub fn encode(&self) -> Vec<u8> {
        let payload = self.payload();
        let version = u16::try_from(JournalVersion::CURRENT.number()).unwrap_or(u16::MAX);
        let mut w = Writer::with_capacity(HEADER + payload.len());
        w.put_raw(&MAGIC)
            .put_u8(self.kind().into())
            .put_u16(version)
            .put_zeros(1)
            .put_u32(count(payload.len()))
            .put_u32(crc32(&payload))
            .put_raw(&payload);
        w.into_vec()
    }
}
