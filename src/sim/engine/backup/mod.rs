//! The backup stream (issue #25 §1): what `[BackupUser]` writes, `RESTORE VERIFYONLY` and
//! `sqliosim verify` read back, and a restore copies pages from.
//!
//! The stream is a sequence of blocks written back to back in large sequential writes. Each
//! block says what it is, fio-verify style, so a reader needs nothing else to judge it: a
//! 16 KB header — magic, version, flags, run id, backup number, block number and byte offset
//! (its stream position), the pages it carries as (file, page, generation), and a CRC32 of the
//! header and the pages — then the pages themselves, 8 KB each, as the backup read them. The
//! last block carries no pages and has the END flag and the count of pages carried: a stream
//! without it is a backup that did not finish (a crash or a stop), not a damaged one. Every
//! carried page is one of ours, so its own stamp and checksum say whether it is intact and
//! whether it is the generation the header names. docs/backup.md shows the layout.

// A narrowing cast in an on-disk codec either is checked (`try_from`) or says why its range
// holds (issue #22 §12).
#![warn(clippy::cast_possible_truncation)]

pub mod logstream;
pub mod restore;
pub mod scan;
pub mod writer;

use crate::codec::{crc32, crc32_of, ForeignFile, Reader, UnknownVersion, Versioned, Writer};
use crate::page::PAGE_SIZE;

/// Bytes of a block header (a multiple of every direct-I/O unit up to 16 KB).
pub const BLOCK_HEADER: usize = 16 << 10;
/// The magic of a block header.
pub const MAGIC: &[u8; 8] = b"SQLIOBAK";

/// The magic a backup stream of ours begins with: a log backup's (`.trn`) or a full one's.
pub fn magic_of(log: bool) -> &'static [u8; 8] {
    if log {
        logstream::MAGIC
    } else {
        MAGIC
    }
}
crate::codec::versions! {
    /// The backup stream's versions this build reads, stated in every block header.
    pub enum BakVersion: "backup stream", writes V1 {
        /// The layout of docs/backup.md.
        V1 = 1,
    }
}
/// Flag of the last block of a finished stream.
pub const FLAG_END: u32 = 1;
/// Bytes of the fixed fields at the start of a header.
const FIXED: usize = 64;
/// Bytes of one carried page's entry: file u32, page u64, generation u64.
const ENTRY: usize = 20;
/// Most pages one block may carry (what its header has room to name).
pub const MAX_BLOCK_PAGES: usize = (BLOCK_HEADER - FIXED) / ENTRY;
/// Offset of the CRC in the header.
const OFF_CRC: usize = 52;
/// Offset of the version (`u32`) in the header: the log backup's blocks keep it there too.
const OFF_VERSION: usize = 8;

/// One page a block carries, as the backup read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// File id within the set.
    pub file: u32,
    /// Page number in the file.
    pub page: u64,
    /// Generation the page held when it was read (0: never written).
    pub generation: u64,
}

/// What a block header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockHead {
    /// `FLAG_END` for the last block.
    pub flags: u32,
    /// Run id of the file set the pages came from.
    pub run_id: u64,
    /// Which backup of the run (1-based).
    pub backup_no: u64,
    /// Position of the block in the stream (0-based).
    pub block_no: u64,
    /// Byte offset of the block in the stream.
    pub offset: u64,
    /// The pages carried, in order.
    pub pages: Vec<Carried>,
    /// On the end block: pages carried by the whole stream.
    pub total_pages: u64,
    /// CRC32 of the header (this field as zero) and the pages.
    pub crc: u32,
}

impl BlockHead {
    /// Bytes of the block: header and pages.
    pub fn len(&self) -> usize {
        BLOCK_HEADER + self.pages.len() * PAGE_SIZE
    }

    /// True for a block that carries no pages (the end block).
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// True for the end block of a finished stream.
    pub fn is_end(&self) -> bool {
        self.flags & FLAG_END != 0
    }
}

/// Why a header cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// Not a block header at all.
    #[error("no backup block header (magic {0:02x?})")]
    Magic([u8; 8]),
    /// A version this build does not read.
    #[error(transparent)]
    Version(#[from] UnknownVersion),
    /// More pages than a header can name.
    #[error("the header names {0} pages, more than a block carries ({MAX_BLOCK_PAGES})")]
    Pages(u32),
    /// Fewer bytes than a block header.
    #[error("{0} bytes, less than a block header ({BLOCK_HEADER})")]
    Short(usize),
}

