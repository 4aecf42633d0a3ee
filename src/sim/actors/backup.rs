//! BackupUser (issue #25 §1): `BACKUP DATABASE … WITH CHECKSUM` while the other users run,
//! then `RESTORE VERIFYONLY`.
//!
//! Each backup reads every page of every data file in order, MaxTransferSize at a time with
//! BufferCount reads in flight (the flight: each read holds its pages' latches shared, so the
//! pages it returns are whole versions, and is verified against the oracle as it completes — a
//! bad page is a finding of the Backup User). The pages read go, in file order (a read that
//! completes before one posted earlier waits for it, `InOrder`: at most BufferCount reads are
//! held), into a backup stream of self-describing blocks written sequentially
//! (`engine::backup`), so that a restore writes each file in order, as SQL Server's; opened
//! through the run's backend (so the faulty twin reaches it and a planted link is refused).
//! A page another user writes after the backup read it is not read again: the stream holds the
//! version read, as SQL Server's backup does (its log backup covers the rest). As STOP_ON_ERROR
//! does, a page that fails its own checksum, or a read that fails, ends the backup (the stream
//! in progress stays without its end block: an unfinished backup). A backup is written to the
//! stream's name and `.partial`, and renamed over the stream once finished and durable, so the
//! stream always holds the last finished backup: one that does not finish, a kill during it
//! included, never destroys the one before (in a resumed run, the one that holds a page as
//! it was before the device damaged it). After a finished backup, the
//! verify-only pass reads the stream back and checks every block and page against what was
//! written; what it finds is a `backup_corruption` finding.

use std::sync::Arc;

use super::context::Run;
use super::cursor::whole_file;
use super::outstanding::{After, Kept, Outstanding};
mod in_order;

use in_order::InOrder;

use super::stream_failure::{say, say_of_finding};
use super::stream_failure::{stream_failed_on, unreadable};
use super::worker::Worker;
use crate::findings::{Finding, Severity};
use crate::io::Storage;
use crate::page::{layout, sectors, verify, Expect, ExpectedState, Verdict, PAGE_SIZE};
use crate::sim::engine::backup::scan::{scan, StreamProblem};
use crate::sim::engine::backup::writer::{StreamWriter, Written};
use crate::sim::engine::backup::Carried;
use crate::sim::engine::journal::BackupRecord;
use crate::sim::engine::manifest::{Keep, Manifest, Role, Rule};
use crate::sim::plan::SimPlan;

/// The Backup User's files: the finished stream (owed whole once journaled) and the name a
/// backup in progress is written under, both evidence a rerun keeps; the log backups' and the
/// restore's.
pub fn owns(plan: &SimPlan, m: &mut Manifest) {
    let b = &plan.backup;
    let rule = Rule::Stream { log: false };
    m.add(
        b.file.clone(),
        Role::Stream { log: false },
        true,
        Keep::Always,
        rule,
    );
    m.add(
        b.partial(),
        Role::Partial { log: false },
        false,
        Keep::Always,
        rule,
    );
    super::log_backup::owns(plan, m);
    super::restore::owns(plan, m);
}

/// The BackupUser: one backup after another, `BackupDelay` apart, until the phase ends.
pub fn run(w: &mut Worker<'_>) {
    let mut backup_no = 0u64;
    let mut restoring = w.run.plan.backup.restore;
    while !w.run.controls.stop.phase_over() {
        backup_no += 1;
        if let Some((storage, written)) = backup(w, backup_no) {
            if w.run.plan.backup.verify_only {
                verify_only(w, storage.as_ref(), &written);
            }
            if restoring && super::restore::restore(w, storage.as_ref(), &written, backup_no) {
                // The copies kept are evidence: the next restore would write over them.
                restoring = false;
                say(
                    w.run,
                    Severity::Info,
                    String::from("no further restores in this run: the copies kept are evidence"),
                );
            }
        }
        if !w.pause(w.run.plan.backup.delay) {
            break;
        }
    }
}

