//! DBCC CHECKDB's internal database snapshot (issue #25 §2): a sparse sibling of each data
//! file, into which a source page's pre-image is copied before the page is first written while
//! the snapshot is open, so that the check sees every page as it was when the snapshot began.
//!
//! Per page of a snapshot file the state is 16 bytes: the page's expected state at the
//! snapshot's point in time (captured once, in the same encoding as the oracle's), and whether
//! its pre-image was copied (or could not be: *lost*, reported when it happened). Every access
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

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, Expect, ExpectedState, Verdict, PAGE_SIZE};
use crate::sim::engine::oracle::Oracle;

const CAPTURED: u64 = 1 << 63;
const COPIED: u64 = 1 << 62;
const LOST: u64 = 1 << 61;
const UNKNOWN: u64 = 1 << 60;
const IN_FLIGHT: u64 = 1 << 59;
const GEN_MASK: u64 = IN_FLIGHT - 1;

/// One page's snapshot state.
#[derive(Debug, Default)]
struct Slot {
    /// Flags and the generation (`issued`/`new` for unknown and in-flight states).
    a: AtomicU64,
    /// The old generation of an unknown or in-flight state.
    b: AtomicU64,
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

/// What a copy-on-write met that must be reported by the writer that made it.
#[derive(Debug)]
pub enum CopyProblem {
    /// The source page did not read as the snapshot expects (reported as any bad read of the
    /// source is: its bytes and first verdict).
    BadSource {
        /// Page of the source.
        page: u64,
        /// Verdict of the read.
        verdict: Verdict,
        /// The bytes read (one page).
        received: Vec<u8>,
    },
    /// The read of the source failed as a whole.
    SourceRead {
        /// First page of the request.
        first: u64,
        /// Pages of the request.
        n: u64,
        /// The error.
        error: std::io::Error,
    },
    /// The write of the pre-images into the sparse file failed.
    CopyWrite {
        /// The sparse file.
        path: PathBuf,
        /// First page of the request.
        first: u64,
        /// Pages of the request.
        n: u64,
        /// The error.
        error: std::io::Error,
    },
}

/// One request a copy-on-write made, for the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyIo {
    /// A write of the snapshot file (else a read of the source).
    pub write: bool,
    /// Bytes transferred.
    pub bytes: u64,
    /// How long it took, nanoseconds.
    pub latency_ns: u64,
    /// It succeeded.
    pub ok: bool,
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
        slot.b.store(old, Ordering::Release);
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
        let old = slot.b.load(Ordering::Acquire);
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

    /// Copies the pre-images of the pages of `[first, first + n)` not yet copied from `source`
    /// into the sparse file, capturing first any page not captured (from `oracle`). The caller
    /// holds the write latch of the range and has not begun its write. Each request made is
    /// told to `on_io`. Returns what must be reported.
    pub fn preserve(
        &self,
        source: &dyn Storage,
        oracle: &Oracle,
        first: u64,
        n: u64,
        on_io: &mut dyn FnMut(CopyIo),
    ) -> Vec<CopyProblem> {
        let mut problems = Vec::new();
        let end = (first + n).min(self.pages);
        let mut page = first.max(1);
        while page < end {
            // The next run of pages to copy.
            while page < end && (self.is_copied(page) || self.is_lost(page)) {
                page += 1;
            }
            let start = page;
            while page < end && !self.is_copied(page) && !self.is_lost(page) {
                self.capture(page, oracle.expected_state(page));
                page += 1;
            }
            if page > start {
                self.copy_run(source, oracle, start, page - start, &mut problems, on_io);
            }
        }
        problems
    }

    fn copy_run(
        &self,
        source: &dyn Storage,
        oracle: &Oracle,
        first: u64,
        n: u64,
        problems: &mut Vec<CopyProblem>,
        on_io: &mut dyn FnMut(CopyIo),
    ) {
        if let Err(why) = self.try_copy_run(source, oracle, first, n, problems, on_io) {
            (first..first + n).for_each(|p| self.mark(p, LOST));
            problems.push(why);
        }
    }

