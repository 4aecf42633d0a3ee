//! The one codec every on-disk format of ours is written and read with: a little-endian
//! [`Writer`], a [`Reader`] that says `None` on short input instead of panicking, the CRC32
//! every format checksums with ([`crc32`]), and the versioning rule they share: each format
//! names its versions in an enum made by `versions!`, and a file of
//! a version this build does not read is refused with [`UnknownVersion`] (or, once its path is
//! known, [`ForeignFile`]), never taken for damage.
//!
//! The formats themselves stay beside their owners (pages in `page`, log blocks, the journal
//! and the backup streams in `sim::engine`, the witness's record in `app::witness`, the
//! witness's messages in `witness::proto`, which reads them with this module's reader): this
//! module knows no layout, only how bytes are put and taken. ARCHITECTURE.md says how to add
//! a format or a journal record kind.

mod read;
mod version;
mod write;

pub use read::Reader;
pub(crate) use version::versions;
pub use version::{ForeignFile, UnknownVersion, Versioned};
pub use write::Writer;

/// The CRC32 (IEEE) of `bytes`: the checksum of every format of ours.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The CRC32 of `parts` one after the other, as if they were one slice.
pub fn crc32_of(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

#[cfg(test)]
mod tests;
