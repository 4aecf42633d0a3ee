//! The log block format of the .ldx file: pure encode / decode / verify, no I/O.
//!
//! The log stream is addressed by LSN, the byte position in an endless stream. The log area of
//! the file (everything after the header page) is reused circularly, so a block's place in the
//! file is `LOG_AREA_START + lsn % area_len`, and its lap (`wrap`) is `lsn / area_len`: a block
//! left from an earlier lap has another LSN and is never taken for a new one.

// A narrowing cast in an on-disk codec either is checked (`try_from`) or says why its range
// holds (issue #22 §12).
#![warn(clippy::cast_possible_truncation)]

use crate::codec::{Reader, UnknownVersion, Versioned};
use crate::page::fill::splitmix64;
use crate::page::PAGE_SIZE;

/// `prev_lsn` of the first block of a log.
pub const NO_PREV: u64 = u64::MAX;

crate::codec::versions! {
    /// The log block format's versions this build reads, stated in every block's header
    /// (bytes 52..54, under the block's checksum; logs written before held 0 there).
    pub enum LogBlockVersion: "log block", writes V1 {
        /// The layout of docs/page-format.md §3.
        V1 = 1,
    }
}

/// Magic at offset 0 of every log block.
pub const LOG_MAGIC: [u8; 8] = *b"SQLSIMLG";
/// The log area starts after the file header page.
pub const LOG_AREA_START: u64 = PAGE_SIZE as u64;
/// Log block sizes are multiples of the log's unit: the sector size of the device the log file
/// was created on (512, or 4096 on a 4 KiB-sector device, as SQL Server writes its log),
/// recorded in the file's header page. This is the smallest unit, and the most a header page
/// leaves room for is a page.
pub const MIN_LOG_UNIT: u32 = 512;
/// The largest log unit: the log area starts one page into the file.
#[expect(clippy::cast_possible_truncation, reason = "PAGE_SIZE is 8192")]
pub const MAX_LOG_UNIT: u32 = PAGE_SIZE as u32;
/// Length of a log block header.
pub const LOG_HEADER_LEN: usize = 64;
/// The largest log block, and so the largest log write: 60 KB, as SQL Server's log blocks.
pub const MAX_LOG_BLOCK: u32 = 60 * 1024;
/// The byte a new log file's area is stamped with (issue #24 §2: SQL Server stamps its log
/// files with a non-zero pattern, 0xC0, not zeros). A block still holding it was never written;
/// so was an all-zero block of a log made before the stamp (or by `StampFiles`-less growth).
pub const LOG_STAMP: u8 = 0xC0;
/// Log records are packed into a block on 8-byte boundaries.
pub const RECORD_ALIGN: u32 = 8;

const OFF_FILE_ID: usize = 8;
const OFF_LEN: usize = 12;
const OFF_LSN: usize = 16;
const OFF_PREV: usize = 24;
const OFF_RUN: usize = 32;
const OFF_WRAP: usize = 40;
const OFF_CRC: usize = 44;
const OFF_RECORDS: usize = 48;
/// The block format's version (`u16`); bytes 54..56 are spare.
const OFF_VERSION: usize = 52;
const OFF_TIME: usize = 56;

/// What a log block header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogBlock {
    /// Run id of the file set.
    pub run_id: u64,
    /// File id of the log file.
    pub file_id: u32,
    /// Block length in bytes (header included), a multiple of the log's unit.
    pub len: u32,
    /// LSN of the block's first byte.
    pub lsn: u64,
    /// LSN of the block written before it (0 for the first block).
    pub prev_lsn: u64,
    /// Lap of the circular log area.
    pub wrap: u32,
    /// Write time, microseconds since the Unix epoch.
    pub time_us: u64,
    /// Log records packed into the block (0 in a block written before records were packed,
    /// which held one).
    #[serde(default)]
    pub records: u32,
}

