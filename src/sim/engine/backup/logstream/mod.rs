//! The log backup stream (`.trn`, issue #25 §1): what a log backup writes, its verify-only
//! pass and `sqliosim verify` read back.
//!
//! Like the full backup's stream, blocks written back to back in large sequential writes, each
//! saying what it is: a 4 KB header — magic `SQLIOTRN`, version, flags, run id, log backup
//! number, block number and byte offset, the log file's id, the LSN range carried and the LSN
//! of the block before it, a CRC32 of the whole block — then the log blocks themselves, whole
//! and back to back as the log reader read them (each a multiple of the log's sector size),
//! padded with zeros to 4 KB. Every log block is one of ours, so its own header, checksum and
//! regenerable payload say whether it is intact; its `prev_lsn` says whether the chain goes
//! on. The last block carries no log and has the END flag, the whole backup's LSN range and
//! its count of log blocks: a stream without it is a log backup that did not finish, not a
//! damaged one. docs/backup.md shows the layout.

#![warn(clippy::cast_possible_truncation)]

use crate::codec::{Reader, UnknownVersion, Versioned, Writer};

mod scan;
#[cfg(test)]
mod tests;
mod writer;

pub use scan::{scan, TrnScan};
pub use writer::{TrnWriter, TrnWritten};

/// Bytes of a block header, and the unit every block is padded to.
pub const HEADER: usize = 4096;
/// The magic of a log backup block.
pub const MAGIC: &[u8; 8] = b"SQLIOTRN";
crate::codec::versions! {
    /// The log backup stream's versions this build reads, stated in every block header.
    pub enum TrnVersion: "log backup stream", writes V1 {
        /// The layout of docs/backup.md.
        V1 = 1,
    }
}
/// Flag of the last block of a finished log backup.
pub const FLAG_END: u32 = 1;
/// Offset of the CRC in the header: the full backup's block keeps it at the same place.
use super::OFF_CRC;

/// What a log backup block header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrnHead {
    /// `FLAG_END` on the last block.
    pub flags: u32,
    /// Run id of the file set the log came from.
    pub run_id: u64,
    /// Which log backup of the run (1-based).
    pub backup_no: u64,
    /// Position of the block in the stream.
    pub block_no: u64,
    /// Byte offset of the block in the stream.
    pub offset: u64,
    /// File id of the log file the block's log blocks are from.
    pub file_id: u32,
    /// Bytes of log carried (the log blocks' lengths summed).
    pub payload: u64,
    /// LSN of the first log block carried (on the END block: of the whole backup).
    pub first_lsn: u64,
    /// LSN right after the last log block carried (on the END block: of the whole backup).
    pub end_lsn: u64,
    /// LSN of the log block before the first carried (`NO_PREV`: not known).
    pub prev_lsn: u64,
    /// On the END block: log blocks carried by the whole backup.
    pub total_blocks: u64,
    /// CRC32 of the block with this field as zero.
    pub crc: u32,
}

impl TrnHead {
    /// Bytes of the whole block: header and payload padded to [`HEADER`].
    pub fn len(&self) -> usize {
        HEADER
            + usize::try_from(self.payload)
                .unwrap_or(usize::MAX)
                .next_multiple_of(HEADER)
    }

    /// True for a block that carries no log (the END block).
    pub fn is_empty(&self) -> bool {
        self.payload == 0
    }
}

/// Writes `head` into `block[..HEADER]` and the CRC of `block[..head.len()]`; returns it.
pub fn seal(head: &TrnHead, block: &mut [u8]) -> u32 {
    let mut w = Writer::with_capacity(96);
    w.put_raw(MAGIC)
        .put_u32(TrnVersion::CURRENT.number())
        .put_u32(head.flags)
        .put_u64(head.run_id)
        .put_u64(head.backup_no)
        .put_u64(head.block_no)
        .put_u64(head.offset)
        .put_u32(head.file_id)
        .put_u32(0) // the CRC, below
        .put_u64(head.payload)
        .put_u64(head.first_lsn)
        .put_u64(head.end_lsn)
        .put_u64(head.prev_lsn)
        .put_u64(head.total_blocks);
    let h = &mut block[..HEADER];
    h.fill(0);
    h[..w.len()].copy_from_slice(w.as_slice());
    let crc = crc_of(&block[..head.len()]);
    block[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
    crc
}

/// Why bytes are not a log backup block header of this build.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrnHeadError {
    /// Not a header of ours, or cut short.
    #[error("no log backup block header (magic {0:02x?})")]
    Magic(Vec<u8>),
    /// A version this build does not read.
    #[error(transparent)]
    Version(#[from] UnknownVersion),
}

/// Reads a header; `Err` says why it is not one of ours.
pub fn read_head(h: &[u8]) -> Result<TrnHead, TrnHeadError> {
    let not_ours = || TrnHeadError::Magic(h[..8.min(h.len())].to_vec());
    if h.len() < HEADER {
        return Err(not_ours());
    }
    let mut r = Reader::new(&h[..HEADER]);
    if r.array::<8>().as_ref() != Some(MAGIC) {
        return Err(not_ours());
    }
    TrnVersion::check(r.u32().ok_or_else(not_ours)?)?;
    let head = (|| {
        Some(TrnHead {
            flags: r.u32()?,
            run_id: r.u64()?,
            backup_no: r.u64()?,
            block_no: r.u64()?,
            offset: r.u64()?,
            file_id: r.u32()?,
            crc: r.u32()?,
            payload: r.u64()?,
            first_lsn: r.u64()?,
            end_lsn: r.u64()?,
            prev_lsn: r.u64()?,
            total_blocks: r.u64()?,
        })
    })();
    head.ok_or_else(not_ours)
}

/// The CRC a whole block should carry (its CRC field taken as zero): at the same offset as
/// in the full backup's blocks, so it is the same function.
pub use super::crc_of;
