//! The DBCC User (issue #25 §2): DBCC CHECKDB against its internal database snapshot, as SQL
//! Server 2014 and later runs it. One check:
//!
//! 1. creates a sparse sibling of every data file (`NAME_MSSQL_DBCC<i>`, `SimPlan::
//!    snapshot_path`: its header page, then a hole of the source's size) and opens the
//!    snapshot: from then on every writer (checkpoint, lazy writer, recovery writer, bulk and
//!    random users, shrink's moves) copies a page's pre-image into the sparse file before the
//!    page's first write, in its own write path (`preserve`, engine `snapshot`);
//! 2. captures every page's state at that point in time;
//! 3. reads the snapshot view in allocation order, `ReadAheadPages` at a time: the copy where
//!    there is one, else the source, and checks each page against its snapshot-time state, so
//!    a page written during the check is seen at the generation it had when the check began;
//! 4. closes the snapshot, then checks the sparse files: every copied page as it was copied, every
//!    other page a hole that reads as zeros, and their allocation (`st_blocks`) against the
//!    header page and the copies;
//! 5. removes the files.
//!
//! A copied page read back otherwise is a finding of its class (one that reads as zeros a lost
//! write); a hole that reads as anything but zeros is `hole_not_zeros`; a source page seen at a
//! generation other than its snapshot-time one is a finding of its class (newer: a write that
//! reached the source without its pre-image being kept). Each is a finding of the DBCC User on
//! the file read, with the detail naming the snapshot. The snapshot's files are never durable:
//! the journal never holds them, a crash owes nothing of them, a rerun recreates them; a check
//! with a finding keeps its files as evidence and this user checks no more (the next check would
//! write over them). The check's reads of the data files are in their statistics; its reads
//! of the snapshot files, and the writers' copies into them, in the run's totals and the
//! actors' statistics, in no file's line; none is under the throttle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::evidence;
use super::worker::Worker;
use crate::findings::{FindingClass, Severity};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, ActorKind, Expect, Verdict, PAGE_SIZE};
use crate::sim::engine::manifest::Manifest;
use crate::sim::engine::snapshot::{CopyIo, CopyProblem, SnapFile, Snapshot};
use crate::sim::plan::SimPlan;
use crate::stats::OpKind;

/// Each DBCC User's snapshot of each data file: scratch.
pub fn owns(plan: &SimPlan, m: &mut Manifest) {
    for i in 0..plan.sections.check_db.user_count as usize {
        for f in plan.data_files() {
            m.scratch(plan.snapshot_path(f, i));
        }
    }
}

/// The `Func` of the DBCC User's log lines.
const FUNC: &str = "DbccUser::CheckDb";
/// Pages captured per latch taken.
const CAPTURE_PAGES: u64 = 256;

/// Runs DBCC User `i` until the phase ends.
pub fn run(w: &mut Worker<'_>, i: usize) {
    let s = w.run.plan.sections.check_db.clone();
    let mut checks = 0u64;
    while !w.run.controls.stop.phase_over() {
        let Some(snapshot) = open(w, i) else { return };
        let found = check(w, &snapshot, s.read_ahead_pages, s.read_delay_ms);
        checks += 1;
        if found > 0 {
            say(
                w,
                Severity::Info,
                format!("dbcc user {}: {found} finding(s) in check {checks}: the snapshot's files are kept as evidence and this user checks no more", w.id),
            );
            return;
        }
        if !w.pause(Duration::from_millis(u64::from(s.check_delay_ms))) {
            break;
        }
    }
}

/// Creates the sparse files and opens the snapshot; `None` (said) when a file cannot be made.
fn open(w: &Worker<'_>, i: usize) -> Option<Arc<Snapshot>> {
    let run = w.run;
    let mut files = Vec::new();
    // Each file's size held shared until the snapshot is open: a shrink truncates under it
    // alone and then sees the snapshot (and does not truncate), or truncated before the size
    // was read here.
    let mut sizes = Vec::new();
    for &file in &run.files.data {
        let f = &run.files[file];
        let path = run.plan.snapshot_path(file, i);
        let size = f.pages.read();
        let made = run.create_sparse(&path, f.oracle.file_id() | SNAP_ID, *size);
        match made {
            Ok(storage) => {
                files.push(SnapFile::new(file, path, storage, *size));
                sizes.push(size);
            }
            Err(e) => {
                say(
                    w,
                    Severity::Error,
                    format!(
                        "cannot create the snapshot file {}: {e}; this DBCC user does not run",
                        path.display()
                    ),
                );
                for made in &files {
                    let _ = run.backend.remove(&made.path);
                }
                return None;
            }
        }
    }
    let snapshot = Arc::new(Snapshot { owner: w.id, files });
    run.files.snapshots.open(snapshot.clone());
    drop(sizes);
    Some(snapshot)
}

