//! Findings and messages: what the workers tell the reporters.
//!
//! Findings are data: an integrity problem found while working is turned into a [`Finding`] and
//! sent, as a `crate::events::Event`, to the outputs (console, XML log, JSON, dumps) through an
//! event sink; log messages travel the same way as a [`Message`]. Nothing below `app` prints.
//! This module stays low (the engine builds findings); the event stream itself, which also
//! carries the statistics, lives in `crate::events`, above `stats`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::page::{ActorKind, ExpectedState, PageStamp, Verdict, VerdictKind};

/// The final classification of a finding, after retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingClass {
    /// An acknowledged write never reached the media (older generation, or never written, persists).
    LostWrite,
    /// A read returned an older version once; a retry returned the right page.
    StaleRead,
    /// Sectors of two generations in one page.
    TornWrite,
    /// Another page's data at this location.
    MisdirectedWrite,
    /// Bits changed at rest or in flight (checksum mismatch).
    BitRot,
    /// Whole sectors read back as zero.
    ZeroedSectors,
    /// Not a page of ours at all.
    Garbage,
    /// A page of another run (file set).
    ForeignRun,
    /// A generation newer than any issued.
    FutureGeneration,
    /// The read system call failed.
    ReadError,
    /// The write system call failed.
    WriteError,
    /// The read transferred fewer bytes than asked.
    ShortRead,
    /// A log block is missing, damaged or out of order.
    LogCorruption,
    /// A data page carries an LSN beyond the durable log (write-ahead rule broken).
    WalViolation,
    /// A file the journal names is missing, was replaced by another file, or lost its header
    /// page: the whole file (or its identity) is a lost write.
    LostFile,
    /// A backup stream block is missing, damaged, out of place, or does not carry the pages
    /// the backup read.
    BackupCorruption,
    /// A hole of a sparse file (a DBCC snapshot's page never copied) that does not read as
    /// zeros.
    HoleNotZeros,
    /// A class this version does not know, read from the JSON of a later one (a fleet whose
    /// hosts run different versions): counted as `other` rather than the file refused.
    #[serde(other)]
    Other,
}

impl FindingClass {
    /// Stable snake_case name for logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingClass::LostWrite => "lost_write",
            FindingClass::StaleRead => "stale_read",
            FindingClass::TornWrite => "torn_write",
            FindingClass::MisdirectedWrite => "misdirected_write",
            FindingClass::BitRot => "bit_rot",
            FindingClass::ZeroedSectors => "zeroed_sectors",
            FindingClass::Garbage => "garbage",
            FindingClass::ForeignRun => "foreign_run",
            FindingClass::FutureGeneration => "future_generation",
            FindingClass::ReadError => "read_error",
            FindingClass::WriteError => "write_error",
            FindingClass::ShortRead => "short_read",
            FindingClass::LogCorruption => "log_corruption",
            FindingClass::WalViolation => "wal_violation",
            FindingClass::LostFile => "lost_file",
            FindingClass::BackupCorruption => "backup_corruption",
            FindingClass::HoleNotZeros => "hole_not_zeros",
            FindingClass::Other => "other",
        }
    }

    /// Classifies a bad first verdict, knowing whether a retry returned the right page.
    pub fn from_verdict(kind: VerdictKind, persistent: bool) -> FindingClass {
        match kind {
            VerdictKind::Stale | VerdictKind::NeverWritten if persistent => FindingClass::LostWrite,
            VerdictKind::Stale | VerdictKind::NeverWritten => FindingClass::StaleRead,
            VerdictKind::TornWrite => FindingClass::TornWrite,
            VerdictKind::Misdirected => FindingClass::MisdirectedWrite,
            VerdictKind::ChecksumMismatch => FindingClass::BitRot,
            VerdictKind::ZeroedSectors => FindingClass::ZeroedSectors,
            VerdictKind::Garbage | VerdictKind::Ok => FindingClass::Garbage,
            VerdictKind::ForeignRun => FindingClass::ForeignRun,
            VerdictKind::FutureGeneration => FindingClass::FutureGeneration,
            VerdictKind::IoError => FindingClass::ReadError,
            VerdictKind::ShortRead => FindingClass::ShortRead,
        }
    }
}

