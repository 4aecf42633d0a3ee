//! Self-describing 4 KiB sectors for `--verify`: each sector of a written block carries a
//! magic, its own file offset, the file's seed, a write sequence number and a checksum of the
//! whole sector, so a read can be checked without remembering what was written.
//!
//! Layout of each 4096-byte sector (little endian):
//! `0..8` magic `SQLBENC2` · `8..16` offset · `16..24` seed · `24..32` sequence ·
//! `32..36` CRC32 of bytes `0..32` XOR CRC32 of bytes `36..4096` · `36..4096` payload.
//!
//! The checksum is two CRCs so that a writer re-sending the same payload (a bench write
//! buffer is filled once) hashes only the 32 stamp bytes per sector: [`PayloadCrcs`] keeps
//! the payload CRCs of a buffer until something else is read into it. (Version 1 files used
//! one CRC over both parts and the magic `SQLBENCH`.)

use crate::codec::Reader;
use thiserror::Error;

/// Stamp granularity; every block size is a multiple of it.
pub const SECTOR: usize = 4096;
const MAGIC: &[u8; 8] = b"SQLBENC2";
const HEAD: usize = 32;
const PAYLOAD: usize = 36;

/// Why a sector read back is not what a bench write would have left there.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum Mismatch {
    /// No stamp at all (never written by sqliosim, zeros, or foreign data).
    #[error("sector at offset {offset} carries no stamp")]
    NotStamped {
        /// File offset of the sector.
        offset: u64,
    },
    /// A stamp for another place: a misdirected write or read.
    #[error("sector at offset {offset} holds the sector of offset {found}")]
    WrongOffset {
        /// Where it was read.
        offset: u64,
        /// What its stamp says.
        found: u64,
    },
    /// A stamp from another file or an older file generation.
    #[error("sector at offset {offset} has seed {found:#x}, expected {expected:#x}")]
    WrongSeed {
        /// File offset of the sector.
        offset: u64,
        /// Seed in the stamp.
        found: u64,
        /// The file's seed.
        expected: u64,
    },
    /// The stamp is right but the bytes changed.
    #[error("sector at offset {offset}: checksum {got:#010x}, stamp says {expected:#010x}")]
    Checksum {
        /// File offset of the sector.
        offset: u64,
        /// CRC computed over what was read.
        got: u32,
        /// CRC stored in the stamp.
        expected: u32,
    },
}

fn crc_of(sector: &[u8], payload_crc: u32) -> u32 {
    crc32fast::hash(&sector[..HEAD]) ^ payload_crc
}

/// The payload CRCs of one write buffer's sectors, valid while its payload bytes stay as
/// they were when computed (stamping touches only bytes `0..36` of each sector).
#[derive(Debug, Default, Clone)]
pub struct PayloadCrcs {
    crcs: Vec<u32>,
    valid: bool,
}

impl PayloadCrcs {
    /// Forgets the cached CRCs: call before anything else lands in the buffer (a read).
    pub fn invalidate(&mut self) {
        self.valid = false;
    }
}

/// Stamps every sector of `block`, which will be written at file offset `offset`.
pub fn stamp(block: &mut [u8], offset: u64, seed: u64, seq: u64) {
    stamp_cached(block, offset, seed, seq, &mut PayloadCrcs::default());
}

