//! The Backup User's log backups (issue #25 §1): `BACKUP LOG` every `LogBackupInterval`, on a
//! thread of its own beside the full backups, as SQL Server runs a log backup while a full
//! backup goes on.
//!
//! Each log backup reads every log forward from where the last one ended up to the durable
//! end, in sequential reads of up to 120 KB (`engine::logforward`, the forward log reader of
//! recovery and log backup), checking every block and its link to the one before — the first
//! one's to the last block of the log backup before, so the backups form one chain — and
//! writes the blocks read to a `.trn` stream (`engine::backup::logstream`) in sequential
//! writes of up to MaxTransferSize. The stream is written under `.partial` and renamed over
//! `NAME.trn` once finished and durable, as the full backup's, so the `.trn` always holds the
//! last finished log backup.
//!
//! While log backups are configured the log may not reuse space none has read yet, as SQL
//! Server's log is held by `LOG_BACKUP` (`log_reuse_wait_desc`): from its start this thread
//! holds each log from the oldest LSN it has not backed up (`Wal::retain_from`), and moves that
//! only once a log backup is durable. A writer that would overwrite it waits (the log is
//! full). So that the users are not held long, a log backup is taken early when half a log is
//! waiting for one, as a DBA's log-space alert would start it. The hold is let go when the
//! thread ends, so the final checkpoint never waits for a log backup.
//!
//! A log block that reads back wrong is a `log_corruption` finding of the Backup User on the
//! log (re-read first, as every reader does): that log backup is abandoned, and the chain
//! starts again at the durable end (said in the log), as SQL Server's log chain breaks. After
//! each finished log backup, a verify-only pass reads the `.trn` back and checks every block
//! and every log block it carries; what it finds is `backup_corruption`.

use std::sync::Arc;
use std::time::Duration;

mod choice;

use choice::Mark;
pub use choice::{wait_step, LogView, Wait};

use super::context::Run;
use super::stream_failure::{stream_failed_on, unreadable};
use super::worker::Worker;
use crate::findings::Severity;
use crate::io::Storage;
use crate::sim::engine::backup::logstream::{self, TrnWriter, TrnWritten};
use crate::sim::engine::journal::BackupRecord;
use crate::sim::engine::logforward::read_forward;
use crate::sim::engine::manifest::{Keep, Manifest, Role, Rule};
use crate::sim::plan::SimPlan;

/// The log backups' files, when they are configured: the `.trn` stream and its `.partial`.
pub fn owns(plan: &SimPlan, m: &mut Manifest) {
    let b = &plan.backup;
    if b.log_interval.is_none() {
        return;
    }
    let rule = Rule::Stream { log: true };
    m.add(
        b.log_file(),
        Role::Stream { log: true },
        true,
        Keep::Always,
        rule,
    );
    m.add(
        b.log_partial(),
        Role::Partial { log: true },
        false,
        Keep::Always,
        rule,
    );
}

/// The `Func` of the log backup's log lines.
const FUNC: &str = "BackupUser::LogBackup";

/// Lets the logs go when the log backups end, however they end.
struct Release<'r, 'a>(&'r Run<'a>);

impl Drop for Release<'_, '_> {
    fn drop(&mut self) {
        for log in &self.0.files.logs {
            log.wal.retain_from(None);
        }
    }
}

/// The log backups: one every `LogBackupInterval` (sooner when half a log waits for one)
/// until the phase ends.
pub fn run(w: &mut Worker<'_>) {
    let run = w.run;
    let Some(interval) = run.plan.backup.log_interval else {
        return;
    };
    // From here on the log keeps what no log backup has read. The first backup starts at
    // the durable end, its first block's link not known.
    let mut marks: Vec<Mark> = run
        .files
        .logs
        .iter()
        .map(|l| {
            let from = l.wal.durable_end();
            l.wal.retain_from(Some(from));
            Mark::start(from)
        })
        .collect();
    let _release = Release(run);
    let mut backup_no = 0u64;
    while wait(w, interval, &marks) {
        backup_no += 1;
        if let Some((storage, written)) = log_backup(w, backup_no, &mut marks) {
            if run.plan.backup.verify_only {
                verify_only(w, storage.as_ref(), &written);
            }
        }
    }
}

