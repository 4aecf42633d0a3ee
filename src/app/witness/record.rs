//! The witness's record file: its header (magic, run id, host, gaps) and entries (batch
//! number, flags, length, CRC-32, journal records), written and read back; a torn last entry
//! is cut off where the record stops being whole.

use std::ffi::{OsStr, OsString};
use std::io::Read;

use crate::io::safefile::{Dir, Use};

const MAGIC: [u8; 8] = *b"SQLSIMWT";
const VERSION: u32 = 1;
/// Entry header: seq u64, flags u8, len u32, crc u32.
const ENTRY: usize = 17;
/// Most bytes of a record file (the journal's bound, and the entries' headers).
const MAX_RECORD_FILE: u64 = 512 << 20;

/// The name of `run_id`'s record file.
pub(super) fn name_of(run_id: u64) -> OsString {
    format!("{run_id:016x}.witness").into()
}

/// A record file's header.
pub(super) fn header(run_id: u64, host: &str, gaps: u64) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend_from_slice(&VERSION.to_le_bytes());
    v.extend_from_slice(&run_id.to_le_bytes());
    v.extend_from_slice(&gaps.to_le_bytes());
    let h = &host.as_bytes()[..host.len().min(255)];
    v.push(h.len() as u8);
    v.extend_from_slice(h);
    v
}

/// One entry: its header, then `data`.
pub(super) fn entry(seq: u64, flags: u8, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(ENTRY + data.len());
    v.extend_from_slice(&seq.to_le_bytes());
    v.push(flags);
    // A chunk is at most MAX_CHUNK bytes (the frame's bound).
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&v);
    h.update(data);
    v.extend_from_slice(&h.finalize().to_le_bytes());
    v.extend_from_slice(data);
    v
}

/// A record file, read: header fields, the entries' journal bytes, the last batch and the
/// length of what is whole (a torn last entry, a crash while appending, is after it).
pub(super) struct Parsed {
    pub(super) run_id: u64,
    pub(super) host: String,
    pub(super) gaps: u64,
    pub(super) data: Vec<u8>,
    pub(super) last_seq: u64,
    pub(super) whole: u64,
}

/// Reads a record file's bytes; `None` when they are not a record.
pub(super) fn parse(b: &[u8]) -> Option<Parsed> {
    if b.len() < 29 || b[..8] != MAGIC || b[8..12] != VERSION.to_le_bytes() {
        return None;
    }
    let u64_at = |i: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(a)
    };
    let run_id = u64_at(12);
    let gaps = u64_at(20);
    let hl = usize::from(b[28]);
    let host = String::from_utf8(b.get(29..29 + hl)?.to_vec()).ok()?;
    let mut at = 29 + hl;
    let mut p = Parsed {
        run_id,
        host,
        gaps,
        data: Vec::new(),
        last_seq: 0,
        whole: at as u64,
    };
    while let Some(h) = b.get(at..at + ENTRY) {
        let seq = u64_at(at);
        let len = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as usize;
        let crc = u32::from_le_bytes([h[13], h[14], h[15], h[16]]);
        let Some(data) = b.get(at + ENTRY..at + ENTRY + len) else {
            break;
        };
        let mut c = crc32fast::Hasher::new();
        c.update(&h[..13]);
        c.update(data);
        if c.finalize() != crc {
            break;
        }
        p.data.extend_from_slice(data);
        p.last_seq = seq;
        at += ENTRY + len;
        p.whole = at as u64;
    }
    Some(p)
}

/// Reads the record file `name` (bounded).
pub(super) fn read_record(dir: &Dir, name: &OsStr) -> anyhow::Result<Option<Parsed>> {
    let Some(f) = dir.open_read(name, Use::Own)? else {
        return Ok(None);
    };
    let len = f.metadata()?.len();
    if len > MAX_RECORD_FILE {
        anyhow::bail!(
            "{}: {len} bytes, more than a record may hold ({MAX_RECORD_FILE})",
            dir.join(name).display()
        );
    }
    let mut b = Vec::new();
    f.take(MAX_RECORD_FILE).read_to_end(&mut b)?;
    parse(&b)
        .map(Some)
        .ok_or_else(|| anyhow::anyhow!("{}: not a witness record", dir.join(name).display()))
}