/// One recent write of a page, kept for the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// When the write completed, microseconds since the Unix epoch.
    pub time_us: u64,
    /// What happened: "write", "fsync", "read", "truncate", …
    pub op: String,
    /// Actor that did it.
    pub actor: ActorKind,
    /// Generation written (0 for non-writes).
    pub generation: u64,
    /// Whether the operation succeeded.
    pub ok: bool,
}

/// An integrity problem, with everything needed to prove it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Order of the finding within the run (1-based).
    pub seq: u64,
    /// When it was found, microseconds since the Unix epoch.
    pub time_us: u64,
    /// Seed of the run, so the schedule can be reproduced.
    pub seed: u64,
    /// Final classification.
    pub class: FindingClass,
    /// Path of the file.
    pub path: PathBuf,
    /// File id within the set.
    pub file_id: u32,
    /// Page number (for log blocks: the block's first page).
    pub page_id: u64,
    /// Byte offset of the page in the file.
    pub offset: u64,
    /// Actor whose read found it.
    pub actor: ActorKind,
    /// Which actor of that kind.
    pub actor_id: u16,
    /// What the oracle expected, if anything.
    pub expected: Option<ExpectedState>,
    /// Verdict of the first read.
    pub verdict: Verdict,
    /// Verdict of each re-read, in order.
    pub retries: Vec<Verdict>,
    /// True when no retry returned the right page.
    pub persistent: bool,
    /// Header of the page that was read, when it had a valid magic.
    pub received_header: Option<PageStamp>,
    /// Recent history of this page (newest last).
    pub history: Vec<HistoryEntry>,
    /// Bytes received on the first read (one page), for dumps; not serialised.
    #[serde(skip)]
    pub received: Option<Vec<u8>>,
    /// Bytes expected (regenerated), for dumps; not serialised.
    #[serde(skip)]
    pub expected_image: Option<Vec<u8>>,
    /// Name of the dump file written for it, if any.
    pub dump: Option<PathBuf>,
    /// errno when the finding is an I/O error.
    pub errno: Option<i32>,
    /// What is wrong, for findings that are not a page verdict (log chain, WAL rule).
    #[serde(default)]
    pub detail: Option<String>,
    /// Pages the request covered (1 for a page; more for a failed multi-page request).
    #[serde(default = "one")]
    pub page_count: u32,
    /// Where the page lies on the device under the file (FIEMAP and sysfs), filled in by the
    /// evidence when it records the finding; `None` before that and in older summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<DeviceLocation>,
}

/// Where a finding's bytes lie on the block device under its file: the device and disk, and
/// for each piece of the page (one, unless the page crosses extents) its offset on the
/// filesystem's device and its LBA on the disk. When it cannot be known, `pieces` is empty and
/// `note` says why, in words; a number is never guessed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceLocation {
    /// The block device the filesystem is on (`sda1`, `loop3`, `dm-0`); empty when unknown.
    pub device: String,
    /// The whole disk holding it (`sda`; the device itself when it is not a partition).
    pub disk: String,
    /// The disk's logical sector size, bytes: the unit of `lba`.
    pub logical_sector_size: Option<u64>,
    /// Start of the partition on the disk, in 512-byte sectors (0 for a whole disk).
    pub partition_start: Option<u64>,
    /// The page's pieces on the device.
    pub pieces: Vec<LbaPiece>,
    /// Why the location is not known, or what limits it (a stacked device), in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One contiguous piece of a page on the device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbaPiece {
    /// Offset in the file, bytes.
    pub file_offset: u64,
    /// Length, bytes.
    pub length: u64,
    /// Offset on the filesystem's block device (`device`), bytes.
    pub device_offset: u64,
    /// LBA on the disk (`disk`), in its logical sectors.
    pub lba: u64,
}

impl DeviceLocation {
    /// The LBA of the page's first byte on the disk, when known.
    pub fn lba(&self) -> Option<u64> {
        self.pieces.first().map(|p| p.lba)
    }

