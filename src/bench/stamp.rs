//! Self-describing 4 KiB sectors for `--verify`: each sector of a written block carries a
//! magic, its own file offset, the file's seed, a write sequence number and a CRC32 of the
//! whole sector, so a read can be checked without remembering what was written.
//!
//! Layout of each 4096-byte sector (little endian):
//! `0..8` magic `SQLBENCH` · `8..16` offset · `16..24` seed · `24..32` sequence ·
//! `32..36` CRC32 of bytes `0..32` and `36..4096` · `36..4096` payload.

use thiserror::Error;

/// Stamp granularity; every block size is a multiple of it.
pub const SECTOR: usize = 4096;
const MAGIC: &[u8; 8] = b"SQLBENCH";

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

fn crc_of(sector: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&sector[..32]);
    h.update(&sector[36..]);
    h.finalize()
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Stamps every sector of `block`, which will be written at file offset `offset`.
pub fn stamp(block: &mut [u8], offset: u64, seed: u64, seq: u64) {
    for (i, sector) in block.chunks_exact_mut(SECTOR).enumerate() {
        sector[..8].copy_from_slice(MAGIC);
        sector[8..16].copy_from_slice(&(offset + (i * SECTOR) as u64).to_le_bytes());
        sector[16..24].copy_from_slice(&seed.to_le_bytes());
        sector[24..32].copy_from_slice(&seq.to_le_bytes());
        let crc = crc_of(sector);
        sector[32..36].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Checks every sector of `block`, read at file offset `offset`, against the file's `seed`.
pub fn check(block: &[u8], offset: u64, seed: u64) -> Result<(), Mismatch> {
    for (i, sector) in block.chunks_exact(SECTOR).enumerate() {
        let at = offset + (i * SECTOR) as u64;
        if &sector[..8] != MAGIC {
            return Err(Mismatch::NotStamped { offset: at });
        }
        let found = u64_at(sector, 8);
        if found != at {
            return Err(Mismatch::WrongOffset { offset: at, found });
        }
        let s = u64_at(sector, 16);
        if s != seed {
            return Err(Mismatch::WrongSeed {
                offset: at,
                found: s,
                expected: seed,
            });
        }
        let expected = u32::from_le_bytes([sector[32], sector[33], sector[34], sector[35]]);
        let got = crc_of(sector);
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
    }
}
