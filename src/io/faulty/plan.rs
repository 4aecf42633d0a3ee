//! What the faulty backend can do wrong, where, and the log of what it actually did.
//!
//! Faults are armed one at a time ([`Trigger`] says which request triggers them; each fires
//! once) or drawn at random with a probability per request from the seeded generator. A fault
//! that fired is logged as a [`FiredFault`] with the page it hit and what it did there.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::page::PAGE_SIZE;

/// Where a torn write stops inside the target page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tear {
    /// Keeps a random number (1..=15) of 512-byte sectors.
    Sectors512,
    /// Keeps the first 4096 bytes (a 4Kn device tearing a page in two).
    At4096,
    /// Keeps exactly the first `n` bytes of the page.
    Bytes(usize),
}

/// Where a misdirected write lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misdirect {
    /// A random other page of the same file.
    OtherPage,
    /// This page of the same file.
    Page(u64),
    /// The same offset in a random other open file.
    OtherFile,
    /// The same offset in this file.
    File(PathBuf),
}

/// One fault the backend injects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The write of the target page is acknowledged but never stored.
    LostWrite,
    /// Only the first part of the target page is stored; the rest keeps its old content. The
    /// other pages of a multi-page request are stored whole, so exactly one page is torn.
    TornWrite(Tear),
    /// The target page's data is stored somewhere else; its own location keeps old content.
    MisdirectedWrite(Misdirect),
    /// Flips one bit of the stored page (random when `None`) before a read: damage at rest.
    BitFlip(Option<u32>),
    /// Returns the page's previous version, once (the stored page is untouched).
    StaleRead,
    /// Zeroes one stored non-zero sector of the page (random when `None`) before a read.
    ZeroedSector(Option<usize>),
    /// The read fails with EIO.
    ReadEio,
    /// The write fails with EIO and stores nothing.
    WriteEio,
    /// The read transfers only a random number (0..=15) of the target page's sectors; with
    /// `silent` it still reports the full length (a read that "succeeds" without data).
    ShortRead {
        /// Report the full length although bytes were not transferred.
        silent: bool,
    },
    /// The request is delayed by this long.
    Latency(Duration),
}

/// The kind of request a fault can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A read.
    Read,
    /// A write.
    Write,
}

impl Fault {
    /// Stable snake_case name of the fault class.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::LostWrite => "lost_write",
            Fault::TornWrite(Tear::At4096) => "torn_write_4k",
            Fault::TornWrite(_) => "torn_write_512",
            Fault::MisdirectedWrite(Misdirect::OtherFile | Misdirect::File(_)) => {
                "misdirected_write_file"
            }
            Fault::MisdirectedWrite(_) => "misdirected_write_page",
            Fault::BitFlip(_) => "bit_flip",
            Fault::StaleRead => "stale_read",
            Fault::ZeroedSector(_) => "zeroed_sector",
            Fault::ReadEio => "read_eio",
            Fault::WriteEio => "write_eio",
            Fault::ShortRead { silent: false } => "short_read",
            Fault::ShortRead { silent: true } => "silent_short_read",
            Fault::Latency(_) => "latency_spike",
        }
    }

    /// True when this fault acts on requests of kind `op`.
    pub fn applies_to(&self, op: Access) -> bool {
        match self {
            Fault::Latency(_) => true,
            Fault::LostWrite
            | Fault::TornWrite(_)
            | Fault::MisdirectedWrite(_)
            | Fault::WriteEio => op == Access::Write,
            _ => op == Access::Read,
        }
    }
}

/// Which request triggers an armed fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// The next request of the right kind to any file (its first page).
    Any,
    /// The next request of the right kind to this file (its first page).
    File(PathBuf),
    /// The next request of the right kind that covers this page of this file.
    Page {
        /// File.
        path: PathBuf,
        /// Page number (byte offset / 8192).
        page: u64,
    },
}

impl Trigger {
    /// The page of `path` holding byte `offset`.
    pub fn at_offset(path: impl Into<PathBuf>, offset: u64) -> Trigger {
        Trigger::Page {
            path: path.into(),
            page: offset / PAGE_SIZE as u64,
        }
    }

