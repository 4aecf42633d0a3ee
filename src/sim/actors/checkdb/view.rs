//! The check's read of the snapshot view: a run of pages read from their copies where they
//! have one, else from the source under its read latch, each checked against the state it had
//! when the snapshot began.

use super::io_failed;
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, Expect, PAGE_SIZE};
use crate::sim::actors::evidence;
use crate::sim::actors::worker::Worker;
use crate::sim::engine::snapshot::SnapFile;
use crate::stats::OpKind;

/// What one read of the snapshot view found.
#[derive(Debug, Default)]
pub(super) struct View {
    /// Pages read and checked.
    pub(super) pages: u64,
    /// Of those, pages read from their copies.
    pub(super) from_copies: u64,
    /// Findings.
    pub(super) bad: u64,
}

/// The check's buffers: a run of the snapshot view as read from the data file, and the copies
/// of its pages read from the sparse file, `chunk` pages each.
pub(super) struct ViewBufs {
    read: AlignedBuf,
    copies: AlignedBuf,
}

impl ViewBufs {
    pub(super) fn new(chunk: u64) -> std::io::Result<ViewBufs> {
        let len = chunk as usize * PAGE_SIZE;
        Ok(ViewBufs {
            read: AlignedBuf::new(len)?,
            copies: AlignedBuf::new(len)?,
        })
    }
}

/// Reads `n` pages (at most the buffers' chunk) of the snapshot view from `first` and checks
/// each against its snapshot state.
pub(super) fn read_view(
    w: &mut Worker<'_>,
    sf: &SnapFile,
    bufs: &mut ViewBufs,
    first: u64,
    n: u64,
) -> View {
    let run = w.run;
    let f = &run.files[sf.file];
    let len = n as usize * PAGE_SIZE;
    let buf = &mut bufs.read[..len];
    // A page copied stays copied, and its copy is written before it is marked so: when every
    // page of the run has its copy (or none can be had), the source is neither read nor
    // latched. The writers copy a busy file's pages in the check's first seconds, and the
    // check used to wait on their write latches for source reads it did not use (the
    // default run's first check of 200 MB did not finish in 25 s).
    let from_copies_only = (first..first + n).all(|p| sf.is_copied(p) || sf.is_lost(p));
    // Else no write of these pages meanwhile: none copies or changes them under the check.
    let _latch = (!from_copies_only).then(|| f.oracle.read_latch_range(first, n));
    let offset = first * PAGE_SIZE as u64;
    let len = buf.len() as u64;
    let read = match from_copies_only {
        true => Ok(buf.len()),
        false => w.timed_outside(Some(sf.file), OpKind::Read, len, || {
            f.storage.read_at(&mut *buf, offset)
        }),
    };
    match read {
        Ok(got) if got == buf.len() => {}
        Ok(got) => {
            let e = std::io::Error::other(format!("short read: {got} of {} bytes", buf.len()));
            return View {
                bad: io_failed(w, &f.path, f.oracle.file_id(), first, n, &e),
                ..View::default()
            };
        }
        Err(e) => {
            return View {
                bad: io_failed(w, &f.path, f.oracle.file_id(), first, n, &e),
                ..View::default()
            }
        }
    }
    let mut view = View {
        pages: n,
        ..View::default()
    };
    // The pages that have a copy, read from it a run at a time (each run in one request, as
    // the source is read); a run whose read failed is reported and its pages skipped.
    let held = |k: u64| sf.is_copied(first + k) && !sf.is_lost(first + k);
    let copies = &mut bufs.copies[..buf.len()];
    let mut unread = vec![false; n as usize];
    let mut k = 0;
    while k < n {
        if !held(k) {
            k += 1;
            continue;
        }
        let start = k;
        while k < n && held(k) {
            k += 1;
        }
        let bytes = &mut copies[start as usize * PAGE_SIZE..k as usize * PAGE_SIZE];
        let (want, at) = (bytes.len(), (first + start) * PAGE_SIZE as u64);
        let read = w.timed_outside(None, OpKind::Read, want as u64, || {
            sf.storage.read_at(bytes, at)
        });
        let failed = match read {
            Ok(got) if got == want => None,
            Ok(got) => Some(std::io::Error::other(format!(
                "short read: {got} of {want} bytes"
            ))),
            Err(e) => Some(e),
        };
        match failed {
            None => view.from_copies += k - start,
            Some(e) => {
                let id = f.oracle.file_id();
                view.bad += io_failed(w, &sf.path, id, first + start, k - start, &e);
                unread[start as usize..k as usize].fill(true);
            }
        }
    }
    for k in 0..n {
        let page = first + k;
        if sf.is_lost(page) || unread[k as usize] {
            continue;
        }
        // Under the read latch when the source was read: a page with no captured state has
        // had no write since the open, and the source's state is its snapshot state.
        let state = sf.view_state(&f.oracle, page);
        let exp = Expect::known(run.files.run_id, f.oracle.file_id(), page, state);
        let at = k as usize * PAGE_SIZE;
        let (storage, bytes): (&dyn Storage, &[u8]) = if sf.is_copied(page) {
            (sf.storage.as_ref(), &copies[at..at + PAGE_SIZE])
        } else {
            (f.storage.as_ref(), &buf[at..at + PAGE_SIZE])
        };
        let verdict = verify::verify(bytes, &exp);
        if verdict.is_ok() {
            continue;
        }
        let path = if sf.is_copied(page) {
            &sf.path
        } else {
            &f.path
        };
        let what = if sf.is_copied(page) {
            "its copy in the snapshot"
        } else {
            "the source (no copy was made: no write since the snapshot began)"
        };
        let detail = format!(
            "DBCC check of the snapshot {}: page {page} read from {what} {}",
            sf.path.display(),
            verdict.describe()
        );
        evidence::report_outside(w, storage, path, &exp, verdict, bytes, Some(detail));
        view.bad += 1;
    }
    view
}
