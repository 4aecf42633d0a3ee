//! A journal record's encoding: its kind byte, its payload's fields in little-endian order,
//! and the frame around the payload (magic, kind, length, CRC32).

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Record;
use crate::page::FileRole;
use crate::sim::engine::journal::{HEADER, MAGIC};

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
