//! DBCC CHECKDB's internal database snapshot (issue #25 §2): a sparse sibling of each data
//! file, into which a source page's pre-image is copied before the page is first written while
//! the snapshot is open, so that the check sees every page as it was when the snapshot began.
//!
//! Per page of a snapshot file the state is one word, 8 bytes: the page's expected state at
//! the snapshot's point in time (captured once: its generation and flags), and whether its
//! pre-image was copied (or could not be: *lost*, reported when it happened). The old
//! generation of a page captured in flight or unknown (a write under way or failed as the
//! snapshot opened: a few pages) is kept in a map beside. Every access
//! to a page's state is made under that page's latch of the source's oracle: a writer captures
//! and copies under the write latch it takes for its write, before `begin_write`; the check
//! captures and reads under the read latch. So a page is captured before any write begun after
//! the snapshot was opened, its copy is complete before its flag says so, and a check that sees
//! the flag clear reads a source no writer is changing.
//!
//! The point in time is per page: a page's snapshot state is what the oracle said of it when
//! it was captured, either by the check's capture pass right after the snapshot opened or by the
//! first writer to reach it (earlier). SQL Server's snapshot is also consistent across pages,
//! through recovery run on it; the pages' images, which is what the storage stack handles, are
//! the same.

mod copy;

pub use copy::{CopyIo, CopyProblem};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::io::Storage;
use crate::page::{Expect, ExpectedState};

const CAPTURED: u64 = 1 << 63;
const COPIED: u64 = 1 << 62;
const LOST: u64 = 1 << 61;
const UNKNOWN: u64 = 1 << 60;
const IN_FLIGHT: u64 = 1 << 59;
const GEN_MASK: u64 = IN_FLIGHT - 1;

/// One page's snapshot state: flags and the generation (`issued`/`new` for unknown and
/// in-flight states, whose old generation is in [`SnapFile`]'s `olds`).
#[derive(Debug, Default)]
struct Slot {
    a: AtomicU64,
}

/// The snapshot of one data file: its sparse file and every page's state.
#[derive(Debug)]
pub struct SnapFile {
    /// Index of the source data file in the run's files.
    pub file: usize,
    /// The sparse file (`<data file>_MSSQL_DBCC<n>`).
    pub path: PathBuf,
    /// The sparse file, open.
    pub storage: Arc<dyn Storage>,
    /// Pages of the source when the snapshot opened: pages `1..pages` are in the snapshot.
    pub pages: u64,
    slots: Box<[Slot]>,
    /// The old generation of each page captured in flight or unknown.
    olds: Mutex<HashMap<u64, u64>>,
    /// Pages whose pre-image was copied.
    copied: AtomicU64,
    /// Requests that copied pre-images.
    copy_writes: AtomicU64,
}

/// A snapshot: one [`SnapFile`] per data file.
#[derive(Debug)]
pub struct Snapshot {
    /// The DBCC user it belongs to.
    pub owner: u16,
    /// Its files, in the order of the data files.
    pub files: Vec<SnapFile>,
}

/// The snapshots open in a run: the writers' copy-on-write looks here before every write.
#[derive(Debug, Default)]
pub struct Snapshots {
    open: RwLock<Vec<Arc<Snapshot>>>,
}

impl SnapFile {
    /// The snapshot of `file`, `pages` pages, kept in `storage` at `path`; no page captured.
    pub fn new(file: usize, path: PathBuf, storage: Arc<dyn Storage>, pages: u64) -> SnapFile {
        let mut slots = Vec::new();
        slots.resize_with(usize::try_from(pages).unwrap_or(0), Slot::default);
        SnapFile {
            file,
            path,
            storage,
            pages,
            slots: slots.into_boxed_slice(),
            olds: Mutex::new(HashMap::new()),
            copied: AtomicU64::new(0),
            copy_writes: AtomicU64::new(0),
        }
    }

    fn slot(&self, page: u64) -> Option<&Slot> {
        (page >= 1)
            .then(|| self.slots.get(usize::try_from(page).ok()?))
            .flatten()
    }

