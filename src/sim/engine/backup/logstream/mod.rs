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

use crate::page::layout::{get_u32, get_u64, put};

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
/// The format's version.
pub const VERSION: u32 = 1;
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
    let h = &mut block[..HEADER];
    h.fill(0);
    h[..8].copy_from_slice(MAGIC);
    put(h, 8, &VERSION.to_le_bytes());
    put(h, 12, &head.flags.to_le_bytes());
    for (at, v) in [
        (16, head.run_id),
        (24, head.backup_no),
        (32, head.block_no),
        (40, head.offset),
        (56, head.payload),
        (64, head.first_lsn),
        (72, head.end_lsn),
        (80, head.prev_lsn),
        (88, head.total_blocks),
    ] {
        put(h, at, &v.to_le_bytes());
    }
    put(h, 48, &head.file_id.to_le_bytes());
    let crc = crc_of(&block[..head.len()]);
    put(block, OFF_CRC, &crc.to_le_bytes());
    crc
}

/// Reads a header; `Err` says why it is not one of ours.
pub fn read_head(h: &[u8]) -> Result<TrnHead, String> {
    if h.len() < HEADER || &h[..8] != MAGIC {
        return Err(format!(
            "no log backup block header (magic {:02x?})",
            &h[..8.min(h.len())]
        ));
    }
    if get_u32(h, 8) != VERSION {
        return Err(format!(
            "log backup format version {}, this build reads {VERSION}",
            get_u32(h, 8)
        ));
    }
    Ok(TrnHead {
        flags: get_u32(h, 12),
        run_id: get_u64(h, 16),
        backup_no: get_u64(h, 24),
        block_no: get_u64(h, 32),
        offset: get_u64(h, 40),
        file_id: get_u32(h, 48),
        crc: get_u32(h, OFF_CRC),
        payload: get_u64(h, 56),
        first_lsn: get_u64(h, 64),
        end_lsn: get_u64(h, 72),
        prev_lsn: get_u64(h, 80),
        total_blocks: get_u64(h, 88),
    })
}

/// The CRC a whole block should carry (its CRC field taken as zero): at the same offset as
/// in the full backup's blocks, so it is the same function.
pub use super::crc_of;