/// The high bits of a sparse file's header file id (its pages carry the source's identity).
const SNAP_ID: u32 = 0x6000;

/// One check of the open snapshot; returns the findings. The snapshot is closed and its files
/// removed (kept when a finding was made).
fn check(w: &mut Worker<'_>, snapshot: &Arc<Snapshot>, chunk: u32, delay_ms: u32) -> u64 {
    let run = w.run;
    let started = Instant::now();
    for sf in &snapshot.files {
        capture(w, sf);
    }
    let chunk = u64::from(chunk)
        .min(run.plan.caps.read_ahead_pages.max(1))
        .max(1);
    let mut findings = 0;
    let (mut pages, mut from_copies) = (0, 0);
    let mut stopped = false;
    // The check's two buffers (a run of the view, and its pages' copies), made once: without
    // them the view is not read, and the log says so as our error, not the device's.
    let mut bufs = match ViewBufs::new(chunk) {
        Ok(b) => Some(b),
        Err(e) => {
            say(
                w,
                Severity::Error,
                format!(
                    "dbcc user {}: cannot allocate the check's buffers ({} bytes): {e}; the snapshot view is not read this time (not a finding of the device)",
                    w.id,
                    2 * chunk as usize * PAGE_SIZE
                ),
            );
            None
        }
    };
    if let Some(bufs) = bufs.as_mut() {
        'files: for sf in &snapshot.files {
            let mut first = 1;
            while first < sf.pages {
                if run.controls.stop.phase_over() {
                    stopped = true;
                    break 'files;
                }
                let n = chunk.min(sf.pages - first);
                let view = read_view(w, sf, bufs, first, n);
                pages += view.pages;
                from_copies += view.from_copies;
                findings += view.bad;
                first += n;
                if !w.pause(Duration::from_millis(u64::from(delay_ms))) {
                    stopped = true;
                    break 'files;
                }
            }
        }
    }
    run.files.snapshots.close(snapshot);
    let mut lines = Vec::new();
    for sf in &snapshot.files {
        let (bad, line) = check_sparse(w, sf);
        findings += bad;
        lines.push(line);
    }
    let end = if findings > 0 {
        format!("{findings} finding(s); the snapshot's files are kept as evidence")
    } else {
        let removed: Vec<String> = snapshot
            .files
            .iter()
            .filter_map(|sf| run.backend.remove(&sf.path).err().map(|e| e.to_string()))
            .collect();
        match removed.is_empty() {
            true => String::from("clean; the snapshot's files are removed"),
            false => format!("clean; files could not be removed: {}", removed.join("; ")),
        }
    };
    say(
        w,
        Severity::Info,
        format!(
            "dbcc user {}: check{} read {pages} pages of the snapshot view ({from_copies} from their copies) in {} ms; {}: {end}",
            w.id,
            if stopped { " (ended by the end of the phase)" } else { "" },
            started.elapsed().as_millis(),
            lines.join("; ")
        ),
    );
    findings
}

/// Captures every page's state at the snapshot's point in time (a page a writer reached first
/// was captured by it).
fn capture(w: &Worker<'_>, sf: &SnapFile) {
    let f = &w.run.files[sf.file];
    let mut first = 1;
    while first < sf.pages {
        let n = CAPTURE_PAGES.min(sf.pages - first);
        let _latch = f.oracle.read_latch_range(first, n);
        for p in first..first + n {
            sf.capture(p, f.oracle.expected_state(p));
        }
        first += n;
    }
}

/// What one read of the snapshot view found.
#[derive(Debug, Default)]
struct View {
    /// Pages read and checked.
    pages: u64,
    /// Of those, pages read from their copies.
    from_copies: u64,
    /// Findings.
    bad: u64,
}

/// The check's buffers: a run of the snapshot view as read from the data file, and the copies
/// of its pages read from the sparse file, `chunk` pages each.
struct ViewBufs {
    read: AlignedBuf,
    copies: AlignedBuf,
}

impl ViewBufs {
    fn new(chunk: u64) -> std::io::Result<ViewBufs> {
        let len = chunk as usize * PAGE_SIZE;
        Ok(ViewBufs {
            read: AlignedBuf::new(len)?,
            copies: AlignedBuf::new(len)?,
        })
    }
}

