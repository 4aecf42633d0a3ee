//! DBCC CHECKDB's internal database snapshot (issue #25 §2): a sparse sibling of each data
//! file, into which a source page's pre-image is copied before the page is first written while
//! the snapshot is open, so that the check sees every page as it was when the snapshot began.
//!
//! A page's snapshot state is what the oracle said of it when the first writer to reach it
//! after the open captured it, with whether its pre-image was copied (or could not be: *lost*,
//! reported when it happened). A page no writer has reached has no captured state and needs
//! none: its source is unchanged since the open, so the source oracle's present state is its
//! snapshot state ([`SnapFile::view_state`]). The states are kept in `state::PageStates`, sized
//! by the pages written while the snapshot is open and at worst one word (8 bytes) a page (its
//! module doc says how).
//!
//! Every access to a page's state is made under that page's latch of the source's oracle: a
//! writer captures and copies under the write latch it takes for its write, before
//! `begin_write`; the check reads under the read latch. So a page is captured before any write
//! begun after the snapshot was opened, its copy is complete before its flag says so, and a
//! check that sees the flag clear reads a source no writer is changing, whose oracle state is
//! still the one it had at the open. A write begun before the open holds its write latch until
//! it completes, so the check (and any later writer) meets the page only once that write is
//! over, at the state the write left: the state a capture at the open would have waited for
//! under the same latch. Nothing else changes a page's expected state while a snapshot is open
//! (a shrink does not cut a file a snapshot holds; a resume sets states before any actor runs),
//! so the check needs no capture pass of its own.
//!
//! The point in time is per page: a page's snapshot state is what the oracle said of it when
//! it was first written after the open, or when the check read it. SQL Server's snapshot is
//! also consistent across pages, through recovery run on it; the pages' images, which is what
//! the storage stack handles, are the same.

mod copy;
mod state;

pub use copy::{CopyIo, CopyProblem};
pub use state::{shards_for, PageStates};

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::RwLock;

use crate::io::Storage;
use crate::page::{Expect, ExpectedState};
use crate::sim::engine::oracle::Oracle;
use state::{COPIED, LOST};

/// The snapshot of one data file: its sparse file and the states of the pages written since
/// it opened.
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
    states: PageStates,
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
        SnapFile {
            file,
            path,
            storage,
            pages,
            states: PageStates::new(pages),
            copied: AtomicU64::new(0),
            copy_writes: AtomicU64::new(0),
        }
    }

    /// Records `state` as the page's snapshot state unless it has one. The caller holds the
    /// page's latch of the source.
    pub fn capture(&self, page: u64, state: ExpectedState) {
        self.states.capture(page, state);
    }

    /// The page's snapshot state, once captured (by a writer, before its first write since the
    /// snapshot opened).
    pub fn state(&self, page: u64) -> Option<ExpectedState> {
        self.states.state(page)
    }

    /// The state page `page` of the snapshot view must read as: its captured state, else (no
    /// write since the open) the source's present one. The caller holds the page's latch of
    /// `source`, or knows the page copied or lost.
    pub fn view_state(&self, source: &Oracle, page: u64) -> ExpectedState {
        self.state(page)
            .unwrap_or_else(|| source.expected_state(page))
    }

    /// True when the page's pre-image is in the sparse file.
    pub fn is_copied(&self, page: u64) -> bool {
        self.states.has(page, COPIED)
    }

    /// True when the page's pre-image could not be kept (already reported).
    pub fn is_lost(&self, page: u64) -> bool {
        self.states.has(page, LOST)
    }

    /// True when the page's pre-image is copied or lost: nothing more to do for it.
    pub fn is_settled(&self, page: u64) -> bool {
        self.states.has(page, COPIED | LOST)
    }

    fn mark(&self, page: u64, flag: u64) {
        self.states.mark(page, flag);
    }

    /// Pages copied on write so far.
    pub fn copied(&self) -> u64 {
        self.copied.load(Ordering::Acquire)
    }

    /// Requests that copied pre-images so far.
    pub fn copy_writes(&self) -> u64 {
        self.copy_writes.load(Ordering::Acquire)
    }

    /// Bytes of the pages' snapshot states.
    pub fn state_bytes(&self) -> usize {
        self.states.memory_bytes()
    }

    /// The expectation of a captured page of the snapshot view (the source's identity).
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
            crate::clock::sleep(std::time::Duration::from_millis(1));
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
