//! The Backup User's restore (`RestoreAfterBackup`, issue #25 §1): after a finished backup and
//! its verify-only pass, a copy of each data file is restored from the stream beside it
//! (`NAME.restored`, on the device under test) as SQL Server's RESTORE from one disk device
//! writes it — zeroed first unless `InstantFileInitialization`, then its pages in writes of
//! `RestoreMaxTransferSize` (64 KB) with `RestoreBufferCount` (6) in flight through the run's
//! I/O service (`engine::backup::restore`, whose module doc cites the sources) — then read back
//! and checked page by page against the generation the stream carried. A page that reads back otherwise
//! is a finding of the Backup User on the copy, classed by what was read (a lost write, a
//! stale read, a torn page, …). A copy that read back clean is removed, so the next restore
//! writes into extents just freed; a copy with a finding is kept as evidence.

use std::path::PathBuf;
use std::sync::Arc;

use super::worker::Worker;
use crate::findings::{Finding, FindingClass, Severity};
use crate::io::oserr::{self, ErrorClass};
use crate::io::Storage;
use crate::page::{ActorKind, Verdict};
use crate::sim::engine::backup::restore::{
    check, write_back, zero, Failed, Mismatch, Restored, Target, Transfer, ZERO_CHUNK,
};
use crate::sim::engine::backup::writer::Written;
use crate::sim::engine::manifest::{Keep, Manifest, Role, Rule};
use crate::sim::plan::BackupPlan;
use crate::sim::plan::SimPlan;

/// The restore's copies, one beside each data file, when `RestoreAfterBackup` is set: never
/// owed, kept as evidence (a clean one is removed by the restore itself).
pub fn owns(plan: &SimPlan, m: &mut Manifest) {
    if !plan.backup.restore {
        return;
    }
    for f in plan.data_files() {
        let copy = BackupPlan::restored(&plan.files[f].path);
        m.add(copy, Role::Copy, false, Keep::Always, Rule::Header);
    }
}

/// The `Func` of the restore's log lines.
const FUNC: &str = "BackupUser::Restore";