/// Reads `n` pages (at most the buffers' chunk) of the snapshot view from `first` and checks
/// each against its snapshot state.
fn read_view(w: &mut Worker<'_>, sf: &SnapFile, bufs: &mut ViewBufs, first: u64, n: u64) -> View {
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
        let Some(exp) = sf.expect(run.files.run_id, f.oracle.file_id(), page) else {
            continue;
        };
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

/// Checks the sparse file once the snapshot is closed: each copied page as copied, each other
/// page a hole of zeros, and its allocation. Returns the findings and the file's summary.
fn check_sparse(w: &mut Worker<'_>, sf: &SnapFile) -> (u64, String) {
    let run = w.run;
    let file_id = run.files[sf.file].oracle.file_id();
    let chunk = 256u64;
    let mut bad = 0;
    let mut holes = 0u64;
    let mut buf = match AlignedBuf::new(chunk as usize * PAGE_SIZE) {
        Ok(b) => b,
        Err(e) => {
            say(
                w,
                Severity::Error,
                format!(
                    "dbcc user {}: cannot allocate the buffer ({} bytes) to check the sparse file {}: {e}; it is not checked this time (not a finding of the device)",
                    w.id,
                    chunk as usize * PAGE_SIZE,
                    sf.path.display()
                ),
            );
            return (0, format!("{}: not checked (no buffer)", sf.path.display()));
        }
    };
    let mut first = 1;
    while first < sf.pages {
        let n = chunk.min(sf.pages - first);
        let len = n as usize * PAGE_SIZE;
        let at = first * PAGE_SIZE as u64;
        let read = w.timed_outside(None, OpKind::Read, len as u64, || {
            sf.storage.read_at(&mut buf[..len], at)
        });
        match read {
            Ok(got) if got == len => {}
            Ok(got) => {
                let e = std::io::Error::other(format!("short read: {got} of {len} bytes"));
                bad += io_failed(w, &sf.path, file_id, first, n, &e);
                first += n;
                continue;
            }
            Err(e) => {
                bad += io_failed(w, &sf.path, file_id, first, n, &e);
                first += n;
                continue;
            }
        }
        for k in 0..n {
            let page = first + k;
            let bytes = &buf[k as usize * PAGE_SIZE..(k as usize + 1) * PAGE_SIZE];
            if sf.is_lost(page) {
                continue;
            }
            if sf.is_copied(page) {
                let Some(exp) = sf.expect(run.files.run_id, file_id, page) else {
                    continue;
                };
                let verdict = verify::verify(bytes, &exp);
                if !verdict.is_ok() {
                    let detail = format!(
                        "page {page} copied into the snapshot before its first write during the check read back {}",
                        verdict.describe()
                    );
                    let storage = sf.storage.clone();
                    evidence::report_outside(
                        w,
                        storage.as_ref(),
                        &sf.path,
                        &exp,
                        verdict,
                        bytes,
                        Some(detail),
                    );
                    bad += 1;
                }
            } else {
                holes += 1;
                if bytes.iter().any(|&b| b != 0) {
                    bad += 1;
                    report_hole(w, sf, file_id, page, bytes);
                }
            }
        }
        first += n;
    }
    let copied = sf.copied();
    let held = sf.storage.allocated();
    let owed = (copied + 1) * PAGE_SIZE as u64;
    let allocation = match held {
        Some(h) => {
            if h > owed + ALLOCATION_SLACK {
                say(
                    w,
                    Severity::Warning,
                    format!(
                        "the snapshot file {} holds {} KB where its header page and {copied} copied pages need {} KB: the filesystem keeps less of it sparse than it could (not a finding of the device)",
                        sf.path.display(),
                        h / 1024,
                        owed / 1024
                    ),
                );
            }
            format!(
                "holds {} KB for its header and {copied} copied pages ({} KB)",
                h / 1024,
                owed / 1024
            )
        }
        None => format!("{copied} copied pages (its allocation is not known here)"),
    };
    let line = format!(
        "{}: {copied} pages copied on write in {} writes, {holes} holes read as zeros, {allocation}",
        sf.path.display(),
        sf.copy_writes()
    );
    (bad, line)
}

/// What a filesystem may hold past the bytes written before a sparse file's allocation is
/// worth a warning: 64 KB (one extent of speculative allocation, a metadata block).
const ALLOCATION_SLACK: u64 = 64 * 1024;

/// Reports a hole of the sparse file that does not read as zeros.
fn report_hole(w: &Worker<'_>, sf: &SnapFile, file_id: u32, page: u64, bytes: &[u8]) {
    let verdict = verify::verify(
        bytes,
        &Expect::known(
            w.run.files.run_id,
            file_id,
            page,
            crate::page::ExpectedState::NeverWritten,
        ),
    );
    let at = bytes.iter().position(|&b| b != 0).unwrap_or(0);
    let mut f = w.page_finding(&sf.path, file_id, page, verdict);
    f.class = FindingClass::HoleNotZeros;
    f.expected = Some(crate::page::ExpectedState::NeverWritten);
    f.received_header = crate::page::layout::read_stamp(bytes);
    f.received = Some(bytes.to_vec());
    f.detail = Some(format!(
        "page {page} of the snapshot file was never written (a hole) but reads as non-zero bytes from byte {at} of the page"
    ));
    w.run.report(f);
}

/// A request of the check that failed: the device's failure (EIO and its kin) is a
/// `read_error` finding of the DBCC User at the request's first page; one the platform refused
/// for how it was made is said, and no finding. Returns the findings made.
fn io_failed(
    w: &Worker<'_>,
    path: &std::path::Path,
    file_id: u32,
    first: u64,
    n: u64,
    e: &std::io::Error,
) -> u64 {
    let detail = format!("DBCC check: read of {n} pages from page {first} failed: {e}");
    match evidence::outside_failure(w, path, file_id, (first, n), false, e, Some(detail)) {
        Some(f) => {
            w.run.report(f);
            1
        }
        None => {
            say(
                w,
                Severity::Error,
                format!(
                    "a read of {n} pages at page {first} of {} failed: {e}; not an integrity finding (the platform refused the request)",
                    path.display()
                ),
            );
            0
        }
    }
}

/// The copy-on-write of a writer: before its write of `[first, first + n)` of data file
/// `file`, under that range's write latch, every open snapshot of the file keeps the pages'
/// pre-images. What it meets is reported by the writer: a source page that is not as the
/// oracle expects as any bad read is, a failed copy as a write error on the snapshot file.
pub fn preserve(w: &mut Worker<'_>, file: usize, first: u64, n: u64) {
    let run = w.run;
    let open = run.files.snapshots.on(file);
    for snapshot in open {
        let Some(sf) = snapshot.of(file) else {
            continue;
        };
        let f = &run.files[file];
        let (kind, stats) = (w.kind, &mut w.stats);
        let mut on_io = |io: CopyIo| {
            let op = if io.write {
                OpKind::Write
            } else {
                OpKind::Read
            };
            match (io.write, io.ok) {
                (false, true) => stats.record(file, kind, op, io.bytes, io.latency_ns),
                (false, false) => stats.record_error(file, kind, op),
                (true, true) => stats.record_scratch(kind, op, io.bytes, io.latency_ns),
                (true, false) => stats.record_scratch_error(kind, op),
            }
        };
        let problems = sf.preserve(f.storage.as_ref(), &f.oracle, first, n, &mut on_io);
        for problem in problems {
            match problem {
                CopyProblem::BadSource {
                    page,
                    verdict,
                    received,
                } => evidence::triage_and_report(w, file, page, verdict, received),
                CopyProblem::SourceRead { first, n, error } => {
                    let v = Verdict::IoError {
                        errno: error.raw_os_error().unwrap_or(libc::EIO),
                    };
                    evidence::report_request(w, file, first, n, v, true);
                }
                CopyProblem::CopyWrite {
                    path,
                    first,
                    n,
                    error,
                } => copy_failed(w, &path, f.oracle.file_id(), first, n, &error),
            }
        }
    }
}

/// A failed write of pre-images into a snapshot file: the device's failure is a
/// `write_error` finding of the writer on the snapshot file; the platform's refusal is said.
fn copy_failed(
    w: &Worker<'_>,
    path: &std::path::Path,
    file_id: u32,
    first: u64,
    n: u64,
    e: &std::io::Error,
) {
    let detail =
        format!("copy-on-write of {n} pages from page {first} into the DBCC snapshot failed: {e}");
    match evidence::outside_failure(w, path, file_id, (first, n), true, e, Some(detail)) {
        Some(f) => w.run.report(f),
        None => w.run.message(
            Severity::Error,
            w.kind.name(),
            FUNC,
            format!(
                "the copy of {n} pages from page {first} into the snapshot file {} failed: {e}; not an integrity finding (the platform refused the request, or no space); the check will not read those pages",
                path.display()
            ),
        ),
    }
}

fn say(w: &Worker<'_>, severity: Severity, text: String) {
    w.run
        .message(severity, ActorKind::DbccUser.name(), FUNC, text);
}
