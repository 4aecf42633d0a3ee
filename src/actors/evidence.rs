//! Turning a bad read or a failed write into a finding: re-read to tell transient from
//! persistent, then gather the evidence (expected state, headers, history, both images).

use std::path::PathBuf;

use std::time::Duration;

use super::worker::Worker;
use crate::engine::retry;
use crate::findings::{Finding, FindingClass, HistoryEntry};
use crate::page::sectors::expected_image;
use crate::page::{layout, ActorKind, ExpectedState, Verdict, PAGE_SIZE};

/// A history entry for an operation done now.
pub fn history(actor: ActorKind, op: &str, generation: u64, ok: bool) -> HistoryEntry {
    HistoryEntry { time_us: layout::now_us(), op: op.to_string(), actor, generation, ok }
}

/// Re-reads `page` up to the configured number of times (the caller still holds its latch),
/// classifies the problem and reports it.
pub fn triage_and_report(w: &mut Worker<'_>, file: usize, page: u64, first: Verdict, received: Vec<u8>) {
    let f = &w.sh.files[file];
    let exp = f.oracle.expect_page(page);
    let policy = retry::RetryPolicy { retries: w.sh.plan.read_retries, sleep: Duration::from_millis(2) };
    let out = retry::triage(f.storage.as_ref(), page * PAGE_SIZE as u64, &exp, &policy, first, &received);
    let mut finding = build(w, file, page, out.first, out.retries, out.persistent, exp.state, received);
    if let Some(image) = out.expected_image {
        finding.expected_image = Some(image);
    }
    w.sh.report(finding);
}

/// Builds the finding for `page`, with both images for the dump.
#[allow(clippy::too_many_arguments)]
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
    let f = &w.sh.files[file];
    let header = layout::read_stamp(&received);
    let gen = expected.map_or(0, ExpectedState::min_acceptable);
    let image = if gen == 0 {
        vec![0u8; PAGE_SIZE]
    } else {
        expected_image((w.sh.run_id, file as u32, page), gen, header.as_ref())
    };
    let errno = match verdict {
        Verdict::IoError { errno } => Some(errno),
        _ => None,
    };
    Finding {
        seq: 0,
        time_us: layout::now_us(),
        seed: w.sh.plan.seed,
        class: FindingClass::from_verdict(verdict.kind(), persistent),
        path: f.path.clone(),
        file_id: file as u32,
        page_id: page,
        offset: page * PAGE_SIZE as u64,
        actor: w.kind,
        actor_id: w.id,
        expected,
        verdict,
        retries,
        persistent,
        received_header: header,
        history: f.history_of(page),
        received: Some(received),
        expected_image: Some(image),
        dump: None,
        errno,
        detail: None,
    }
}

/// Reports a failed data-page write.
pub fn report_write_error(w: &mut Worker<'_>, file: usize, first: u64, n: u64, e: &std::io::Error) {
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let mut finding = build(w, file, first, Verdict::IoError { errno }, Vec::new(), true, None, Vec::new());
    finding.class = FindingClass::WriteError;
    finding.received = None;
    finding.expected_image = None;
    if n > 1 {
        finding.history.push(history(w.kind, &format!("write of {n} pages failed"), 0, false));
    }
    w.sh.report(finding);
}

/// Reports a failed log write or flush.
pub fn report_log_error(w: &mut Worker<'_>, file: usize, e: &std::io::Error) {
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let mut finding = build(w, file, 0, Verdict::IoError { errno }, Vec::new(), true, None, Vec::new());
    finding.class = FindingClass::WriteError;
    finding.received = None;
    finding.expected_image = None;
    w.sh.report(finding);
}

/// A finding about the log that is not a page read (chain broken, WAL rule broken).
pub fn log_finding(w: &Worker<'_>, file: usize, class: FindingClass, offset: u64, what: String) -> Finding {
    let f = &w.sh.files[file];
    Finding {
        seq: 0,
        time_us: layout::now_us(),
        seed: w.sh.plan.seed,
        class,
        path: PathBuf::from(&f.path),
        file_id: file as u32,
        page_id: offset / PAGE_SIZE as u64,
        offset,
        actor: w.kind,
        actor_id: w.id,
        expected: None,
        verdict: Verdict::Garbage { first_bytes: [0; 16] },
        retries: Vec::new(),
        persistent: true,
        received_header: None,
        history: Vec::new(),
        received: None,
        expected_image: None,
        dump: None,
        errno: None,
        detail: Some(what),
    }
}
