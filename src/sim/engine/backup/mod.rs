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
/// The stream format's version.
pub const VERSION: u32 = 1;
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
    #[error("block format version {0}, this build reads {VERSION}")]
    Version(u32),
    /// More pages than a header can name.
    #[error("the header names {0} pages, more than a block carries ({MAX_BLOCK_PAGES})")]
    Pages(u32),
    /// Fewer bytes than a block header.
    #[error("{0} bytes, less than a block header ({BLOCK_HEADER})")]
    Short(usize),
}

/// Writes `head` into `block[..BLOCK_HEADER]` and its CRC over the header and the pages in
/// `block[BLOCK_HEADER..head.len()]`; returns the CRC.
#[expect(
    clippy::cast_possible_truncation,
    reason = "a block carries at most MAX_BLOCK_PAGES pages, far below u32::MAX"
)]
pub fn seal(head: &BlockHead, block: &mut [u8]) -> u32 {
    let h = &mut block[..BLOCK_HEADER];
    h.fill(0);
    h[..8].copy_from_slice(MAGIC);
    put32(h, 8, VERSION);
    put32(h, 12, head.flags);
    put64(h, 16, head.run_id);
    put64(h, 24, head.backup_no);
    put64(h, 32, head.block_no);
    put64(h, 40, head.offset);
    put32(h, 48, head.pages.len() as u32);
    put64(h, 56, head.total_pages);
    for (i, c) in head.pages.iter().enumerate() {
        let at = FIXED + i * ENTRY;
        put32(h, at, c.file);
        put64(h, at + 4, c.page);
        put64(h, at + 12, c.generation);
    }
    let crc = crc32fast::hash(&block[..head.len()]);
    put32(block, OFF_CRC, crc);
    crc
}

/// Reads a block header (without checking its CRC: see [`crc_of`]).
pub fn read_head(h: &[u8]) -> Result<BlockHead, HeadError> {
    if h.len() < BLOCK_HEADER {
        return Err(HeadError::Short(h.len()));
    }
    let mut magic = [0u8; 8];
    magic.copy_from_slice(&h[..8]);
    if &magic != MAGIC {
        return Err(HeadError::Magic(magic));
    }
    if get32(h, 8) != VERSION {
        return Err(HeadError::Version(get32(h, 8)));
    }
    let n = get32(h, 48);
    if n as usize > MAX_BLOCK_PAGES {
        return Err(HeadError::Pages(n));
    }
    let pages = (0..n as usize)
        .map(|i| {
            let at = FIXED + i * ENTRY;
            Carried {
                file: get32(h, at),
                page: get64(h, at + 4),
                generation: get64(h, at + 12),
            }
        })
        .collect();
    Ok(BlockHead {
        flags: get32(h, 12),
        run_id: get64(h, 16),
        backup_no: get64(h, 24),
        block_no: get64(h, 32),
        offset: get64(h, 40),
        pages,
        total_pages: get64(h, 56),
        crc: get32(h, OFF_CRC),
    })
}

/// The CRC a whole block (header and pages) should carry.
pub fn crc_of(block: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&block[..OFF_CRC]);
    h.update(&[0u8; 4]);
    h.update(&block[OFF_CRC + 4..]);
    h.finalize()
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get32(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn get64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
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
        assert_eq!(crc_of(&block), get32(&block, OFF_CRC));
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
        put32(&mut block, 48, MAX_BLOCK_PAGES as u32 + 1);
        assert_eq!(
            read_head(&block),
            Err(HeadError::Pages(MAX_BLOCK_PAGES as u32 + 1))
        );
    }
}
