//! What the verifier is told to expect of a page, and what it answers.

use serde::{Deserialize, Serialize};

use super::layout::PageStamp;
use super::torn::SectorContent;

/// What the expected-state oracle knows about one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExpectedState {
    /// No write to this page ever completed or was issued: it must read as never written.
    NeverWritten,
    /// The last completed write had this generation, and no write is in flight.
    Written {
        /// Generation of the last completed write.
        generation: u64,
    },
    /// A write of generation `new` was issued but its completion is not known (after a crash):
    /// the page must be entirely `old` (0 = never written) or entirely `new`.
    InFlight {
        /// Generation that was durable before the write (0: never written).
        old: u64,
        /// Generation of the write in flight.
        new: u64,
    },
    /// A write failed (EIO): any self-consistent content between `old` and `issued` (or a mix
    /// of them) is acceptable; only damage is reported.
    Unknown {
        /// Generation known before the failed write (0: never written).
        old: u64,
        /// Highest generation issued to this page.
        issued: u64,
    },
}

impl ExpectedState {
    /// The newest generation ever issued for this page (0: none).
    pub fn max_issued(self) -> u64 {
        match self {
            ExpectedState::NeverWritten => 0,
            ExpectedState::Written { generation } => generation,
            ExpectedState::InFlight { new, .. } => new,
            ExpectedState::Unknown { issued, .. } => issued,
        }
    }

    /// The generation the page must hold at least (0: may be never written).
    pub fn min_acceptable(self) -> u64 {
        match self {
            ExpectedState::NeverWritten => 0,
            ExpectedState::Written { generation } => generation,
            ExpectedState::InFlight { old, .. } | ExpectedState::Unknown { old, .. } => old,
        }
    }
}

/// Everything the verifier is told about the page a read was meant to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expect {
    /// Run id of the file set; `None` in an offline scan that accepts any run.
    pub run_id: Option<u64>,
    /// File the page was read from.
    pub file_id: u32,
    /// Page number the read addressed.
    pub page_id: u64,
    /// What the oracle knows; `None` in an offline scan without a journal.
    pub state: Option<ExpectedState>,
}

impl Expect {
    /// Expectation of a live run: everything known.
    pub fn known(run_id: u64, file_id: u32, page_id: u64, state: ExpectedState) -> Expect {
        Expect {
            run_id: Some(run_id),
            file_id,
            page_id,
            state: Some(state),
        }
    }

    /// Offline scan: only what the page must say about itself.
    pub fn offline(run_id: Option<u64>, file_id: u32, page_id: u64) -> Expect {
        Expect {
            run_id,
            file_id,
            page_id,
            state: None,
        }
    }
}

/// Bit-level comparison of a damaged page with the image it should have had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BitDiff {
    /// Number of bits that differ.
    pub bits_flipped: u32,
    /// Number of bytes that differ.
    pub bytes_differing: u32,
    /// Offset of the first differing byte, if any.
    pub first_bad_byte: Option<u32>,
    /// Offset of the last differing byte, if any.
    pub last_bad_byte: Option<u32>,
    /// Bit i set: 512-byte sector i differs.
    pub sectors: u16,
}

impl BitDiff {
    /// A single flipped bit (typical bit rot) rather than larger damage.
    pub fn single_bit(&self) -> bool {
        self.bits_flipped == 1
    }
}

/// The verifier's answer about one page read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The page is what was expected (generation 0: correctly never written).
    Ok {
        /// Generation found.
        generation: u64,
    },
    /// The page reads as never written (all zero), but `expected` was written.
    NeverWritten {
        /// Generation that should be there.
        expected: u64,
    },
    /// Some whole sectors read as zero inside an otherwise valid page.
    ZeroedSectors {
        /// Generation of the valid sectors.
        generation: u64,
        /// Bit i set: sector i is zero.
        sectors: u16,
    },
    /// No valid page header and no recognisable sector: not a page of ours.
    Garbage {
        /// The first 16 bytes found, for the message.
        first_bytes: [u8; 16],
    },
    /// The stored checksum does not match the content: bit rot or other damage.
    ChecksumMismatch {
        /// Checksum stored in the page.
        stored: u32,
        /// Checksum calculated over the bytes read.
        calculated: u32,
        /// Checksum the expected image has.
        expected: u32,
        /// Comparison with the expected image.
        diff: BitDiff,
    },
    /// Sectors from different writes: a write reached the media only in part.
    TornWrite {
        /// What each sector holds.
        sectors: Vec<SectorContent>,
    },
    /// A valid page of another page or file sits at this location.
    Misdirected {
        /// Header of the page found.
        found: PageStamp,
    },
    /// A valid page of an older generation than the last completed write: stale read (if a
    /// retry returns the right page) or lost write (if it persists).
    Stale {
        /// Generation found.
        found: u64,
        /// Generation expected at least.
        expected: u64,
    },
    /// A valid page written by another run of the tool (another file set).
    ForeignRun {
        /// Run id found in the page.
        found_run: u64,
        /// Run id of this file set.
        expected_run: u64,
    },
    /// A generation newer than anything ever issued for this page.
    FutureGeneration {
        /// Generation found.
        found: u64,
        /// Newest generation issued.
        max_issued: u64,
    },
    /// The read itself failed.
    IoError {
        /// errno of the failure.
        errno: i32,
    },
    /// The read returned fewer bytes than asked, or left the buffer untouched.
    ShortRead {
        /// Bytes that were transferred (as far as can be told).
        bytes: u32,
    },
}

