//! The check of a sparse file once its snapshot is closed: every copied page as it was
//! copied, every other page a hole that reads as zeros, and the file's allocation against its
//! header page and copies.

use super::{io_failed, say};
use crate::findings::{FindingClass, Severity};
use crate::io::align::AlignedBuf;
use crate::page::{verify, Expect, PAGE_SIZE};
use crate::sim::actors::evidence;
use crate::sim::actors::worker::Worker;
use crate::sim::engine::snapshot::SnapFile;
use crate::stats::OpKind;

/// Checks the sparse file once the snapshot is closed: each copied page as copied, each other
/// page a hole of zeros, and its allocation. Returns the findings and the file's summary.
pub(super) fn check_sparse(w: &mut Worker<'_>, sf: &SnapFile) -> (u64, String) {
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