/// Like [`stamp`], reusing the payload CRCs in `cache` when they are valid (and filling it
/// when not): the caller must [`PayloadCrcs::invalidate`] it whenever the payload changes.
pub fn stamp_cached(block: &mut [u8], offset: u64, seed: u64, seq: u64, cache: &mut PayloadCrcs) {
    let sectors = block.len() / SECTOR;
    if !cache.valid || cache.crcs.len() != sectors {
        cache.crcs.clear();
        cache.crcs.extend(
            block
                .chunks_exact(SECTOR)
                .map(|s| crc32fast::hash(&s[PAYLOAD..])),
        );
        cache.valid = true;
    }
    for (i, sector) in block.chunks_exact_mut(SECTOR).enumerate() {
        sector[..8].copy_from_slice(MAGIC);
        sector[8..16].copy_from_slice(&(offset + (i * SECTOR) as u64).to_le_bytes());
        sector[16..24].copy_from_slice(&seed.to_le_bytes());
        sector[24..32].copy_from_slice(&seq.to_le_bytes());
        let crc = crc_of(sector, cache.crcs[i]);
        sector[HEAD..PAYLOAD].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Checks every sector of `block`, read at file offset `offset`, against the file's `seed`.
pub fn check(block: &[u8], offset: u64, seed: u64) -> Result<(), Mismatch> {
    for (i, sector) in block.chunks_exact(SECTOR).enumerate() {
        let at = offset + (i * SECTOR) as u64;
        if &sector[..8] != MAGIC {
            return Err(Mismatch::NotStamped { offset: at });
        }
        // A whole sector (chunks_exact): every field is there.
        let field = |off| Reader::at(sector, off);
        let found = field(8).u64().expect("a sector holds its offset");
        if found != at {
            return Err(Mismatch::WrongOffset { offset: at, found });
        }
        let s = field(16).u64().expect("a sector holds its seed");
        if s != seed {
            return Err(Mismatch::WrongSeed {
                offset: at,
                found: s,
                expected: seed,
            });
        }
        let expected = field(HEAD).u32().expect("a sector holds its checksum");
        let got = crc_of(sector, crc32fast::hash(&sector[PAYLOAD..]));
        if got != expected {
            return Err(Mismatch::Checksum {
                offset: at,
                got,
                expected,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> Vec<u8> {
        (0..8192u32).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn stamped_blocks_check_and_each_fault_is_named() {
        let mut b = block();
        stamp(&mut b, 65536, 42, 1);
        assert_eq!(check(&b, 65536, 42), Ok(()));
        assert_eq!(
            check(&b, 73728, 42),
            Err(Mismatch::WrongOffset {
                offset: 73728,
                found: 65536
            })
        );
        assert!(matches!(
            check(&b, 65536, 43),
            Err(Mismatch::WrongSeed { .. })
        ));
        let mut flipped = b.clone();
        flipped[4096 + 100] ^= 1;
        assert!(matches!(
            check(&flipped, 65536, 42),
            Err(Mismatch::Checksum { offset: 69632, .. })
        ));
        assert_eq!(
            check(&vec![0; 4096], 0, 42),
            Err(Mismatch::NotStamped { offset: 0 })
        );
        let mut header = b.clone();
        header[24] ^= 0x80; // the sequence number is covered by the checksum too
        assert!(matches!(
            check(&header, 65536, 42),
            Err(Mismatch::Checksum { offset: 65536, .. })
        ));
    }

    #[test]
    fn cached_payload_crcs_stamp_like_fresh_ones_until_the_payload_changes() {
        let mut cache = PayloadCrcs::default();
        let (mut cached, mut fresh) = (block(), block());
        for (seq, off) in [(1, 8192), (2, 1 << 20), (3, 40960)] {
            stamp_cached(&mut cached, off, 9, seq, &mut cache);
            stamp(&mut fresh, off, 9, seq);
            assert_eq!(cached, fresh);
            assert_eq!(check(&cached, off, 9), Ok(()));
        }
        // A read lands in the buffer: without invalidation the stamp would be wrong.
        cached[5000] ^= 0xff;
        let mut stale = cache.clone();
        stamp_cached(&mut cached, 8192, 9, 4, &mut stale);
        assert!(matches!(
            check(&cached, 8192, 9),
            Err(Mismatch::Checksum { offset: 12288, .. })
        ));
        cache.invalidate();
        stamp_cached(&mut cached, 8192, 9, 5, &mut cache);
        assert_eq!(check(&cached, 8192, 9), Ok(()));
    }

    #[test]
    fn version_1_stamps_are_not_taken_for_ours() {
        let mut b = block();
        stamp(&mut b, 0, 42, 1);
        b[..8].copy_from_slice(b"SQLBENCH");
        assert_eq!(check(&b, 0, 42), Err(Mismatch::NotStamped { offset: 0 }));
    }
}
