//! What happens to an asynchronous actor's request at its ends (see `flight.rs`): the pages
//! stamped into its frames before it is posted, and on completion the write's outcome given to
//! the oracle, or the read's pages verified — with the request's latches still held.

use super::evidence;
use super::worker::Worker;
use crate::io::Frame;
use crate::page::{layout, PageStamp, Verdict, PAGE_SIZE};
use crate::sim::engine::retry;

/// The pages of a completed request.
pub(super) struct PageRequest<'f> {
    /// Data file index.
    pub file: usize,
    /// First page.
    pub first: u64,
    /// Pages.
    pub n: u64,
    /// Generations written (empty for a read).
    pub gens: &'f [u64],
    /// The request's frames, one page each, as its completion handed them back (none when a
    /// failed ring leaked them).
    pub frames: &'f [Frame],
}

/// Stamps generation `gens[i]` of page `first + i` into frame `i`.
pub(super) fn stamp(
    w: &Worker<'_>,
    frames: &mut [Frame],
    file: usize,
    first: u64,
    gens: &[u64],
    lsn: u64,
) {
    let now = layout::now_us();
    for (i, (fr, g)) in frames.iter_mut().zip(gens).enumerate() {
        let st = PageStamp {
            run_id: w.run.files.run_id,
            file_id: file as u32,
            page_id: first + i as u64,
            generation: *g,
            lsn,
            writer_kind: w.kind,
            writer_id: w.id,
            write_time_us: now,
        };
        layout::stamp_page(&mut fr[..PAGE_SIZE], &st);
    }
}

/// The oracle learns a completed write's outcome; returns the pages written.
pub(super) fn finish_write(
    w: &mut Worker<'_>,
    p: &PageRequest<'_>,
    result: std::io::Result<usize>,
) -> u64 {
    let run = w.run;
    let f = &run.files[p.file];
    let ok = result.is_ok();
    for (i, g) in p.gens.iter().enumerate() {
        let page = p.first + i as u64;
        f.oracle.complete_write(page, *g, ok);
        f.remember(page, evidence::history(w.kind, "write", *g, ok));
    }
    match result {
        Err(e) => {
            evidence::report_write_error(w, p.file, p.first, p.n, &e);
            0
        }
        // The journal heard of it as it completed (`journaling::acks`).
        Ok(_) => p.n,
    }
}

/// The transfer problem of a completed read, as `worker::request_problem` finds it in one
/// buffer: an error, fewer bytes than asked, or a sector left untouched.
fn frames_problem(result: &std::io::Result<usize>, frames: &[Frame], n: u64) -> Option<Verdict> {
    let bytes = n as usize * PAGE_SIZE;
    match result {
        Err(e) => Some(Verdict::IoError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        }),
        Ok(got) if *got < bytes => Some(Verdict::ShortRead { bytes: *got as u32 }),
        Ok(_) => frames.iter().enumerate().find_map(|(i, fr)| {
            retry::bytes_not_read(&fr[..PAGE_SIZE]).map(|at| Verdict::ShortRead {
                bytes: (i * PAGE_SIZE + at) as u32,
            })
        }),
    }
}

/// Verifies a completed read's pages (the request's latches still held); returns the pages
/// read and verified.
pub(super) fn verify_read(
    w: &mut Worker<'_>,
    p: &PageRequest<'_>,
    result: std::io::Result<usize>,
) -> u64 {
    let transfer = frames_problem(&result, p.frames, p.n);
    if let (Some(v), true) = (&transfer, p.n > 1) {
        // The request as a whole failed: say so once, then judge each page on its own read.
        let out = w.reread_singly(p.file, p.first, p.n);
        evidence::report_request(w, p.file, p.first, p.n, v.clone(), out.bad > 0);
        return out.pages;
    }
    for i in 0..p.n as usize {
        let page = p.first + i as u64;
        // No frame only when a ring that failed leaked them: the transfer error says so.
        let bytes = p.frames.get(i).map_or(&[][..], |fr| &fr[..PAGE_SIZE]);
        let verdict = match &transfer {
            Some(v) => v.clone(),
            None => w.check_bytes(p.file, bytes, page),
        };
        if !verdict.is_ok() {
            evidence::triage_and_report(w, p.file, page, verdict, bytes.to_vec());
        }
    }
    p.n
}
