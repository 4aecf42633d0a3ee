//! The file header page (page 0 of every data and log file): it says the file is ours.

use super::layout::{
    page_checksum, put, stored_checksum, PageVersion, FORMAT_VERSION, KIND_FILE_HEADER,
    OFF_CHECKSUM, PAGE_MAGIC, PAGE_SIZE,
};
use crate::codec::{Reader, UnknownVersion, Versioned};

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FileRole {
    /// A data file (.mdx): stamped data pages.
    Data,
    /// A log file (.ldx): log blocks.
    Log,
}

/// Contents of page 0 of a file created by this tool.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileHeader {
    /// Random id of the file set.
    pub run_id: u64,
    /// Id of this file within the set.
    pub file_id: u32,
    /// Page size in bytes (8192).
    pub page_size: u32,
    /// Data or log.
    pub role: FileRole,
    /// Version of the tool that created the file (at most 32 bytes are kept).
    pub tool_version: String,
    /// Creation time, microseconds since the Unix epoch.
    pub created_us: u64,
    /// The device's direct-I/O sector (512 or 4096) when the file was created; a log file's
    /// blocks are multiples of it. Files written before the field existed hold 0: 512.
    pub sector_size: u32,
}

/// The sector size a header without the field (an older file) means.
pub const LEGACY_SECTOR_SIZE: u32 = 512;

/// Why page 0 is not a valid file header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Shorter than a page.
    #[error("file is shorter than one page ({0} bytes)")]
    TooShort(usize),
    /// Not created by this tool.
    #[error("no sqliosim file header (magic {0:02x?})")]
    BadMagic([u8; 8]),
    /// Page 0 could not be read at all (the device's read error, in words).
    #[error("page 0 cannot be read: {what}")]
    Unreadable {
        /// errno of the failure (0 when the OS gave none).
        errno: i32,
        /// The error, in words.
        what: String,
    },
    /// Created by this tool, but the header page is damaged.
    #[error("file header checksum mismatch: stored 0x{stored:08X}, calculated 0x{calculated:08X}")]
    ChecksumMismatch {
        /// Stored checksum.
        stored: u32,
        /// Calculated checksum.
        calculated: u32,
    },
    /// A whole, checksummed header of a page format version this build does not read: a file
    /// of another sqliosim, refused by name, never judged.
    #[error(transparent)]
    Version(#[from] UnknownVersion),
}

const OFF_VERSION: usize = 8;
const OFF_KIND: usize = 10;
const OFF_FILE_ID: usize = 12;
const OFF_SECTOR: usize = 16;
const OFF_RUN_ID: usize = 32;
const OFF_PAGE_SIZE: usize = 40;
const OFF_ROLE: usize = 44;
const OFF_CREATED: usize = 56;
/// The generation ceiling of a data file: bytes 24..32, where a data page keeps its generation.
const OFF_CEILING: usize = 24;
const OFF_TOOL: usize = 64;
const TOOL_LEN: usize = 32;

impl FileHeader {
    /// Encodes the header into a full page.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        put(&mut p, 0, &PAGE_MAGIC);
        put(&mut p, OFF_VERSION, &FORMAT_VERSION.to_le_bytes());
        put(&mut p, OFF_KIND, &KIND_FILE_HEADER.to_le_bytes());
        put(&mut p, OFF_FILE_ID, &self.file_id.to_le_bytes());
        put(&mut p, OFF_RUN_ID, &self.run_id.to_le_bytes());
        put(&mut p, OFF_PAGE_SIZE, &self.page_size.to_le_bytes());
        put(&mut p, OFF_SECTOR, &self.sector_size.to_le_bytes());
        p[OFF_ROLE] = match self.role {
            FileRole::Data => 1,
            FileRole::Log => 2,
        };
        put(&mut p, OFF_CREATED, &self.created_us.to_le_bytes());
        let tool = self.tool_version.as_bytes();
        let n = tool.len().min(TOOL_LEN);
        put(&mut p, OFF_TOOL, &tool[..n]);
        let crc = page_checksum(&p);
        put(&mut p, OFF_CHECKSUM, &crc.to_le_bytes());
        p
    }

    /// Decodes page 0; says why when it is not a header of ours.
    pub fn decode(page: &[u8]) -> Result<FileHeader, HeaderError> {
        let short = || HeaderError::TooShort(page.len());
        if page.len() < PAGE_SIZE {
            return Err(short());
        }
        let at = |off| Reader::at(page, off);
        let magic = at(0).array::<8>().ok_or_else(short)?;
        if magic != PAGE_MAGIC || at(OFF_KIND).u16() != Some(KIND_FILE_HEADER) {
            return Err(HeaderError::BadMagic(magic));
        }
        let (stored, calculated) = (stored_checksum(page), page_checksum(page));
        if stored != calculated {
            return Err(HeaderError::ChecksumMismatch { stored, calculated });
        }
        PageVersion::check(u32::from(at(OFF_VERSION).u16().ok_or_else(short)?))?;
        let header = || {
            let tool = at(OFF_TOOL).take(TOOL_LEN)?;
            let end = tool.iter().position(|&b| b == 0).unwrap_or(TOOL_LEN);
            Some(FileHeader {
                run_id: at(OFF_RUN_ID).u64()?,
                file_id: at(OFF_FILE_ID).u32()?,
                page_size: at(OFF_PAGE_SIZE).u32()?,
                role: if at(OFF_ROLE).u8()? == 2 {
                    FileRole::Log
                } else {
                    FileRole::Data
                },
                tool_version: String::from_utf8_lossy(&tool[..end]).into_owned(),
                created_us: at(OFF_CREATED).u64()?,
                sector_size: match at(OFF_SECTOR).u32()? {
                    0 => LEGACY_SECTOR_SIZE,
                    n => n,
                },
            })
        };
        // The length was checked above: every field is there.
        header().ok_or_else(short)
    }
}

