//! The writers' side of the snapshot: the copy of a page's pre-image into every open snapshot
//! of its file before the page's first write, and the report of what the copy met.

use super::FUNC;
use crate::findings::Severity;
use crate::page::Verdict;
use crate::sim::actors::evidence;
use crate::sim::actors::worker::Worker;
use crate::sim::engine::snapshot::{CopyIo, CopyProblem};
use crate::stats::OpKind;

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
