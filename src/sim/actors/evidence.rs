//! Turning a bad read or a failed write into a finding: re-read to tell transient from
//! persistent, then gather the evidence (expected state, headers, history, both images).
//! A failed request that is not the device's fault is handed to [`super::failure`] first and
//! never becomes a finding.

use super::failure;
use super::worker::Worker;
use crate::findings::{Finding, FindingClass, HistoryEntry};
use crate::page::{layout, ActorKind, ExpectedState, Verdict, PAGE_SIZE};
use crate::sim::engine::retry;

/// A history entry for an operation done now.
pub fn history(actor: ActorKind, op: &str, generation: u64, ok: bool) -> HistoryEntry {
    HistoryEntry {
        time_us: layout::now_us(),
        op: op.to_string(),
        actor,
        generation,
        ok,
    }
}

/// Re-reads `page` up to the configured number of times (the caller still holds its latch),
/// classifies the problem and reports it.
pub fn triage_and_report(
    w: &mut Worker<'_>,
    file: usize,
    page: u64,
    first: Verdict,
    received: Vec<u8>,
) {
    let run = w.run;
    if let Verdict::IoError { errno } = first {
        if failure::handled_errno(run, file, page * PAGE_SIZE as u64, PAGE_SIZE as u64, errno) {
            return;
        }
    }
    // Another reader may be triaging the same page right now: wait for it, so a persistent
    // problem it reports is seen as already reported here.
    let _triage = run.reporting.triage.lock(page);
    let f = &run.files[file];
    let exp = f.oracle.expect_page(page);
    if f.already_reported(page, exp.state) {
        // A persistent problem already reported for this page and this expected content:
        // every later read would report it again and flood the log.
        return;
    }
    let policy = retry::RetryPolicy::live(&w.run.plan);
    let out = retry::triage(
        f.storage.as_ref(),
        page * PAGE_SIZE as u64,
        &exp,
        &policy,
        first,
        &received,
    );
    let mut finding = build(
        w,
        file,
        page,
        out.first,
        out.retries,
        out.persistent,
        exp.state,
        received,
    );
    finding.expected_image = out.expected_image;
    if finding.persistent {
        f.mark_reported(page, exp.state);
    }
    w.run.report(finding);
}

/// Reports a bad page read from a file outside the set (a DBCC snapshot's view or copy, a Sort
/// User's tempdb file), re-read as every bad read is, so a read right on a retry is transient
/// (a stale read, not a lost write). `exp` names the page and what it must hold; `detail` says
/// where it was read.
pub fn report_outside(
    w: &Worker<'_>,
    storage: &dyn crate::io::Storage,
    path: &std::path::Path,
    exp: &crate::page::Expect,
    verdict: Verdict,
    bytes: &[u8],
    detail: Option<String>,
) {
    let policy = retry::RetryPolicy::live(&w.run.plan);
    let offset = exp.page_id * PAGE_SIZE as u64;
    let out = retry::triage(storage, offset, exp, &policy, verdict, bytes);
    let mut f = w.page_finding(path, exp.file_id, exp.page_id, out.first);
    f.class = FindingClass::from_verdict(f.verdict.kind(), out.persistent);
    f.expected = exp.state;
    f.retries = out.retries;
    f.persistent = out.persistent;
    f.received_header = layout::read_stamp(bytes);
    f.received = out.received;
    f.expected_image = out.expected_image;
    f.detail = detail;
    w.run.report(f);
}

/// A request of `n` pages from `first` of a file outside the set (`path`, file id `file_id`)
/// that failed with `e`. The device's failure (EIO and its kin, as `io::oserr` tells them) is a
/// `read_error` or `write_error` finding of this worker at the request's first page, with
/// `detail`, returned for the caller to report; a request the platform refused for how it was
/// made, or a condition such as no space, is no finding of the device (`None`: the caller says
/// so in the log).
pub fn outside_failure(
    w: &Worker<'_>,
    path: &std::path::Path,
    file_id: u32,
    (first, n): (u64, u64),
    write: bool,
    e: &std::io::Error,
    detail: Option<String>,
) -> Option<Finding> {
    if e.raw_os_error().is_some() && !crate::io::oserr::classify(e).is_finding() {
        return None;
    }
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let mut f = w.page_finding(path, file_id, first, Verdict::IoError { errno });
    f.class = if write {
        FindingClass::WriteError
    } else {
        FindingClass::ReadError
    };
    f.errno = Some(errno);
    f.page_count = u32::try_from(n).unwrap_or(u32::MAX);
    f.detail = detail;
    Some(f)
}