/// Writes `head` into `block[..BLOCK_HEADER]` and its CRC over the header and the pages in
/// `block[BLOCK_HEADER..head.len()]`; returns the CRC.
pub fn seal(head: &BlockHead, block: &mut [u8]) -> u32 {
    let mut w = Writer::with_capacity(BLOCK_HEADER);
    w.put_raw(MAGIC)
        .put_u32(BakVersion::CURRENT.number())
        .put_u32(head.flags)
        .put_u64(head.run_id)
        .put_u64(head.backup_no)
        .put_u64(head.block_no)
        .put_u64(head.offset)
        // A block carries at most MAX_BLOCK_PAGES pages, far below u32::MAX.
        .put_u32(u32::try_from(head.pages.len()).unwrap_or(u32::MAX))
        .put_u32(0) // the CRC, below
        .put_u64(head.total_pages);
    for c in &head.pages {
        w.put_u32(c.file).put_u64(c.page).put_u64(c.generation);
    }
    let h = &mut block[..BLOCK_HEADER];
    h.fill(0);
    h[..w.len()].copy_from_slice(w.as_slice());
    let crc = crc32(&block[..head.len()]);
    block[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
    crc
}

/// Reads a block header (without checking its CRC: see [`crc_of`]).
pub fn read_head(h: &[u8]) -> Result<BlockHead, HeadError> {
    if h.len() < BLOCK_HEADER {
        return Err(HeadError::Short(h.len()));
    }
    let short = || HeadError::Short(h.len());
    let mut r = Reader::new(&h[..BLOCK_HEADER]);
    let magic = r.array::<8>().ok_or_else(short)?;
    if &magic != MAGIC {
        return Err(HeadError::Magic(magic));
    }
    BakVersion::check(r.u32().ok_or_else(short)?)?;
    let fields = (|| {
        let (flags, run_id, backup_no, block_no, offset) =
            (r.u32()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?);
        let (n, crc, total_pages) = (r.u32()?, r.u32()?, r.u64()?);
        Some((
            flags,
            run_id,
            backup_no,
            block_no,
            offset,
            n,
            crc,
            total_pages,
        ))
    })();
    let (flags, run_id, backup_no, block_no, offset, n, crc, total_pages) =
        fields.ok_or_else(short)?;
    if n as usize > MAX_BLOCK_PAGES {
        return Err(HeadError::Pages(n));
    }
    let mut pages = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (file, page, generation) = (r.u32(), r.u64(), r.u64());
        let (Some(file), Some(page), Some(generation)) = (file, page, generation) else {
            return Err(short());
        };
        pages.push(Carried {
            file,
            page,
            generation,
        });
    }
    Ok(BlockHead {
        flags,
        run_id,
        backup_no,
        block_no,
        offset,
        pages,
        total_pages,
        crc,
    })
}

/// The CRC a whole block (header and pages) should carry.
pub fn crc_of(block: &[u8]) -> u32 {
    crc32_of(&[&block[..OFF_CRC], &[0u8; 4], &block[OFF_CRC + 4..]])
}

/// Refuses the stream at `path` when its first block states a version this build does not
/// read: it was written by another sqliosim, and is not judged. A first block that cannot be
/// read, or is not a header of ours, is left to the scan that follows (it says what is wrong).
pub fn refuse_foreign(
    storage: &dyn crate::io::Storage,
    path: &std::path::Path,
    log: bool,
) -> Result<(), ForeignFile> {
    let Ok(mut head) = crate::io::align::AlignedBuf::new(logstream::HEADER) else {
        return Ok(());
    };
    if storage.read_at(&mut head, 0).ok() != Some(logstream::HEADER) {
        return Ok(());
    }
    let mut r = Reader::new(&head);
    if r.array::<8>().as_ref() != Some(magic_of(log)) {
        return Ok(());
    }
    let found = r.u32().unwrap_or(0);
    let known = if log {
        logstream::TrnVersion::check(found).map(|_| ())
    } else {
        BakVersion::check(found).map(|_| ())
    };
    known.map_err(|v| v.at(path))
}