    /// One sentence: `disk sda LBA 123456 (4096-byte sectors; sda1 byte 5242880)`, or
    /// `device LBA unknown: why`.
    pub fn describe(&self) -> String {
        let note = self
            .note
            .as_deref()
            .map_or(String::new(), |n| format!("; {n}"));
        let Some(first) = self.pieces.first() else {
            return format!(
                "device LBA unknown: {}",
                self.note.as_deref().unwrap_or("not found")
            );
        };
        let size = self
            .logical_sector_size
            .map_or("unknown".into(), |s| s.to_string());
        let mut s = format!(
            "disk {} LBA {} ({size}-byte sectors; byte {} of {})",
            self.disk, first.lba, first.device_offset, self.device
        );
        if self.pieces.len() > 1 {
            let rest: Vec<String> = self.pieces[1..]
                .iter()
                .map(|p| {
                    format!(
                        "file offset {} ({} bytes) at LBA {}",
                        p.file_offset, p.length, p.lba
                    )
                })
                .collect();
            s.push_str(&format!(
                ", in {} pieces: the first {} bytes there, then {}",
                self.pieces.len(),
                first.length,
                rest.join(", ")
            ));
        }
        s + &note
    }
}

fn one() -> u32 {
    1
}

impl Finding {
    /// A finding about one page with nothing but its identity and verdict filled in; the
    /// caller adds retries, evidence and bytes.
    pub fn page(
        seed: u64,
        path: PathBuf,
        file_id: u32,
        page_id: u64,
        actor: ActorKind,
        actor_id: u16,
        verdict: Verdict,
    ) -> Finding {
        let errno = match verdict {
            Verdict::IoError { errno } => Some(errno),
            _ => None,
        };
        Finding {
            seq: 0,
            time_us: crate::page::layout::now_us(),
            seed,
            class: FindingClass::from_verdict(verdict.kind(), true),
            path,
            file_id,
            page_id,
            offset: page_id * crate::page::PAGE_SIZE as u64,
            actor,
            actor_id,
            expected: None,
            verdict,
            retries: Vec::new(),
            persistent: true,
            received_header: None,
            history: Vec::new(),
            received: None,
            expected_image: None,
            dump: None,
            errno,
            detail: None,
            page_count: 1,
            location: None,
        }
    }
}

/// Severity of a log entry, as SQLIOSim's TYPE attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Severity {
    /// TYPE='INFO'
    Info,
    /// TYPE='WARNING'
    Warning,
    /// TYPE='ERROR'
    Error,
}

/// A message for the log: start-up echo, warnings, summaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// INFO, WARNING or ERROR.
    pub severity: Severity,
    /// SQLIOSim user name (System, Display Monitor, Random User, …).
    pub user: String,
    /// Function that logged it (SQLIOSim's Func attribute).
    pub func: String,
    /// errno, if the message is about a failed system call.
    pub errno: Option<i32>,
    /// The human-readable text (EXTENDED_DESCRIPTION).
    pub text: String,
}

impl Message {
    /// Builds a message.
    pub fn new(severity: Severity, user: &str, func: &str, text: impl Into<String>) -> Message {
        Message {
            severity,
            user: user.to_string(),
            func: func.to_string(),
            errno: None,
            text: text.into(),
        }
    }

    /// The message with an errno (0: success, as SQLIOSim's long-I/O warnings carry).
    pub fn with_errno(mut self, errno: i32) -> Message {
        self.errno = Some(errno);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finding of a class a later version added loads (as `other`) where the whole JSON
    /// summary was refused: a fleet report over hosts of mixed versions reads every host.
    #[test]
    fn a_class_of_a_later_version_reads_as_other() {
        let read: Vec<FindingClass> = serde_json::from_str(
            r#"["lost_write", "hole_not_zeros", "a_class_of_a_later_version"]"#,
        )
        .expect("a list of classes");
        assert_eq!(
            read,
            [
                FindingClass::LostWrite,
                FindingClass::HoleNotZeros,
                FindingClass::Other
            ]
        );
        assert_eq!(FindingClass::Other.as_str(), "other");
    }
}