    /// Copies one run; Err: nothing of it is held (the caller marks it lost).
    fn try_copy_run(
        &self,
        source: &dyn Storage,
        oracle: &Oracle,
        first: u64,
        n: u64,
        problems: &mut Vec<CopyProblem>,
        on_io: &mut dyn FnMut(CopyIo),
    ) -> Result<(), CopyProblem> {
        let len = usize::try_from(n).unwrap_or(0) * PAGE_SIZE;
        let read_failed = |error| CopyProblem::SourceRead { first, n, error };
        let mut buf = AlignedBuf::new(len).map_err(read_failed)?;
        let offset = first * PAGE_SIZE as u64;
        let timed = |write: bool, t: std::time::Instant, ok: bool| CopyIo {
            write,
            bytes: len as u64,
            latency_ns: u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX),
            ok,
        };
        let t = std::time::Instant::now();
        let read = source.read_at(&mut buf, offset);
        on_io(timed(false, t, read.is_ok()));
        let got = read.map_err(read_failed)?;
        if got != len {
            let error = std::io::Error::other(format!("short read: {got} of {len} bytes"));
            return Err(read_failed(error));
        }
        for (k, bytes) in buf.chunks(PAGE_SIZE).enumerate() {
            let page = first + k as u64;
            let state = self.state(page).unwrap_or(ExpectedState::NeverWritten);
            let exp = Expect::known(oracle.run_id(), oracle.file_id(), page, state);
            let verdict = verify::verify(bytes, &exp);
            if !verdict.is_ok() {
                self.mark(page, LOST);
                problems.push(CopyProblem::BadSource {
                    page,
                    verdict,
                    received: bytes.to_vec(),
                });
            }
        }
        // One 8 KB write per page, as SQL Server copies each page into the sparse file before
        // the page's first change: a failed one loses its page only.
        let mut kept = 0;
        for (k, bytes) in buf.chunks(PAGE_SIZE).enumerate() {
            let page = first + k as u64;
            let t = std::time::Instant::now();
            let written = self.storage.write_at(bytes, page * PAGE_SIZE as u64);
            on_io(CopyIo {
                write: true,
                bytes: PAGE_SIZE as u64,
                latency_ns: u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX),
                ok: written.is_ok(),
            });
            match written {
                Ok(_) => {
                    self.copy_writes.fetch_add(1, Ordering::AcqRel);
                    if !self.is_lost(page) {
                        self.mark(page, COPIED);
                        kept += 1;
                    }
                }
                Err(error) => {
                    self.mark(page, LOST);
                    problems.push(CopyProblem::CopyWrite {
                        path: self.path.clone(),
                        first: page,
                        n: 1,
                        error,
                    });
                }
            }
        }
        self.copied.fetch_add(kept, Ordering::AcqRel);
        Ok(())
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
mod tests {
    use super::*;
    use crate::io::{Backend, FaultyBackend, OpenOptions};

    fn file(b: &FaultyBackend, name: &str, pages: u64) -> Arc<dyn Storage> {
        let s = b
            .open(
                std::path::Path::new(name),
                OpenOptions {
                    create: true,
                    direct: false,
                    write_through: false,
                },
            )
            .expect("open");
        s.set_len(pages * PAGE_SIZE as u64).expect("size");
        s
    }

    fn stamped(run: u64, file: u32, page: u64, gen: u64) -> Vec<u8> {
        let mut b = vec![0u8; PAGE_SIZE];
        let st = crate::page::layout::PageStamp {
            run_id: run,
            file_id: file,
            page_id: page,
            generation: gen,
            lsn: 0,
            writer_kind: crate::page::ActorKind::LazyWriter,
            writer_id: 0,
            write_time_us: 1,
        };
        crate::page::layout::stamp_page(&mut b, &st);
        b
    }

    #[test]
    fn a_page_is_copied_once_as_it_was_and_its_state_is_the_one_captured_first() {
        let oracle = Oracle::new(7, 0, 16);
        let b = FaultyBackend::new(1);
        let source = file(&b, "d.mdx", 16);
        for p in 1..16 {
            let g = oracle.begin_write(p);
            oracle.complete_write(p, g, true);
            source
                .write_at(&stamped(7, 0, p, g), p * PAGE_SIZE as u64)
                .expect("write");
        }
        let sparse = file(&b, "d.mdx_MSSQL_DBCC0", 16);
        let snap = SnapFile::new(0, "d.mdx_MSSQL_DBCC0".into(), sparse.clone(), 16);
        let mut writes = Vec::new();
        let mut on_io = |io: CopyIo| {
            if io.write {
                writes.push(io.bytes);
            }
        };
        assert!(snap
            .preserve(source.as_ref(), &oracle, 3, 4, &mut on_io)
            .is_empty());
        assert_eq!((snap.copied(), snap.copy_writes()), (4, 4));
        assert_eq!(writes, [PAGE_SIZE as u64; 4], "one 8 KB write per page");
        // Page 4 is then written twice: its snapshot state stays generation 1.
        for _ in 0..2 {
            assert!(snap
                .preserve(source.as_ref(), &oracle, 4, 1, &mut |_| {})
                .is_empty());
            let g = oracle.begin_write(4);
            oracle.complete_write(4, g, true);
        }
        assert_eq!(snap.copied(), 4, "a page is copied once");
        assert_eq!(
            snap.state(4),
            Some(ExpectedState::Written { generation: 1 })
        );
        let mut b = vec![0u8; PAGE_SIZE];
        sparse.read_at(&mut b, 4 * PAGE_SIZE as u64).expect("read");
        let exp = snap.expect(7, 0, 4).expect("captured");
        assert!(verify::verify(&b, &exp).is_ok());
        assert!(!snap.is_copied(9) && snap.state(9).is_none());
        // Beyond the snapshot's pages nothing is copied.
        assert!(snap
            .preserve(source.as_ref(), &oracle, 15, 5, &mut |_| {})
            .is_empty());
        assert_eq!(snap.copied(), 5);
    }

    #[test]
    fn a_source_page_that_is_not_what_the_snapshot_expects_is_reported_and_not_held() {
        let oracle = Oracle::new(7, 0, 8);
        let g = oracle.begin_write(2);
        oracle.complete_write(2, g, true);
        // The device lost the write: page 2 reads as zeros.
        let b = FaultyBackend::new(1);
        let source = file(&b, "d.mdx", 8);
        let sparse = file(&b, "s", 8);
        let snap = SnapFile::new(0, "s".into(), sparse, 8);
        let problems = snap.preserve(source.as_ref(), &oracle, 2, 1, &mut |_| {});
        assert!(
            matches!(
                problems.as_slice(),
                [CopyProblem::BadSource { page: 2, .. }]
            ),
            "{problems:?}"
        );
        assert!(snap.is_lost(2) && !snap.is_copied(2));
        assert_eq!(snap.copied(), 0);
    }
}