/// One full backup; the stream and what was written into it, or `None` when it did not
/// finish (stopped, a page or read failed, the stream could not be written).
fn backup(w: &mut Worker<'_>, backup_no: u64) -> Option<(Arc<dyn Storage>, Written)> {
    let run = w.run;
    let plan = &run.plan.backup;
    let started = crate::clock::now();
    let storage = open_stream(run)
        .map_err(|e| say(run, Severity::Error, e))
        .ok()?;
    let mut out = StreamWriter::new(
        Arc::clone(&storage),
        plan.transfer_pages as usize,
        run.files.run_id,
        backup_no,
    )
    .map_err(|e| stream_failed(w, "empty", None, &e))
    .ok()?;
    let mut flight = Outstanding::with_depth(run, plan.buffer_count);
    let mut order = InOrder::default();
    let finished = read_files(w, &mut flight, &mut out, &mut order);
    flight.drain(w);
    let finished =
        carry(w, &mut flight, &mut out, &mut order, finished) && finished && order.is_empty();
    if !finished {
        unfinished(run, backup_no);
        return None;
    }
    let at = out.position();
    let written = out
        .finish()
        .map_err(|e| stream_failed(w, "write and flush", Some(at), &e))
        .ok()?;
    // Finished and durable: only now does it replace the last finished backup.
    run.backend
        .rename(&plan.partial(), &plan.file)
        .map_err(|e| say(run, Severity::Error, format!("backup {backup_no}: {e}")))
        .ok()?;
    super::journaling::backup_finished(
        run,
        BackupRecord::finished(
            false,
            backup_no,
            &written.crcs,
            written.bytes,
            plan.file.clone(),
        ),
    );
    say(
        run,
        Severity::Info,
        format!(
            "backup {backup_no}: {} pages of {} data files in {} blocks, {} bytes to {} in {} ms (MaxTransferSize {} KB, BufferCount {})",
            written.pages.len(),
            run.files.data.len(),
            written.crcs.len(),
            written.bytes,
            plan.file.display(),
            crate::clock::since(started).as_millis(),
            plan.transfer_pages * PAGE_SIZE as u64 / 1024,
            plan.buffer_count,
        ),
    );
    Some((storage, written))
}

/// Posts the reads of every data page in order; false when the backup must end early.
fn read_files<'a>(
    w: &mut Worker<'a>,
    flight: &mut Outstanding<'a>,
    out: &mut StreamWriter,
    order: &mut InOrder,
) -> bool {
    let run = w.run;
    let step = run.plan.backup.transfer_pages.max(1);
    for &file in &run.files.data {
        // Recursive: our own reads in flight hold the size shared.
        let pages = *run.files[file].pages.read_recursive();
        for (page, n) in whole_file(pages, step) {
            if run.controls.stop.phase_over() {
                return false;
            }
            order.post(file, page, n);
            flight.read(w, file, page, n, After::Keep);
            if !carry(w, flight, out, order, true) {
                return false;
            }
        }
    }
    true
}

/// Moves the completed reads into the stream, in posting order (a read completed ahead of an
/// earlier one waits in `order`); false when one failed (the flight reported it) or carries a
/// page that fails its own check, or the stream refused a write.
fn carry<'a>(
    w: &mut Worker<'a>,
    flight: &mut Outstanding<'a>,
    out: &mut StreamWriter,
    order: &mut InOrder,
    go: bool,
) -> bool {
    let run = w.run;
    let mut ok = go;
    for Kept { file, first, bytes } in flight.take_kept() {
        ok &= !bytes.is_empty();
        order.complete(file, first, bytes);
    }
    if !ok {
        return false;
    }
    while let Some((file, first, bytes)) = order.next_ready() {
        for (i, page) in bytes.chunks_exact(PAGE_SIZE).enumerate() {
            let c = match carried(run, file, first + i as u64, page) {
                Ok(c) => c,
                Err(v) => {
                    // The flight that read the page reported it as a finding.
                    say_of_finding(
                        run,
                        format!(
                            "backup stopped (WITH CHECKSUM, STOP_ON_ERROR) at page {} of {}: {}",
                            first + i as u64,
                            run.files[file].path.display(),
                            v.describe()
                        ),
                    );
                    return false;
                }
            };
            let at = out.position();
            if let Err(e) = out.push(c, page) {
                stream_failed(w, "write", Some(at), &e);
                return false;
            }
        }
    }
    true
}