/// Why a log block is not the block that was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum LogBlockError {
    /// The bytes are the log's initial stamp ([`LOG_STAMP`]) or all zero: the block never
    /// reached the media.
    #[error("log block never written (the log's initial stamp, or all zero)")]
    NeverWritten,
    /// No log block magic.
    #[error("no log block magic")]
    BadMagic,
    /// The block is damaged.
    #[error("log block checksum mismatch: stored 0x{stored:08X}, calculated 0x{calculated:08X}")]
    Checksum {
        /// Stored checksum.
        stored: u32,
        /// Calculated checksum.
        calculated: u32,
    },
    /// A valid block, but not the one expected here.
    #[error("log block has LSN {found} (lap {found_wrap}); expected LSN {expected}")]
    WrongLsn {
        /// LSN found.
        found: u64,
        /// Lap found.
        found_wrap: u32,
        /// LSN expected.
        expected: u64,
    },
    /// A valid block of another run or file.
    #[error("log block of run {run:016x} file {file}")]
    Foreign {
        /// Run id found.
        run: u64,
        /// File id found.
        file: u32,
    },
    /// The payload does not match what the header says.
    #[error("log block payload damaged at byte {0}")]
    Payload(usize),
    /// A whole, checksummed block of a version this build does not read.
    #[error("{}", unknown_version(*.0))]
    Version(u32),
}

/// The refusal of log block version `found`, in words.
pub fn unknown_version(found: u32) -> UnknownVersion {
    UnknownVersion {
        format: <LogBlockVersion as Versioned>::FORMAT,
        found,
        reads: <LogBlockVersion as Versioned>::READS,
    }
}

fn checksum(b: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&b[..OFF_CRC]);
    h.update(&b[OFF_CRC + 4..]);
    h.finalize()
}

fn payload_word(key: u64, i: usize) -> u64 {
    splitmix64(key ^ (i as u64).wrapping_mul(0xA076_1D64_78BD_642F))
}

fn payload_key(b: &LogBlock) -> u64 {
    splitmix64(b.run_id ^ splitmix64(u64::from(b.file_id) ^ b.lsn))
}

/// Writes block `b` into `buf` (exactly `b.len` bytes): header, regenerable payload, checksum.
pub fn encode(buf: &mut [u8], b: &LogBlock) {
    assert_eq!(
        buf.len(),
        b.len as usize,
        "log block buffer must be the block length"
    );
    let key = payload_key(b);
    for (i, w) in buf[LOG_HEADER_LEN..].chunks_exact_mut(8).enumerate() {
        w.copy_from_slice(&payload_word(key, i).to_le_bytes());
    }
    buf[..LOG_HEADER_LEN].fill(0);
    buf[..8].copy_from_slice(&LOG_MAGIC);
    buf[OFF_FILE_ID..OFF_FILE_ID + 4].copy_from_slice(&b.file_id.to_le_bytes());
    buf[OFF_LEN..OFF_LEN + 4].copy_from_slice(&b.len.to_le_bytes());
    buf[OFF_LSN..OFF_LSN + 8].copy_from_slice(&b.lsn.to_le_bytes());
    buf[OFF_PREV..OFF_PREV + 8].copy_from_slice(&b.prev_lsn.to_le_bytes());
    buf[OFF_RUN..OFF_RUN + 8].copy_from_slice(&b.run_id.to_le_bytes());
    buf[OFF_WRAP..OFF_WRAP + 4].copy_from_slice(&b.wrap.to_le_bytes());
    buf[OFF_RECORDS..OFF_RECORDS + 4].copy_from_slice(&b.records.to_le_bytes());
    let version = u16::try_from(LogBlockVersion::CURRENT.number()).unwrap_or(u16::MAX);
    buf[OFF_VERSION..OFF_VERSION + 2].copy_from_slice(&version.to_le_bytes());
    buf[OFF_TIME..OFF_TIME + 8].copy_from_slice(&b.time_us.to_le_bytes());
    let crc = checksum(buf);
    buf[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
}

/// Decodes the header at the start of `buf` (which must hold at least the header), without
/// checking the checksum (the length is needed first to know how much to read).
pub fn peek(buf: &[u8]) -> Result<LogBlock, LogBlockError> {
    let header = &buf[..LOG_HEADER_LEN.min(buf.len())];
    if header.iter().all(|&x| x == 0) || header.iter().all(|&x| x == LOG_STAMP) {
        return Err(LogBlockError::NeverWritten);
    }
    if buf[..8] != LOG_MAGIC {
        return Err(LogBlockError::BadMagic);
    }
    let at = |off| Reader::at(buf, off);
    let block = || {
        Some(LogBlock {
            file_id: at(OFF_FILE_ID).u32()?,
            len: at(OFF_LEN).u32()?,
            lsn: at(OFF_LSN).u64()?,
            prev_lsn: at(OFF_PREV).u64()?,
            run_id: at(OFF_RUN).u64()?,
            wrap: at(OFF_WRAP).u32()?,
            time_us: at(OFF_TIME).u64()?,
            records: at(OFF_RECORDS).u32()?,
        })
    };
    Ok(block().expect("peek of bytes shorter than a log block header"))
}

/// The checksum stored in a block (which must hold at least its header).
fn stored_crc(buf: &[u8]) -> u32 {
    Reader::at(buf, OFF_CRC)
        .u32()
        .expect("the checksum of bytes shorter than a log block header")
}

/// Where a block is expected and in which log: run, file, LSN and the log's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want {
    /// Run id of the file set.
    pub run_id: u64,
    /// File id of the log file.
    pub file_id: u32,
    /// LSN that must be here.
    pub lsn: u64,
    /// The log's unit (block lengths are multiples of it).
    pub unit: u32,
}

