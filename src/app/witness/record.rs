//! The witness's record file: its header (magic, run id, host, gaps) and entries (batch
//! number, flags, length, CRC-32, journal records), written and read back; a torn last entry
//! is cut off where the record stops being whole.

use std::ffi::{OsStr, OsString};
use std::io::Read;

use crate::io::safefile::{Dir, Use};

use crate::codec::{crc32_of, Reader, Versioned, Writer};

const MAGIC: [u8; 8] = *b"SQLSIMWT";

crate::codec::versions! {
    /// The witness record file's versions this build reads, stated in its header.
    pub(super) enum WitnessVersion: "witness record", writes V1 {
        /// Header, then entries of journal bytes.
        V1 = 1,
    }
}

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
    let h = &host.as_bytes()[..host.len().min(255)];
    let mut w = Writer::new();
    w.put_raw(&MAGIC)
        .put_u32(WitnessVersion::CURRENT.number())
        .put_u64(run_id)
        .put_u64(gaps)
        .put_u8(u8::try_from(h.len()).unwrap_or(u8::MAX))
        .put_raw(h);
    w.into_vec()
}

/// One entry: its header, then `data`.
pub(super) fn entry(seq: u64, flags: u8, data: &[u8]) -> Vec<u8> {
    let mut w = Writer::with_capacity(ENTRY + data.len());
    // A chunk is at most MAX_CHUNK bytes (the frame's bound).
    w.put_u64(seq)
        .put_u8(flags)
        .put_u32(u32::try_from(data.len()).unwrap_or(u32::MAX));
    let crc = crc32_of(&[w.as_slice(), data]);
    w.put_u32(crc).put_raw(data);
    w.into_vec()
}

/// A record file, read: header fields, the entries' journal bytes, the last batch and the
/// length of what is whole (a torn last entry, a crash while appending, is after it).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) run_id: u64,
    pub(super) host: String,
    pub(super) gaps: u64,
    pub(super) data: Vec<u8>,
    pub(super) last_seq: u64,
    pub(super) whole: u64,
}

/// Why bytes are not a record this build reads.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum NotRead {
    /// Not a record file at all.
    NotARecord,
    /// A record of a version this build does not read.
    Version(crate::codec::UnknownVersion),
}

/// Reads a record file's bytes.
pub(super) fn parse(b: &[u8]) -> Result<Parsed, NotRead> {
    let mut r = Reader::new(b);
    if r.array::<8>() != Some(MAGIC) {
        return Err(NotRead::NotARecord);
    }
    WitnessVersion::check(r.u32().ok_or(NotRead::NotARecord)?).map_err(NotRead::Version)?;
    let head = (|| {
        let (run_id, gaps, hl) = (r.u64()?, r.u64()?, r.u8()?);
        let host = String::from_utf8(r.take(usize::from(hl))?.to_vec()).ok()?;
        Some((run_id, gaps, host))
    })();
    let (run_id, gaps, host) = head.ok_or(NotRead::NotARecord)?;
    let mut p = Parsed {
        run_id,
        host,
        gaps,
        data: Vec::new(),
        last_seq: 0,
        whole: r.position() as u64,
    };
    while let Some((seq, data)) = next_entry(&mut r) {
        p.data.extend_from_slice(data);
        p.last_seq = seq;
        p.whole = r.position() as u64;
    }
    Ok(p)
}

/// The next whole entry with its CRC right: its batch number and journal bytes. `None` at the
/// end, or at a torn or damaged entry (where the record stops being whole).
fn next_entry<'a>(r: &mut Reader<'a>) -> Option<(u64, &'a [u8])> {
    let mut e = *r;
    let head = e.take(ENTRY - 4)?;
    let mut h = Reader::new(head);
    let (seq, _flags, len) = (h.u64()?, h.u8()?, h.u32()?);
    let crc = e.u32()?;
    let data = e.take(usize::try_from(len).ok()?)?;
    if crc32_of(&[head, data]) != crc {
        return None;
    }
    *r = e;
    Some((seq, data))
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
    match parse(&b) {
        Ok(p) => Ok(Some(p)),
        Err(NotRead::Version(v)) => Err(v.at(dir.join(name)).into()),
        Err(NotRead::NotARecord) => {
            anyhow::bail!("{}: not a witness record", dir.join(name).display())
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn a_record_reads_back_as_written_and_a_torn_entry_is_cut(
            run_id: u64,
            gaps: u64,
            host in "[a-z0-9.-]{0,40}",
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..50), 0..5),
            cut in 1usize..17,
        ) {
            let mut b = header(run_id, &host, gaps);
            let head = b.len() as u64;
            for (i, c) in chunks.iter().enumerate() {
                b.extend_from_slice(&entry(i as u64 + 1, 0, c));
            }
            let whole = b.len() as u64;
            b.extend_from_slice(&entry(99, 0, b"torn")[..cut]);
            let p = parse(&b).expect("a record");
            prop_assert_eq!(
                (p.run_id, p.gaps, p.host, p.data, p.last_seq, p.whole),
                (run_id, gaps, host, chunks.concat(), chunks.len() as u64, whole)
            );
            prop_assert!(whole >= head);
        }
    }

    #[test]
    fn a_record_of_another_version_is_refused_by_path_and_versions() {
        let dir = tempfile::tempdir().expect("tempdir");
        let name = name_of(5);
        let mut b = header(5, "h", 0);
        b[8..12].copy_from_slice(&2u32.to_le_bytes());
        std::fs::write(dir.path().join(&name), &b).expect("write");
        let d = Dir::open(dir.path()).expect("dir");
        let e = read_record(&d, &name).expect_err("refused").to_string();
        let path = dir.path().join(&name);
        assert_eq!(
            e,
            format!(
                "{}: witness record format version 2; this build of sqliosim reads version 1: refused, not read (use the sqliosim that wrote it)",
                path.display()
            )
        );
        assert_eq!(parse(b"SQLSIMWT"), Err(NotRead::NotARecord));
    }
}
