//! The copy-on-write into a snapshot file: the pre-images of a writer's pages copied before
//! its write (read from the source, verified against their snapshot state, written one page a
//! request), and what it met that the writer must report.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::state::{COPIED, LOST};
use super::SnapFile;
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, Expect, ExpectedState, Verdict, PAGE_SIZE};
use crate::sim::engine::oracle::Oracle;

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
    /// Copies the pre-images of the pages of `[first, first + n)` not yet copied from `source`
    /// into the sparse file, capturing first any page not captured (from `oracle`): the capture
    /// that gives a page written during the check its snapshot state. The caller
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
            while page < end && self.is_settled(page) {
                page += 1;
            }
            let start = page;
            while page < end && !self.is_settled(page) {
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
            latency_ns: u64::try_from(crate::clock::since(t).as_nanos()).unwrap_or(u64::MAX),
            ok,
        };
        let t = crate::clock::now();
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
            let t = crate::clock::now();
            let written = self.storage.write_at(bytes, page * PAGE_SIZE as u64);
            on_io(CopyIo {
                write: true,
                bytes: PAGE_SIZE as u64,
                latency_ns: u64::try_from(crate::clock::since(t).as_nanos()).unwrap_or(u64::MAX),
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