/// Verifies a whole block read from where `want.lsn` should be.
pub fn verify(buf: &[u8], want: &Want) -> Result<LogBlock, LogBlockError> {
    let (run_id, file_id, expected_lsn) = (want.run_id, want.file_id, want.lsn);
    let b = peek(buf)?;
    let len = b.len as usize;
    let unit = want.unit.max(MIN_LOG_UNIT) as usize;
    if len < LOG_HEADER_LEN || len > buf.len() || !len.is_multiple_of(unit) {
        return Err(LogBlockError::Checksum {
            stored: stored_crc(buf),
            calculated: checksum(&buf[..LOG_HEADER_LEN]),
        });
    }
    let (stored, calculated) = (stored_crc(buf), checksum(&buf[..len]));
    if stored != calculated {
        return Err(LogBlockError::Checksum { stored, calculated });
    }
    // Checked under the checksum: a flipped bit is damage, a whole block of another version
    // is said as such.
    let version = Reader::at(buf, OFF_VERSION)
        .u16()
        .expect("a whole block holds its version field");
    LogBlockVersion::check(u32::from(version)).map_err(|v| LogBlockError::Version(v.found))?;
    if b.run_id != run_id || b.file_id != file_id {
        return Err(LogBlockError::Foreign {
            run: b.run_id,
            file: b.file_id,
        });
    }
    if b.lsn != expected_lsn {
        return Err(LogBlockError::WrongLsn {
            found: b.lsn,
            found_wrap: b.wrap,
            expected: expected_lsn,
        });
    }
    let key = payload_key(&b);
    for (i, w) in buf[LOG_HEADER_LEN..len].chunks_exact(8).enumerate() {
        if w != payload_word(key, i).to_le_bytes() {
            return Err(LogBlockError::Payload(LOG_HEADER_LEN + i * 8));
        }
    }
    Ok(b)
}

/// Rounds the bytes used in a block (header and packed records) up to a whole number of
/// `unit`s.
pub fn block_len(used_bytes: u32, unit: u32) -> u32 {
    let unit = unit.max(MIN_LOG_UNIT) as usize;
    let want = (used_bytes as usize).max(LOG_HEADER_LEN + 8);
    // A block is at most MAX_LOG_BLOCK (60 KiB); saturate rather than wrap past 4 GiB.
    u32::try_from(want.div_ceil(unit) * unit).unwrap_or(u32::MAX)
}

/// The room a log record of `bytes` bytes takes in a block: at least one word, on 8-byte
/// boundaries, and never more than a block of `cap` bytes holds beside its header.
pub fn record_room(bytes: u32, cap: u32) -> u32 {
    #[expect(clippy::cast_possible_truncation, reason = "LOG_HEADER_LEN is 64")]
    let most = cap.saturating_sub(LOG_HEADER_LEN as u32) / RECORD_ALIGN * RECORD_ALIGN;
    bytes
        .max(1)
        .div_ceil(RECORD_ALIGN)
        .saturating_mul(RECORD_ALIGN)
        .min(most)
}

#[cfg(test)]
mod tests;