/// What the stream records of a page as read: its generation, when the page is whole and is
/// the page it should be (the oracle's verdict was the flight's; this is WITH CHECKSUM).
fn carried(run: &Run<'_>, file: usize, page: u64, bytes: &[u8]) -> Result<Carried, Verdict> {
    let generation = if sectors::is_zero(bytes) {
        0
    } else {
        layout::read_stamp_lenient(bytes).generation
    };
    let state = match generation {
        0 => ExpectedState::NeverWritten,
        g => ExpectedState::Written { generation: g },
    };
    let v = verify::verify(
        bytes,
        &Expect::known(run.files.run_id, file as u32, page, state),
    );
    if v.is_ok() {
        Ok(Carried {
            file: file as u32,
            page,
            generation,
        })
    } else {
        Err(v)
    }
}

/// What is left of a backup that ended before its last page. Stopped with the phase, it is
/// removed: it holds nothing the finished backup does not. Stopped by a bad page or a failed
/// read or write, it stays as it is beside the stream, evidence of how far it got; either
/// way the last finished backup is the stream, untouched.
fn unfinished(run: &Run<'_>, backup_no: u64) {
    let plan = &run.plan.backup;
    let partial = plan.partial();
    let kept = if run.controls.stop.phase_over() {
        match run.backend.remove(&partial) {
            Ok(()) => String::from("removed"),
            Err(e) => format!("left ({e})"),
        }
    } else {
        format!("kept as {}", partial.display())
    };
    let last = if run.backend.exists(&plan.file) {
        format!("{} keeps the last finished backup", plan.file.display())
    } else {
        format!(
            "no backup has finished, so there is no {}",
            plan.file.display()
        )
    };
    say(
        run,
        Severity::Info,
        format!(
            "backup {backup_no} ended before its last page: its unfinished stream (no end block) is {kept}; {last}"
        ),
    );
}

/// Opens the stream in progress through the run's backend, refusing a file that is not a
/// stream of ours.
fn open_stream(run: &Run<'_>) -> Result<Arc<dyn Storage>, String> {
    crate::sim::engine::backup::open_stream(
        run.backend,
        &run.plan.backup.partial(),
        run.plan.direct,
        run.plan.force,
    )
}

/// The verify-only pass: the stream read back against what was written.
fn verify_only(w: &mut Worker<'_>, storage: &dyn Storage, written: &Written) {
    let run = w.run;
    let path = &run.plan.backup.file;
    match scan(storage, Some(written)) {
        Ok(s) if s.problems.is_empty() => say(
            run,
            Severity::Info,
            format!(
                "verify-only of {}: {} blocks and {} pages, clean",
                path.display(),
                s.blocks,
                s.pages
            ),
        ),
        Ok(s) => s.problems.iter().for_each(|p| run.report(finding(w, p))),
        Err(e) => unreadable(w, path, written.bytes, &e),
    }
}

/// A stream problem as a finding of this Backup User.
pub fn finding(w: &Worker<'_>, p: &StreamProblem) -> Finding {
    p.finding(w.run.plan.seed, &w.run.plan.backup.file, w.id)
}

/// A write (or flush) of the stream failed. When the device failed it (EIO and its kin, as
/// `io::oserr` tells them from a request refused for how it was made), that is a
/// `write_error` finding of the Backup User on the stream at the offset written; either way
/// the backup is abandoned, and the stream keeps the last finished one.
fn stream_failed(w: &Worker<'_>, what: &str, at: Option<u64>, e: &std::io::Error) {
    stream_failed_on(w, &w.run.plan.backup.file, what, at, e);
}
