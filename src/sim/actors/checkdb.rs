//! The DBCC User (issue #25 §2): DBCC CHECKDB against its internal database snapshot, as SQL
//! Server 2014 and later runs it. One check:
//!
//! 1. creates a sparse sibling of every data file (`NAME_MSSQL_DBCC<i>`, `SimPlan::
//!    snapshot_path`: its header page, then a hole of the source's size) and opens the
//!    snapshot: from then on every writer (checkpoint, lazy writer, recovery writer, bulk and
//!    random users, shrink's moves) captures a page's state and copies its pre-image into the
//!    sparse file before the page's first write, in its own write path (`preserve`, engine
//!    `snapshot`);
//! 2. reads the snapshot view in allocation order, `ReadAheadPages` at a time: the copy where
//!    there is one, else the source under its read latch, and checks each page against its
//!    snapshot-time state (the one its writer captured, else the source's: no write since the
//!    open), so a page written during the check is seen at the generation it had when the
//!    check began;
//! 3. closes the snapshot, then checks the sparse files: every copied page as it was copied, every
//!    other page a hole that reads as zeros, and their allocation (`st_blocks`) against the
//!    header page and the copies;
//! 4. removes the files.
//!
//! A copied page read back otherwise is a finding of its class (one that reads as zeros a lost
//! write); a hole that reads as anything but zeros is `hole_not_zeros`; a source page that does
//! not read as its snapshot-time state is a finding of its class. Each is a finding of the DBCC User on
//! the file read, with the detail naming the snapshot. The snapshot's files are never durable:
//! the journal never holds them, a crash owes nothing of them, a rerun recreates them; a check
//! with a finding keeps its files as evidence and this user checks no more (the next check would
//! write over them). The check's reads of the data files are in their statistics; its reads
//! of the snapshot files, and the writers' copies into them, in the run's totals and the
//! actors' statistics, in no file's line; none is under the throttle.

mod copy_on_write;
mod sparse;
mod view;

pub use copy_on_write::preserve;

use std::sync::Arc;
use std::time::Duration;

use super::cursor::whole_file;
use super::evidence;
use super::worker::Worker;
use crate::findings::Severity;
use crate::page::{ActorKind, PAGE_SIZE};
use crate::sim::engine::manifest::Manifest;
use crate::sim::engine::snapshot::{SnapFile, Snapshot};
use crate::sim::plan::SimPlan;
use sparse::check_sparse;
use view::{read_view, ViewBufs};

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
    let started = crate::clock::now();
    let chunk = view_chunk(chunk, run.plan.caps.read_ahead_pages);
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
            for (first, n) in view_runs(sf.pages, chunk) {
                if run.controls.stop.phase_over() {
                    stopped = true;
                    break 'files;
                }
                let view = read_view(w, sf, bufs, first, n);
                pages += view.pages;
                from_copies += view.from_copies;
                findings += view.bad;
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
            crate::clock::since(started).as_millis(),
            lines.join("; ")
        ),
    );
    findings
}

/// Pages a read of the snapshot view takes: `ReadAheadPages`, at most the generation's
/// read-ahead `cap` (64 pages, 1,024 in Enterprise edition), at least one.
pub fn view_chunk(read_ahead_pages: u32, cap: u64) -> u64 {
    u64::from(read_ahead_pages).min(cap.max(1)).max(1)
}

/// The reads of the snapshot view of a file of `pages` pages, as `(first, pages)`: every page
/// past the header once, in allocation order, `chunk` pages at a time (the last one short).
pub fn view_runs(pages: u64, chunk: u64) -> impl Iterator<Item = (u64, u64)> {
    whole_file(pages, chunk)
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

fn say(w: &Worker<'_>, severity: Severity, text: String) {
    w.run
        .message(severity, ActorKind::DbccUser.name(), FUNC, text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_of_the_view_is_read_ahead_sized_within_the_edition_cap() {
        assert_eq!(view_chunk(64, 64), 64);
        assert_eq!(
            view_chunk(1024, 64),
            64,
            "Standard caps read-ahead at 64 pages"
        );
        assert_eq!(view_chunk(1024, 1024), 1024, "Enterprise at 1,024");
        assert_eq!(view_chunk(8, 1024), 8);
        assert_eq!(view_chunk(0, 64), 1, "at least a page");
        assert_eq!(view_chunk(16, 0), 1);
    }

    #[test]
    fn the_view_is_read_every_page_once_in_order() {
        let runs = |pages: u64, chunk: u64| view_runs(pages, chunk).collect::<Vec<_>>();
        assert_eq!(runs(10, 4), vec![(1, 4), (5, 4), (9, 1)]);
        assert_eq!(runs(9, 4), vec![(1, 4), (5, 4)]);
        assert_eq!(runs(3, 64), vec![(1, 2)], "a file smaller than a read");
        assert_eq!(runs(1, 64), vec![], "the header page alone");
        assert_eq!(runs(0, 64), vec![]);
        assert_eq!(runs(4, 0), vec![(1, 1), (2, 1), (3, 1)]);
        for (pages, chunk) in [(1000, 64), (1025, 1024), (2, 1), (65, 64)] {
            let r = runs(pages, chunk);
            assert!(r.iter().all(|&(_, n)| (1..=chunk).contains(&n)));
            assert!(r.windows(2).all(|p| p[0].0 + p[0].1 == p[1].0));
            assert_eq!(r.iter().map(|&(_, n)| n).sum::<u64>(), pages - 1);
        }
    }
}