/// Waits `interval`, or until half of a log waits for a log backup; false when the phase
/// ended.
fn wait(w: &Worker<'_>, interval: Duration, marks: &[Mark]) -> bool {
    let started = crate::clock::now();
    loop {
        let logs = w.run.files.logs.iter().zip(marks).map(|(l, m)| LogView {
            durable_end: l.wal.durable_end(),
            from: m.from,
            area_len: l.wal.area_len(),
        });
        let left = interval.saturating_sub(crate::clock::since(started));
        match wait_step(logs, left) {
            Wait::Now => return !w.run.controls.stop.phase_over(),
            Wait::Sleep(d) => {
                if !w.pause(d) {
                    return false;
                }
            }
        }
    }
}

/// One log backup of every log; the stream and what it holds, or `None` when it did not
/// finish (a bad log block, a stream that could not be opened or that refused a write).
fn log_backup(
    w: &mut Worker<'_>,
    backup_no: u64,
    marks: &mut [Mark],
) -> Option<(Arc<dyn Storage>, TrnWritten)> {
    let run = w.run;
    let plan = &run.plan.backup;
    let started = crate::clock::now();
    let partial = plan.log_partial();
    let capacity = usize::try_from(plan.transfer_pages).unwrap_or(1) * crate::page::PAGE_SIZE;
    let opened = crate::sim::engine::backup::open_stream_of(
        run.backend,
        &partial,
        run.plan.direct,
        run.plan.force,
        logstream::MAGIC,
    )
    .map_err(|e| say(run, Severity::Error, e))
    .ok()
    .and_then(|storage| {
        TrnWriter::new(Arc::clone(&storage), capacity, run.files.run_id, backup_no)
            .map_err(|e| stream_failed_on(w, &partial, "empty", None, &e))
            .ok()
            .map(|out| (storage, out))
    });
    let mut reached = marks.to_vec();
    let written = opened.and_then(|(storage, mut out)| {
        let mut read_all = true;
        for (i, mark) in reached.iter_mut().enumerate() {
            read_all = read_all && read_log(w, i, mark, &mut out, backup_no);
        }
        let at = out.position();
        read_all
            .then(|| {
                out.finish()
                    .map_err(|e| stream_failed_on(w, &partial, "write and flush", Some(at), &e))
                    .ok()
            })
            .flatten()
            .map(|written| (storage, written))
    });
    let written = written.and_then(|(storage, written)| {
        run.backend
            .rename(&partial, &plan.log_file())
            .map_err(|e| say(run, Severity::Error, format!("log backup {backup_no}: {e}")))
            .ok()
            .map(|()| (storage, written))
    });
    let Some((storage, written)) = written else {
        // Whatever stopped it (a bad log block, a stream that could not be opened or that the
        // device refused), the log is not held for it: the next log backup starts a new chain
        // at the durable end.
        restart_chain(run, marks);
        unfinished(run, backup_no);
        return None;
    };
    super::journaling::backup_finished(
        run,
        BackupRecord::finished(
            true,
            backup_no,
            &written.crcs,
            written.bytes,
            plan.log_file(),
        ),
    );
    // Durable and in place: only now may the log reuse what it carries.
    for ((log, mark), new) in run.files.logs.iter().zip(marks.iter_mut()).zip(&reached) {
        *mark = *new;
        log.wal.retain_from(Some(new.from));
    }
    say(
        run,
        Severity::Info,
        format!(
            "log backup {backup_no}: {} log blocks ({}) in {} blocks, {} bytes to {} in {} ms",
            written.blocks,
            ranges(&written),
            written.crcs.len(),
            written.bytes,
            plan.log_file().display(),
            crate::clock::since(started).as_millis(),
        ),
    );
    Some((storage, written))
}