/// Restores backup `backup_no`, whose stream is `stream` and carried `written`, into copies of
/// the data files, and checks them. True when copies were kept as evidence: a later restore
/// would write over them, so the caller restores no more.
pub fn restore(
    w: &mut Worker<'_>,
    stream: &dyn Storage,
    written: &Written,
    backup_no: u64,
) -> bool {
    let run = w.run;
    if run.controls.stop.phase_over() {
        return false;
    }
    let started = crate::clock::now();
    let mut targets = match create_copies(w, written) {
        Ok(t) => t,
        Err(e) => {
            say(
                w,
                Severity::Error,
                format!("restore of backup {backup_no}: {e}; abandoned"),
            );
            return false;
        }
    };
    let stop = || run.controls.stop.phase_over();
    let zeroed = if run.plan.backup.instant_file_init {
        None
    } else {
        match zero(&targets, &stop) {
            Ok(writes) => Some(writes),
            Err(f) => return failed(w, &targets, f, backup_no),
        }
    };
    let done = match write_back(stream, &mut targets, transfer(w), &stop) {
        Ok(done) => done,
        Err(f) => return failed(w, &targets, f, backup_no),
    };
    let chunk = usize::try_from(run.plan.backup.transfer_pages).unwrap_or(1);
    let (checked, bad) = match check(&targets, run.files.run_id, chunk) {
        Ok(c) => c,
        Err(f) => return failed(w, &targets, f, backup_no),
    };
    for m in &bad {
        run.report(finding(w, &targets, m, backup_no));
    }
    let kept = remove(w, &targets, &bad);
    let outcome = if bad.is_empty() {
        String::from("clean; the copies are removed")
    } else {
        format!(
            "{} page(s) read back wrong; kept as evidence: {}",
            bad.len(),
            kept.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    say(
        w,
        Severity::Info,
        format!(
            "restore of backup {backup_no}: {} pages into {} copies in {}, {checked} read back in {} ms: {outcome}",
            done.pages,
            targets.len(),
            how(w, &done, zeroed),
            crate::clock::since(started).as_millis()
        ),
    );
    !kept.is_empty()
}

/// The restore's writes: RestoreMaxTransferSize and RestoreBufferCount, the buffers at most
/// the run's asynchronous depth (as the backup's BufferCount).
fn transfer(w: &Worker<'_>) -> Transfer {
    let b = &w.run.plan.backup;
    Transfer {
        pages: usize::try_from(b.restore_transfer_pages)
            .unwrap_or(8)
            .max(1),
        buffers: b
            .restore_buffers
            .clamp(1, w.run.controls.async_depth.max(1)),
    }
}

/// For the log: `W writes of at most 64 KB, at most B in flight, after zeroing in Z writes of
/// 1 MB` (or `, instant file initialization: not zeroed`).
fn how(w: &Worker<'_>, done: &Restored, zeroed: Option<u64>) -> String {
    let t = transfer(w);
    let zeroing = match zeroed {
        Some(z) => format!(
            "after zeroing the copies in {z} writes of at most {} KB",
            ZERO_CHUNK / 1024
        ),
        None => String::from("instant file initialization: the copies not zeroed"),
    };
    format!(
        "{} writes of at most {} KB, at most {} in flight of {} buffers, {zeroing}",
        done.writes,
        t.pages * crate::page::PAGE_SIZE / 1024,
        done.most_in_flight,
        t.buffers
    )
}

/// Creates the copy of each data file the stream carries pages of, sized to its last carried
/// page: its header page, then (with instant file initialization) its space allocated
/// without writing, or (without) nothing more: [`zero`] writes its zeros.
fn create_copies(w: &Worker<'_>, written: &Written) -> Result<Vec<Target>, String> {
    let run = w.run;
    let mut targets = Vec::new();
    for &file in &run.files.data {
        let id = u32::try_from(file).map_err(|e| e.to_string())?;
        let Some(last) = written
            .pages
            .iter()
            .filter(|c| c.file == id)
            .map(|c| c.page)
            .max()
        else {
            continue;
        };
        let path = BackupPlan::restored(&run.files[file].path);
        let grown = if run.plan.backup.instant_file_init {
            last + 1
        } else {
            1
        };
        let storage: Arc<dyn Storage> = run
            .create_copy(&path, id, grown)
            .map_err(|e| format!("cannot create the copy {}: {e}", path.display()))?;
        targets.push(Target::new(path, id, storage, last + 1));
    }
    Ok(targets)
}

/// A restore that could not go on. A copy's write, flush or read that the device failed (EIO
/// and its kin, as `io::oserr` tells them from a request refused for how it was made) is a
/// `write_error` or `read_error` finding of the Backup User on the copy, which is kept as
/// evidence (true). The end of the phase, the stream unreadable, or a request refused for how
/// it was made abandons the restore (said) and removes the copies (false).
fn failed(w: &Worker<'_>, targets: &[Target], f: Failed, backup_no: u64) -> bool {
    let errno = f.error.raw_os_error().unwrap_or(libc::EIO);
    if let (Some(t), ErrorClass::Device) = (f.target, oserr::classify(&f.error)) {
        let what = if f.write { "write" } else { "read" };
        let mut finding = w.page_finding(
            &targets[t].path,
            targets[t].file_id,
            f.page,
            Verdict::IoError { errno },
        );
        if f.write {
            finding.class = FindingClass::WriteError;
        }
        finding.errno = Some(errno);
        finding.detail = Some(format!(
            "restore of backup {backup_no}: the device failed a {what} of the copy at page {}: {}",
            f.page, f.error
        ));
        w.run.report(finding);
        say(
            w,
            Severity::Error,
            format!(
                "restore of backup {backup_no}: the device failed a {what} of {}: {}; the copies are kept as evidence",
                targets[t].path.display(),
                f.error
            ),
        );
        return true;
    }
    let why = if f.error.kind() == std::io::ErrorKind::Interrupted {
        format!("restore of backup {backup_no} ended with the phase")
    } else {
        format!("restore of backup {backup_no}: {}; abandoned", f.error)
    };
    remove(w, targets, &[]);
    say(w, Severity::Info, why);
    false
}

/// Removes each copy without a mismatch; returns the copies kept.
fn remove(w: &Worker<'_>, targets: &[Target], bad: &[Mismatch]) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        if bad.iter().any(|m| m.target == i) {
            kept.push(t.path.clone());
        } else if let Err(e) = w.run.backend.remove(&t.path) {
            say(
                w,
                Severity::Warning,
                format!("cannot remove the restored copy {}: {e}", t.path.display()),
            );
        }
    }
    kept
}

/// A page of a copy that read back wrong, as a finding of this Backup User on the copy.
fn finding(w: &Worker<'_>, targets: &[Target], m: &Mismatch, backup_no: u64) -> Finding {
    let t = &targets[m.target];
    let mut f = w.page_finding(&t.path, t.file_id, m.page, m.verdict.clone());
    f.detail = Some(format!(
        "restore of backup {backup_no}: page {} restored as generation {} read back as {}",
        m.page,
        m.generation,
        m.verdict.describe()
    ));
    f
}

fn say(w: &Worker<'_>, severity: Severity, text: String) {
    w.run
        .message(severity, ActorKind::BackupUser.name(), FUNC, text);
}