/// The generation ceiling recorded in a file header page (0: none recorded). No page of the
/// file was ever written with a generation above it; see docs/page-format.md §2.1.
pub fn generation_ceiling(page: &[u8]) -> u64 {
    if page.len() < PAGE_SIZE {
        return 0;
    }
    Reader::at(page, OFF_CEILING).u64().unwrap_or(0)
}

/// Records `ceiling` in a file header page and recomputes its checksum.
pub fn set_generation_ceiling(page: &mut [u8], ceiling: u64) {
    put(page, OFF_CEILING, &ceiling.to_le_bytes());
    let crc = page_checksum(page);
    put(page, OFF_CHECKSUM, &crc.to_le_bytes());
}

#[cfg(test)]
#[expect(clippy::cast_possible_truncation, reason = "PAGE_SIZE is 8192")]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_survives_decode_and_keeps_the_header_valid() {
        let h = FileHeader {
            run_id: 9,
            file_id: 1,
            page_size: PAGE_SIZE as u32,
            role: FileRole::Data,
            tool_version: "t".into(),
            created_us: 5,
            sector_size: 512,
        };
        let mut p = h.encode();
        assert_eq!(generation_ceiling(&p), 0, "a new header records none");
        set_generation_ceiling(&mut p, 0x0012_3456_789A);
        assert_eq!(generation_ceiling(&p), 0x0012_3456_789A);
        assert_eq!(FileHeader::decode(&p), Ok(h));
        p[OFF_CEILING] ^= 1;
        assert!(matches!(
            FileHeader::decode(&p),
            Err(HeaderError::ChecksumMismatch { .. })
        ));
    }

    fn header(sector_size: u32) -> FileHeader {
        FileHeader {
            run_id: 5,
            file_id: 1,
            page_size: PAGE_SIZE as u32,
            role: FileRole::Log,
            tool_version: "t".into(),
            created_us: 9,
            sector_size,
        }
    }

    #[test]
    fn a_header_of_another_version_is_refused_after_its_checksum() {
        let mut p = header(512).encode();
        put(&mut p, OFF_VERSION, &7u16.to_le_bytes());
        // Its bytes changed without its checksum: damage.
        assert!(matches!(
            FileHeader::decode(&p),
            Err(HeaderError::ChecksumMismatch { .. })
        ));
        let crc = page_checksum(&p);
        put(&mut p, OFF_CHECKSUM, &crc.to_le_bytes());
        let e = FileHeader::decode(&p).expect_err("version 7");
        assert!(matches!(&e, HeaderError::Version(v) if v.found == 7), "{e}");
        assert_eq!(u32::from(FORMAT_VERSION), PageVersion::CURRENT.number());
        assert!(e
            .to_string()
            .contains("version 7; this build of sqliosim reads version 1"));
    }

    proptest::proptest! {
        #[test]
        fn a_header_reads_back_as_written(run_id: u64, file_id: u32, log: bool, tool in "[a-z0-9.]{0,32}", created_us: u64, sector in 1u32..) {
            let h = FileHeader {
                run_id,
                file_id,
                page_size: PAGE_SIZE as u32,
                role: if log { FileRole::Log } else { FileRole::Data },
                tool_version: tool,
                created_us,
                sector_size: sector,
            };
            proptest::prop_assert_eq!(FileHeader::decode(&h.encode()), Ok(h));
        }
    }

    #[test]
    fn sector_size_round_trips_and_old_files_mean_512() {
        let h = header(4096);
        assert_eq!(FileHeader::decode(&h.encode()), Ok(h));
        // A header written before the field existed holds zero there.
        let old = header(0).encode();
        assert_eq!(Reader::at(&old, OFF_SECTOR).u32(), Some(0));
        assert_eq!(FileHeader::decode(&old).map(|h| h.sector_size), Ok(512));
    }
}