/// The LSN ranges a log backup carries, for its log line.
fn ranges(written: &TrnWritten) -> String {
    if written.ranges.is_empty() {
        return String::from("no log written since the last");
    }
    written
        .ranges
        .iter()
        .map(|(file, a, b)| format!("log file {file}: LSN {a}..{b}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads log `i` forward from `mark` to its durable end into the stream, moving `mark` to
/// where it stopped; false when a block read back wrong (reported) or the stream refused a
/// write.
fn read_log(
    w: &mut Worker<'_>,
    i: usize,
    mark: &mut Mark,
    out: &mut TrnWriter,
    backup_no: u64,
) -> bool {
    let run = w.run;
    let log = &run.files.logs[i];
    let wal = &log.wal;
    let spec = super::log_writer::chain_spec(w, i, log.file, usize::MAX);
    let gate = w.log_gate(log.file);
    let mut pushed: std::io::Result<()> = Ok(());
    let report = read_forward(
        wal.storage().as_ref(),
        &spec,
        mark.after,
        mark.from,
        &gate,
        |b, bytes| {
            if pushed.is_ok() {
                pushed = out.push(log.file as u32, b, bytes);
            }
        },
    );
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            say(
                run,
                Severity::Error,
                format!("log backup {backup_no}: a read of the log failed: {e}"),
            );
            // A device's failure is a read_error finding; a request the platform refused is
            // said as such, not a finding (as every reader of the log tells them apart).
            super::log_writer::log_read_failed(w, log.file, &e);
            return false;
        }
    };
    w.record_log_ios(log.file, w.kind, &report.reads);
    if let Err(e) = pushed {
        let at = out.position();
        stream_failed_on(w, &run.plan.backup.log_partial(), "write", Some(at), &e);
        return false;
    }
    if let Some(p) = &report.problem {
        // Nothing it reads can have been lapped (the log is held for it): every problem is
        // reported, unlike the audit's walk.
        super::log_writer::report_bad_block(w, i, log.file, &spec, p, "log backup: ");
        return false;
    }
    if let Some(last) = report.blocks.last() {
        *mark = Mark::after_block(last.lsn, last.len, wal.unit());
    }
    true
}

/// After a log backup that did not finish: every log's chain starts again at its durable
/// end, and the log is held from there (not from where the failed one began, which a stream
/// the device keeps refusing would hold for ever, the users waiting on a full log).
fn restart_chain(run: &Run<'_>, marks: &mut [Mark]) {
    for (log, mark) in run.files.logs.iter().zip(marks.iter_mut()) {
        *mark = Mark::start(log.wal.durable_end());
        log.wal.retain_from(Some(mark.from));
    }
}

/// What is left of a log backup that did not finish: kept as `.partial` beside the stream,
/// which keeps the last finished one; the chain starts again.
fn unfinished(run: &Run<'_>, backup_no: u64) {
    let plan = &run.plan.backup;
    say(
        run,
        Severity::Error,
        format!(
            "log backup {backup_no} abandoned: its unfinished stream (no end block) is kept as {}; {} keeps the last finished log backup; the next log backup starts a new log chain at the durable end",
            plan.log_partial().display(),
            plan.log_file().display()
        ),
    );
}

/// The verify-only pass over a finished log backup.
fn verify_only(w: &mut Worker<'_>, storage: &dyn Storage, written: &TrnWritten) {
    let run = w.run;
    let path = run.plan.backup.log_file();
    match logstream::scan(storage, Some(written)) {
        Ok(s) if s.problems.is_empty() => say(
            run,
            Severity::Info,
            format!(
                "verify-only of {}: {} blocks and {} log blocks, clean",
                path.display(),
                s.blocks,
                s.log_blocks
            ),
        ),
        Ok(s) => s
            .problems
            .iter()
            .for_each(|p| run.report(p.finding(run.plan.seed, &path, w.id))),
        Err(e) => unreadable(w, &path, written.bytes, &e),
    }
}

fn say(run: &Run<'_>, severity: Severity, text: String) {
    run.message(
        severity,
        crate::page::ActorKind::BackupUser.name(),
        FUNC,
        text,
    );
}

#[cfg(test)]
mod tests;