/// A finding about `page` of `file` by this worker, under the run's seed.
fn page_finding(w: &Worker<'_>, file: usize, page: u64, verdict: Verdict) -> Finding {
    w.page_finding(&w.run.files[file].path, file as u32, page, verdict)
}

/// Builds the finding for `page`; `received` (empty when no bytes were read) is kept for the
/// dump, and the caller adds the expected image it has (triage regenerates it).
#[expect(
    clippy::too_many_arguments,
    reason = "what a finding is made of, from the worker, the read and the triage; called from two places"
)]
pub fn build(
    w: &Worker<'_>,
    file: usize,
    page: u64,
    verdict: Verdict,
    retries: Vec<Verdict>,
    persistent: bool,
    expected: Option<ExpectedState>,
    received: Vec<u8>,
) -> Finding {
    let f = &w.run.files[file];
    let header = layout::read_stamp(&received);
    let mut finding = page_finding(w, file, page, verdict);
    finding.class = FindingClass::from_verdict(finding.verdict.kind(), persistent);
    finding.expected = expected;
    finding.retries = retries;
    finding.persistent = persistent;
    finding.received_header = header;
    finding.history = f.history_of(page);
    finding.received = (!received.is_empty()).then_some(received);
    // A torn write on a device of sectors larger than 512 bytes is told in its sectors.
    finding.detail = finding.verdict.device_detail(f.sector_size);
    finding
}

/// Reports a multi-page read request that failed as a whole (I/O error or short transfer);
/// `persistent` when some page was still bad when read alone.
pub fn report_request(
    w: &mut Worker<'_>,
    file: usize,
    first: u64,
    n: u64,
    v: Verdict,
    persistent: bool,
) {
    if let Verdict::IoError { errno } = v {
        let (off, len) = (first * PAGE_SIZE as u64, n * PAGE_SIZE as u64);
        if failure::handled_errno(w.run, file, off, len, errno) {
            return;
        }
    }
    let what = format!(
        "read of {n} pages from page {first} failed as a whole: {}; each page read alone: {}",
        v.describe(),
        if persistent {
            "some still bad"
        } else {
            "all right"
        }
    );
    let mut finding = build(w, file, first, v, Vec::new(), persistent, None, Vec::new());
    finding.page_count = n as u32;
    finding.detail = Some(what);
    w.run.report(finding);
}

/// Reports a failed write: `n` data pages from `first`, or (n = 0) a log write or flush, or a
/// resize.
pub fn report_write_error(w: &mut Worker<'_>, file: usize, first: u64, n: u64, e: &std::io::Error) {
    let failed = failure::Failed {
        file,
        what: if n > 0 { "write" } else { "log write or flush" },
        offset: (n > 0).then_some(first * PAGE_SIZE as u64),
        len: n * PAGE_SIZE as u64,
        error: e,
    };
    if failure::handled(w.run, &failed) {
        return;
    }
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let mut finding = build(
        w,
        file,
        first,
        Verdict::IoError { errno },
        Vec::new(),
        true,
        None,
        Vec::new(),
    );
    finding.class = FindingClass::WriteError;
    if n > 0 {
        finding.page_count = n as u32;
        finding.detail = Some(format!("write of {n} pages from page {first} failed: {e}"));
    }
    w.run.report(finding);
}

/// A finding about the log that is not a page read (chain broken, WAL rule broken).
pub fn log_finding(
    w: &Worker<'_>,
    file: usize,
    class: FindingClass,
    offset: u64,
    what: String,
) -> Finding {
    let page = offset / PAGE_SIZE as u64;
    let verdict = Verdict::Garbage {
        first_bytes: [0; 16],
    };
    let mut finding = page_finding(w, file, page, verdict);
    finding.class = class;
    finding.offset = offset;
    finding.detail = Some(what);
    finding
}
