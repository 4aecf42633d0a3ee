//! Byte layout of a data page: header fields, sector stamps, checksum, and stamping a page.

use super::fill;
use crate::codec::Reader;
// The page size is the whole module's (`page::PAGE_SIZE`); the payload fill needs it too.
pub use super::PAGE_SIZE;

/// Size of the unit a device may tear a write at; every sector carries a stamp.
pub const SECTOR_SIZE: usize = 512;
/// Number of sectors in one page.
pub const SECTORS_PER_PAGE: usize = PAGE_SIZE / SECTOR_SIZE;
/// Magic at offset 0 of every data page.
pub const PAGE_MAGIC: [u8; 8] = *b"SQLSIMPG";
/// Version of the page format described in docs/page-format.md, as every page stores it
/// (the number of [`PageVersion::CURRENT`](crate::codec::Versioned::CURRENT)).
pub const FORMAT_VERSION: u16 = 1;

crate::codec::versions! {
    /// The page format's versions this build reads. A file is refused by its header page's
    /// (page 0, checked after its checksum, so a flipped bit is damage, not a foreign file);
    /// data pages are not refused one by one (their checksum covers the field, and their file
    /// was refused or accepted by its header).
    pub enum PageVersion: "page", writes V1 {
        /// The layout of docs/page-format.md.
        V1 = 1,
    }
}
/// `kind` field of a data page.
pub const KIND_DATA: u16 = 1;
/// `kind` field of a file header page (page 0).
pub const KIND_FILE_HEADER: u16 = 2;
/// Length of the page header; the payload starts here.
pub const HEADER_LEN: usize = 64;
/// Offset of the sector stamp inside each sector (its last 8 bytes).
pub const STAMP_OFFSET: usize = SECTOR_SIZE - 8;

// Header field offsets (all little-endian).
/// Offset of the magic (8 bytes).
pub const OFF_MAGIC: usize = 0;
/// Offset of the format version (u16).
pub const OFF_VERSION: usize = 8;
/// Offset of the page kind (u16).
pub const OFF_KIND: usize = 10;
/// Offset of the file id (u32).
pub const OFF_FILE_ID: usize = 12;
/// Offset of the page id (u64).
pub const OFF_PAGE_ID: usize = 16;
/// Offset of the write generation (u64).
pub const OFF_GENERATION: usize = 24;
/// Offset of the run id (u64).
pub const OFF_RUN_ID: usize = 32;
/// Offset of the log sequence number (u64).
pub const OFF_LSN: usize = 40;
/// Offset of the writer actor kind (u8, then one zero byte).
pub const OFF_WRITER_KIND: usize = 48;
/// Offset of the writer id (u16).
pub const OFF_WRITER_ID: usize = 50;
/// Offset of the CRC32; the checksum covers every byte of the page except these four.
pub const OFF_CHECKSUM: usize = 52;
/// Offset of the write time in µs since the epoch (u64).
pub const OFF_WRITE_TIME: usize = 56;

/// Which simulated actor wrote a page (stored in the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum ActorKind {
    /// File creation and the initial update.
    Init = 0,
    /// OLTP-style random user.
    RandomUser = 1,
    /// DBCC-style audit user.
    AuditUser = 2,
    /// Sequential read-ahead user.
    ReadAheadUser = 3,
    /// SELECT INTO / BULK INSERT-style writer.
    BulkUpdateUser = 4,
    /// Grow/shrink user.
    ShrinkUser = 5,
    /// Checkpoint.
    Checkpoint = 6,
    /// Lazy writer.
    LazyWriter = 7,
    /// Log writer.
    LogWriter = 8,
    /// Capacity-run worker.
    Bench = 9,
    /// Offline verifier or self-test.
    Verifier = 10,
    /// Full backup: sequential checked reads of the data files, a backup stream written.
    BackupUser = 11,
    /// Sort and hash spills to tempdb: runs written, merged, their extents freed and reused.
    SortUser = 12,
    /// Indirect checkpoint's recovery writer: pages dirty for longer than TargetRecoveryTime
    /// written in the background.
    RecoveryWriter = 13,
    /// DBCC CHECKDB against its sparse snapshot (it writes only the snapshot's copies, which
    /// carry the source pages' own stamps).
    DbccUser = 14,
}