/// The class of a verdict, for counting, logging and matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// See [`Verdict::Ok`].
    Ok,
    /// See [`Verdict::NeverWritten`].
    NeverWritten,
    /// See [`Verdict::ZeroedSectors`].
    ZeroedSectors,
    /// See [`Verdict::Garbage`].
    Garbage,
    /// See [`Verdict::ChecksumMismatch`].
    ChecksumMismatch,
    /// See [`Verdict::TornWrite`].
    TornWrite,
    /// See [`Verdict::Misdirected`].
    Misdirected,
    /// See [`Verdict::Stale`].
    Stale,
    /// See [`Verdict::ForeignRun`].
    ForeignRun,
    /// See [`Verdict::FutureGeneration`].
    FutureGeneration,
    /// See [`Verdict::IoError`].
    IoError,
    /// See [`Verdict::ShortRead`].
    ShortRead,
}

impl VerdictKind {
    /// Stable snake_case name used in logs, JSON and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Ok => "ok",
            VerdictKind::NeverWritten => "never_written",
            VerdictKind::ZeroedSectors => "zeroed_sectors",
            VerdictKind::Garbage => "garbage",
            VerdictKind::ChecksumMismatch => "checksum_mismatch",
            VerdictKind::TornWrite => "torn_write",
            VerdictKind::Misdirected => "misdirected_write",
            VerdictKind::Stale => "stale_or_lost_write",
            VerdictKind::ForeignRun => "foreign_run",
            VerdictKind::FutureGeneration => "future_generation",
            VerdictKind::IoError => "io_error",
            VerdictKind::ShortRead => "short_read",
        }
    }
}

impl Verdict {
    /// The class of this verdict.
    pub fn kind(&self) -> VerdictKind {
        match self {
            Verdict::Ok { .. } => VerdictKind::Ok,
            Verdict::NeverWritten { .. } => VerdictKind::NeverWritten,
            Verdict::ZeroedSectors { .. } => VerdictKind::ZeroedSectors,
            Verdict::Garbage { .. } => VerdictKind::Garbage,
            Verdict::ChecksumMismatch { .. } => VerdictKind::ChecksumMismatch,
            Verdict::TornWrite { .. } => VerdictKind::TornWrite,
            Verdict::Misdirected { .. } => VerdictKind::Misdirected,
            Verdict::Stale { .. } => VerdictKind::Stale,
            Verdict::ForeignRun { .. } => VerdictKind::ForeignRun,
            Verdict::FutureGeneration { .. } => VerdictKind::FutureGeneration,
            Verdict::IoError { .. } => VerdictKind::IoError,
            Verdict::ShortRead { .. } => VerdictKind::ShortRead,
        }
    }

    /// True when the page is as expected.
    pub fn is_ok(&self) -> bool {
        matches!(self, Verdict::Ok { .. })
    }

    /// One-line human description, used in logs and on the console.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Ok { generation } => format!("ok (generation {generation})"),
            Verdict::NeverWritten { expected } => format!(
                "page reads as never written (all zero) but generation {expected} was written: lost write"
            ),
            Verdict::ZeroedSectors { generation, sectors } => format!(
                "zeroed sectors {} inside a page of generation {generation}",
                sector_list(*sectors)
            ),
            Verdict::Garbage { first_bytes } => format!(
                "bad magic: not a page of this tool (first bytes {})",
                hex(first_bytes)
            ),
            Verdict::ChecksumMismatch { stored, calculated, expected, diff } => format!(
                "checksum mismatch: Expected CheckSum: 0x{expected:08X}, Received CheckSum: 0x{stored:08X}, Calculated CheckSum: 0x{calculated:08X}; {} bit(s) in {} byte(s) differ, bytes {}..{}, sectors {}{}",
                diff.bits_flipped,
                diff.bytes_differing,
                opt(diff.first_bad_byte),
                opt(diff.last_bad_byte),
                sector_list(diff.sectors),
                if diff.single_bit() { " (single-bit flip)" } else { "" }
            ),
            Verdict::TornWrite { sectors } => super::torn::describe(sectors, 512),
            Verdict::Misdirected { found } => format!(
                "misdirected write: holds file {} page {} generation {}",
                found.file_id, found.page_id, found.generation
            ),
            Verdict::Stale { found, expected } => format!(
                "stale read or lost write: generation {found} found, {expected} expected ({} behind)",
                expected.saturating_sub(*found)
            ),
            Verdict::ForeignRun { found_run, expected_run } => format!(
                "page from another run: run id {found_run:016x}, this file set is {expected_run:016x}"
            ),
            Verdict::FutureGeneration { found, max_issued } => format!(
                "future generation {found}: newest ever issued is {max_issued}"
            ),
            Verdict::IoError { errno } => format!(
                "I/O error: errno {errno} ({})",
                std::io::Error::from_raw_os_error(*errno)
            ),
            Verdict::ShortRead { bytes } => format!("short read: {bytes} bytes transferred"),
        }
    }
}

impl Verdict {
    /// As [`Verdict::describe`], with a torn write told in the device's sectors of
    /// `sector_size` bytes (the 512-byte stamp map still shown).
    pub fn describe_for(&self, sector_size: u32) -> String {
        match self {
            Verdict::TornWrite { sectors } => super::torn::describe(sectors, sector_size),
            other => other.describe(),
        }
    }

    /// The description to give instead of [`Verdict::describe`] on a device of
    /// `sector_size`-byte sectors, when it differs (a torn write on a 4 KiB-sector device).
    pub fn device_detail(&self, sector_size: u32) -> Option<String> {
        (sector_size > 512 && self.kind() == VerdictKind::TornWrite)
            .then(|| self.describe_for(sector_size))
    }
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("0x{v:X}"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// "3,4,5" style list of the sectors set in a mask.
pub fn sector_list(mask: u16) -> String {
    let v: Vec<String> = (0..16)
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| i.to_string())
        .collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(",")
    }
}