    /// Records `state` as the page's snapshot state unless it has one. The caller holds the
    /// page's latch of the source.
    pub fn capture(&self, page: u64, state: ExpectedState) {
        let Some(slot) = self.slot(page) else { return };
        let a = slot.a.load(Ordering::Acquire);
        if a & CAPTURED != 0 {
            return;
        }
        let (gen, old) = match state {
            ExpectedState::NeverWritten => (0, 0),
            ExpectedState::Written { generation } => (generation, 0),
            ExpectedState::InFlight { old, new } => (new | IN_FLIGHT, old),
            ExpectedState::Unknown { old, issued } => (issued | UNKNOWN, old),
        };
        if gen & (IN_FLIGHT | UNKNOWN) != 0 {
            // Before the flags that send a reader here are stored.
            self.olds.lock().insert(page, old);
        }
        slot.a
            .store(gen | CAPTURED | (a & (COPIED | LOST)), Ordering::Release);
    }

    /// The page's snapshot state, once captured.
    pub fn state(&self, page: u64) -> Option<ExpectedState> {
        let slot = self.slot(page)?;
        let a = slot.a.load(Ordering::Acquire);
        if a & CAPTURED == 0 {
            return None;
        }
        let gen = a & GEN_MASK;
        let old = if a & (IN_FLIGHT | UNKNOWN) != 0 {
            self.olds.lock().get(&page).copied().unwrap_or(0)
        } else {
            0
        };
        Some(if a & UNKNOWN != 0 {
            ExpectedState::Unknown { old, issued: gen }
        } else if a & IN_FLIGHT != 0 {
            ExpectedState::InFlight { old, new: gen }
        } else if gen == 0 {
            ExpectedState::NeverWritten
        } else {
            ExpectedState::Written { generation: gen }
        })
    }

    /// True when the page's pre-image is in the sparse file.
    pub fn is_copied(&self, page: u64) -> bool {
        self.slot(page)
            .is_some_and(|s| s.a.load(Ordering::Acquire) & COPIED != 0)
    }

    /// True when the page's pre-image could not be kept (already reported).
    pub fn is_lost(&self, page: u64) -> bool {
        self.slot(page)
            .is_some_and(|s| s.a.load(Ordering::Acquire) & LOST != 0)
    }

    fn mark(&self, page: u64, flag: u64) {
        if let Some(s) = self.slot(page) {
            s.a.fetch_or(flag, Ordering::AcqRel);
        }
    }

    /// Pages copied on write so far.
    pub fn copied(&self) -> u64 {
        self.copied.load(Ordering::Acquire)
    }

    /// Requests that copied pre-images so far.
    pub fn copy_writes(&self) -> u64 {
        self.copy_writes.load(Ordering::Acquire)
    }

    /// The expectation of page `page` of the snapshot view (the source's identity).
    pub fn expect(&self, run_id: u64, file_id: u32, page: u64) -> Option<Expect> {
        self.state(page)
            .map(|st| Expect::known(run_id, file_id, page, st))
    }
}

impl Snapshot {
    /// The snapshot of source file `file`, if it covers it.
    pub fn of(&self, file: usize) -> Option<&SnapFile> {
        self.files.iter().find(|f| f.file == file)
    }
}

impl Snapshots {
    /// No snapshot open.
    pub fn new() -> Snapshots {
        Snapshots::default()
    }

    /// Opens `s`: every write begun from now on copies its pre-images into it first.
    pub fn open(&self, s: Arc<Snapshot>) {
        self.open.write().push(s);
    }

    /// Closes `s`: no write copies into it any more. Returns once no writer is copying into
    /// it (the caller then holds its only reference).
    pub fn close(&self, s: &Arc<Snapshot>) {
        self.open.write().retain(|o| !Arc::ptr_eq(o, s));
        while Arc::strong_count(s) > 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The snapshots open on source file `file` (empty, cheaply, when none is open).
    pub fn on(&self, file: usize) -> Vec<Arc<Snapshot>> {
        let open = self.open.read();
        if open.is_empty() {
            return Vec::new();
        }
        open.iter()
            .filter(|s| s.of(file).is_some())
            .cloned()
            .collect()
    }

    /// True when a snapshot is open on source file `file` (a shrink then does not truncate).
    pub fn holds(&self, file: usize) -> bool {
        self.open.read().iter().any(|s| s.of(file).is_some())
    }
}

#[cfg(test)]
mod tests;