impl ActorKind {
    /// All kinds, in tag order.
    pub const ALL: [ActorKind; 15] = [
        ActorKind::Init,
        ActorKind::RandomUser,
        ActorKind::AuditUser,
        ActorKind::ReadAheadUser,
        ActorKind::BulkUpdateUser,
        ActorKind::ShrinkUser,
        ActorKind::Checkpoint,
        ActorKind::LazyWriter,
        ActorKind::LogWriter,
        ActorKind::Bench,
        ActorKind::Verifier,
        ActorKind::BackupUser,
        ActorKind::SortUser,
        ActorKind::RecoveryWriter,
        ActorKind::DbccUser,
    ];

    /// The kind stored as `tag`, if any.
    pub fn from_tag(tag: u8) -> Option<ActorKind> {
        ActorKind::ALL.get(usize::from(tag)).copied()
    }

    /// SQLIOSim-style user name, used in logs.
    pub fn name(self) -> &'static str {
        match self {
            ActorKind::Init => "Initial Update",
            ActorKind::RandomUser => "Random User",
            ActorKind::AuditUser => "Audit User",
            ActorKind::ReadAheadUser => "Read Ahead User",
            ActorKind::BulkUpdateUser => "Bulk Update User",
            ActorKind::ShrinkUser => "Shrink User",
            ActorKind::Checkpoint => "Checkpoint",
            ActorKind::LazyWriter => "Lazy Writer",
            ActorKind::LogWriter => "Log Writer",
            ActorKind::Bench => "Bench",
            ActorKind::Verifier => "Verifier",
            ActorKind::BackupUser => "Backup User",
            ActorKind::SortUser => "Sort User",
            ActorKind::RecoveryWriter => "Recovery Writer",
            ActorKind::DbccUser => "DBCC User",
        }
    }
}

/// Everything a data page header says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageStamp {
    /// Random id of the file set, chosen when the files were created.
    pub run_id: u64,
    /// Id of the file within the set.
    pub file_id: u32,
    /// Page number within the file (page 0 is the file header).
    pub page_id: u64,
    /// Write generation of this page: 1 for its first write, +1 for each later one.
    pub generation: u64,
    /// Log sequence number of the change this write carries.
    pub lsn: u64,
    /// Kind of actor that wrote it.
    pub writer_kind: ActorKind,
    /// Which actor of that kind.
    pub writer_id: u16,
    /// Write time, microseconds since the Unix epoch.
    pub write_time_us: u64,
}

impl PageStamp {
    /// The stamp of page `id` = (run, file, page) at `generation` written by `writer_kind`,
    /// with the fields that cannot be regenerated (LSN, writer id, write time) zero.
    pub fn bare(id: (u64, u32, u64), generation: u64, writer_kind: ActorKind) -> PageStamp {
        let (run_id, file_id, page_id) = id;
        PageStamp {
            run_id,
            file_id,
            page_id,
            generation,
            lsn: 0,
            writer_kind,
            writer_id: 0,
            write_time_us: 0,
        }
    }

    /// A new page holding the complete image this stamp describes (see [`stamp_page`]).
    pub fn image(&self) -> Vec<u8> {
        let mut page = vec![0u8; PAGE_SIZE];
        stamp_page(&mut page, self);
        page
    }
}

pub(crate) fn put(b: &mut [u8], off: usize, v: &[u8]) {
    b[off..off + v.len()].copy_from_slice(v);
}

/// CRC32 (IEEE, crc32fast) of a page with the checksum field left out.
pub fn page_checksum(page: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&page[..OFF_CHECKSUM]);
    h.update(&page[OFF_CHECKSUM + 4..PAGE_SIZE]);
    h.finalize()
}

/// Checksum stored in a page (which must hold at least the page header).
pub fn stored_checksum(page: &[u8]) -> u32 {
    Reader::at(page, OFF_CHECKSUM)
        .u32()
        .expect("stored_checksum of bytes shorter than a page header")
}