    /// The page of the request `[first, first + count)` on `path` this target hits, if any.
    fn hit(&self, path: &Path, first: u64, count: u64) -> Option<u64> {
        match self {
            Trigger::Any => Some(first),
            Trigger::File(p) => (p == path).then_some(first),
            Trigger::Page { path: p, page } => {
                (p == path && *page >= first && *page < first + count).then_some(*page)
            }
        }
    }
}

/// What a fault did where it fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// Nothing more to say (lost write, EIO, stale read).
    None,
    /// Bytes of the target page that were stored (torn write).
    KeptBytes(usize),
    /// Where the data landed (misdirected write).
    Landed {
        /// File written instead.
        path: PathBuf,
        /// Page written instead.
        page: u64,
    },
    /// Bit flipped: byte offset in the page and bit number.
    Bit {
        /// Byte offset within the page.
        byte: usize,
        /// Bit 0..=7.
        bit: u8,
    },
    /// Sector zeroed (0..16).
    Sector(usize),
    /// Bytes of the target page transferred (short read).
    Transferred(usize),
}

/// A fault that fired: what, where, when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiredFault {
    /// Order of firing (1-based) within the backend.
    pub seq: u64,
    /// The fault as armed or drawn.
    pub fault: Fault,
    /// File of the request.
    pub path: PathBuf,
    /// Page of the request the fault hit.
    pub page: u64,
    /// Kind of request.
    pub op: Access,
    /// What it did.
    pub detail: Detail,
    /// Microseconds since the Unix epoch.
    pub time_us: u64,
}

/// Faults drawn at random: probability per request, the faults, and the file they are
/// limited to (`None`: every file).
#[derive(Debug)]
struct RandomFaults {
    probability: f64,
    faults: Vec<Fault>,
    only: Option<PathBuf>,
}

/// Armed faults, random-fault settings, the generator and the logs.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) rng: SmallRng,
    armed: Vec<(Fault, Trigger)>,
    random: Option<RandomFaults>,
    pub(crate) fired: Vec<FiredFault>,
    pub(crate) skipped: Vec<(Fault, PathBuf, u64)>,
}

impl Plan {
    pub(crate) fn new(seed: u64) -> Plan {
        Plan {
            rng: SmallRng::seed_from_u64(seed),
            armed: Vec::new(),
            random: None,
            fired: Vec::new(),
            skipped: Vec::new(),
        }
    }

    pub(crate) fn arm(&mut self, fault: Fault, target: Trigger) {
        self.armed.push((fault, target));
    }

    pub(crate) fn armed(&self) -> usize {
        self.armed.len()
    }

    pub(crate) fn clear(&mut self) {
        self.armed.clear();
        self.random = None;
    }

    pub(crate) fn set_random(
        &mut self,
        probability: f64,
        faults: Vec<Fault>,
        only: Option<PathBuf>,
    ) {
        self.random = Some(RandomFaults {
            probability: probability.clamp(0.0, 1.0),
            faults,
            only,
        });
    }

    /// The fault (and page) that acts on this request, if any: an armed fault first (oldest
    /// first), else a random draw.
    pub(crate) fn pick(
        &mut self,
        op: Access,
        path: &Path,
        offset: u64,
        len: usize,
    ) -> Option<(Fault, u64)> {
        let first = offset / PAGE_SIZE as u64;
        let count = (offset + len.max(1) as u64 - 1) / PAGE_SIZE as u64 - first + 1;
        let hit = self
            .armed
            .iter()
            .enumerate()
            .filter(|(_, (f, _))| f.applies_to(op))
            .find_map(|(i, (_, t))| t.hit(path, first, count).map(|p| (i, p)));
        if let Some((i, page)) = hit {
            return Some((self.armed.remove(i).0, page));
        }
        self.draw(op, path, first, count)
    }

    fn draw(&mut self, op: Access, path: &Path, first: u64, count: u64) -> Option<(Fault, u64)> {
        let r = self.random.as_ref()?;
        if r.only.as_ref().is_some_and(|only| only != path) {
            return None;
        }
        let usable: Vec<&Fault> = r.faults.iter().filter(|f| f.applies_to(op)).collect();
        if usable.is_empty() || !self.rng.random_bool(r.probability) {
            return None;
        }
        let fault = usable[self.rng.random_range(0..usable.len())].clone();
        Some((fault, first + self.rng.random_range(0..count)))
    }
}