/// A finished stream that states format `version`: one END block carrying nothing (a `.trn`'s
/// when `log`, else a `.bak`'s) of the first backup of run 0, in this build's layout with the
/// version field saying `version` and the CRC sealed over it, so that only the version is
/// foreign. This build writes only its current version; this is for tools and tests that must
/// forge a stream of another (the refusal of a foreign stream by `verify` and `restore`).
pub fn stream_of_version(log: bool, version: u32) -> Vec<u8> {
    let mut block = if log {
        let head = logstream::TrnHead {
            flags: logstream::FLAG_END,
            backup_no: 1,
            ..logstream::TrnHead::default()
        };
        let mut b = vec![0u8; head.len()];
        logstream::seal(&head, &mut b);
        b
    } else {
        let head = BlockHead {
            flags: FLAG_END,
            run_id: 0,
            backup_no: 1,
            block_no: 0,
            offset: 0,
            pages: Vec::new(),
            total_pages: 0,
            crc: 0,
        };
        let mut b = vec![0u8; head.len()];
        seal(&head, &mut b);
        b
    };
    block[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&version.to_le_bytes());
    let crc = crc_of(&block);
    block[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
    block
}

/// Opens the backup stream at `path` through `backend` (so a planted link is refused and the
/// faulty twin reaches it), creating it if need be, and refuses a file that is not a stream of
/// ours unless `force`. The run's setup calls it once, so that a name it cannot use stops the
/// run before it starts (exit 2, naming the path), and the BackupUser before each backup.
pub fn open_stream(
    backend: &dyn crate::io::Backend,
    path: &std::path::Path,
    direct: bool,
    force: bool,
) -> Result<std::sync::Arc<dyn crate::io::Storage>, String> {
    open_stream_of(backend, path, direct, force, MAGIC)
}

/// As [`open_stream`], for a stream whose blocks begin with `magic` (the full backup's, or
/// the log backup's [`logstream::MAGIC`]).
pub fn open_stream_of(
    backend: &dyn crate::io::Backend,
    path: &std::path::Path,
    direct: bool,
    force: bool,
    magic: &[u8; 8],
) -> Result<std::sync::Arc<dyn crate::io::Storage>, String> {
    let open = crate::io::OpenOptions {
        create: true,
        direct,
        write_through: false,
    };
    let storage = backend
        .open(path, open)
        .map_err(|e| format!("cannot open the backup stream: {e}"))?;
    let len = storage.len().unwrap_or(0);
    if len > 0 && !force {
        let mut head =
            crate::io::align::AlignedBuf::new(BLOCK_HEADER).map_err(|e| e.to_string())?;
        let got = storage.read_at(&mut head, 0).unwrap_or(0);
        if got < magic.len() || &head[..magic.len()] != magic {
            return Err(format!(
                "{}: not a backup stream of sqliosim; no backup written (move it away, name another BackupFile in [BackupUser], or pass --force)",
                path.display()
            ));
        }
    }
    Ok(storage)
}

#[cfg(test)]
mod format_tests;
#[cfg(test)]
mod tests {
    use super::*;

    fn head(pages: usize) -> BlockHead {
        BlockHead {
            flags: 0,
            run_id: 7,
            backup_no: 2,
            block_no: 3,
            offset: 4 * BLOCK_HEADER as u64,
            pages: (0..pages as u64)
                .map(|p| Carried {
                    file: 1,
                    page: 10 + p,
                    generation: p,
                })
                .collect(),
            total_pages: 0,
            crc: 0,
        }
    }

    #[test]
    fn a_sealed_header_reads_back_and_its_crc_holds() {
        let mut h = head(3);
        let mut block = vec![0x5au8; h.len()];
        h.crc = seal(&h, &mut block);
        assert_eq!(read_head(&block), Ok(h));
        assert_eq!(
            read_head(&block[..BLOCK_HEADER - 1]),
            Err(HeadError::Short(BLOCK_HEADER - 1))
        );
        assert_eq!(crc_of(&block).to_le_bytes(), block[OFF_CRC..OFF_CRC + 4]);
    }

    #[test]
    fn one_flipped_bit_of_a_page_breaks_the_crc() {
        let h = head(2);
        let mut block = vec![0u8; h.len()];
        let crc = seal(&h, &mut block);
        block[BLOCK_HEADER + PAGE_SIZE + 100] ^= 4;
        assert_ne!(crc_of(&block), crc);
    }

    #[test]
    #[expect(clippy::cast_possible_truncation, reason = "MAX_BLOCK_PAGES is 816")]
    fn a_header_that_is_not_ours_is_refused() {
        assert!(matches!(
            read_head(&[0u8; BLOCK_HEADER]),
            Err(HeadError::Magic(_))
        ));
        let mut block = vec![0u8; BLOCK_HEADER];
        seal(&head(0), &mut block);
        block[48..52].copy_from_slice(&(MAX_BLOCK_PAGES as u32 + 1).to_le_bytes());
        assert_eq!(
            read_head(&block),
            Err(HeadError::Pages(MAX_BLOCK_PAGES as u32 + 1))
        );
    }
}