/// The 8-byte stamp at the end of sector `s`: low 32 bits of page id and of generation.
#[expect(
    clippy::cast_possible_truncation,
    reason = "the stamp holds the low 32 bits by design; verify widens them back"
)]
pub fn sector_stamp(page_id: u64, generation: u64) -> [u8; 8] {
    let mut s = [0u8; 8];
    s[..4].copy_from_slice(&(page_id as u32).to_le_bytes());
    s[4..].copy_from_slice(&(generation as u32).to_le_bytes());
    s
}

/// Writes the header fields (without checksum) of `st` into `page`.
pub(crate) fn write_header(page: &mut [u8], st: &PageStamp) {
    put(page, OFF_MAGIC, &PAGE_MAGIC);
    put(page, OFF_VERSION, &FORMAT_VERSION.to_le_bytes());
    put(page, OFF_KIND, &KIND_DATA.to_le_bytes());
    put(page, OFF_FILE_ID, &st.file_id.to_le_bytes());
    put(page, OFF_PAGE_ID, &st.page_id.to_le_bytes());
    put(page, OFF_GENERATION, &st.generation.to_le_bytes());
    put(page, OFF_RUN_ID, &st.run_id.to_le_bytes());
    put(page, OFF_LSN, &st.lsn.to_le_bytes());
    page[OFF_WRITER_KIND] = st.writer_kind as u8;
    page[OFF_WRITER_KIND + 1] = 0;
    put(page, OFF_WRITER_ID, &st.writer_id.to_le_bytes());
    put(page, OFF_WRITE_TIME, &st.write_time_us.to_le_bytes());
}

/// Fills `page` (exactly `PAGE_SIZE` bytes) with the complete image described by `st`:
/// payload, sector stamps, header and checksum.
pub fn stamp_page(page: &mut [u8], st: &PageStamp) {
    assert_eq!(page.len(), PAGE_SIZE, "stamp_page needs one whole page");
    fill::fill_payload(page, st.run_id, st.file_id, st.page_id, st.generation);
    let stamp = sector_stamp(st.page_id, st.generation);
    for s in 0..SECTORS_PER_PAGE {
        put(page, s * SECTOR_SIZE + STAMP_OFFSET, &stamp);
    }
    write_header(page, st);
    let crc = page_checksum(page);
    put(page, OFF_CHECKSUM, &crc.to_le_bytes());
}

/// True when the page starts with the data-page magic and kind.
pub fn has_data_magic(page: &[u8]) -> bool {
    page.len() >= PAGE_SIZE
        && page[OFF_MAGIC..OFF_MAGIC + 8] == PAGE_MAGIC
        && Reader::at(page, OFF_KIND).u16() == Some(KIND_DATA)
}

/// Decodes the header of a page whose magic is right; `None` when the magic is wrong or the
/// page is not a data page.
pub fn read_stamp(page: &[u8]) -> Option<PageStamp> {
    has_data_magic(page).then(|| read_stamp_lenient(page))
}

/// Decodes the header fields whatever the magic says (for damaged pages). An unknown writer
/// tag reads as [`ActorKind::Verifier`]. `page` must be at least one page long.
pub fn read_stamp_lenient(page: &[u8]) -> PageStamp {
    let at = |off| Reader::at(page, off);
    let stamp = || {
        Some(PageStamp {
            run_id: at(OFF_RUN_ID).u64()?,
            file_id: at(OFF_FILE_ID).u32()?,
            page_id: at(OFF_PAGE_ID).u64()?,
            generation: at(OFF_GENERATION).u64()?,
            lsn: at(OFF_LSN).u64()?,
            writer_kind: ActorKind::from_tag(at(OFF_WRITER_KIND).u8()?)
                .unwrap_or(ActorKind::Verifier),
            writer_id: at(OFF_WRITER_ID).u16()?,
            write_time_us: at(OFF_WRITE_TIME).u64()?,
        })
    };
    stamp().expect("read_stamp_lenient of bytes shorter than a page header")
}

/// Microseconds since the Unix epoch, for the write-time field.
pub fn now_us() -> u64 {
    crate::clock::system_now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
