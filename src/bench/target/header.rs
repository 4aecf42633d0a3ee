//! The `SQLIOSIM-BENCH` header in the first 4 KiB of a bench file or device: written when it
//! is filled, read to tell a file we created (and its seed, size and state) from anyone else's.

use std::fs::File;
use std::os::unix::fs::FileExt;

use super::DATA_OFFSET;
use crate::bench::stamp;

/// First line of the header.
pub const MAGIC: &str = "SQLIOSIM-BENCH v2";
/// First line of the header of files from before the stamp checksum changed: still ours, but
/// their stamps no longer check, so they are filled again as if new.
const MAGIC_V1: &str = "SQLIOSIM-BENCH v1";

/// The header of a bench file: the magic, the seed, the size, and whether its stamps are intact.
pub(super) fn header_text(seed: u64, size: u64, intact: bool) -> Vec<u8> {
    let stamps = if intact { "intact" } else { "broken" };
    let text = format!(
        "{MAGIC}\nseed={seed}\nsize={size}\ndata_offset={DATA_OFFSET}\nstamps={stamps}\n\
         This file was created by `sqliosim bench`; its blocks carry 4 KiB stamps.\n"
    );
    let mut b = text.into_bytes();
    b.resize(stamp::SECTOR, 0);
    b
}

/// What the first bytes of an existing file say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// A current bench file (or device) with this seed and prepared size.
    Ours {
        /// Seed of its stamps.
        seed: u64,
        /// The `size=` line: how far it was prepared (0 when missing).
        size: u64,
        /// False once a run wrote data without stamps (`stamps=broken`): `--verify` would
        /// report those blocks, so it is refused until the file is filled again.
        intact: bool,
    },
    /// A bench file from before the stamp format changed (`SQLIOSIM-BENCH v1`).
    OursOld,
    /// Anything else.
    Foreign,
}

/// Reads the header of `file`.
pub fn read_header(file: &File) -> Header {
    let mut b = vec![0u8; 512];
    let Ok(n) = file.read_at(&mut b, 0) else {
        return Header::Foreign;
    };
    let end = b[..n].iter().position(|&c| c == 0).unwrap_or(n);
    let text = String::from_utf8_lossy(&b[..end]);
    let mut lines = text.lines();
    let field = |text: &str, key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|s| s.parse().ok())
    };
    match lines.next() {
        Some(MAGIC) => match field(&text, "seed=") {
            Some(seed) => Header::Ours {
                seed,
                size: field(&text, "size=").unwrap_or(0),
                intact: !text.lines().any(|l| l == "stamps=broken"),
            },
            None => Header::Foreign,
        },
        Some(MAGIC_V1) => Header::OursOld,
        _ => Header::Foreign,
    }
}
