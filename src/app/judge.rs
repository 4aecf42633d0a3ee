//! The one judgement of a file set, made by `sqliosim verify` and by `run --resume` before it
//! carries on (issue #35: same code, same findings, same classes): the journal read and what
//! it holds, the journal's files lost, every page of the data files and every block of the
//! logs, every backup stream, and the finished backups the journal holds. Findings go to the
//! caller's emitter (verify numbers and logs them; a resume reports them as its run's).

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::judge_select::Selection;
use super::verify_backup::OnDisk;
use super::verify_found::{ScanTarget, Stream};
use super::verify_lost::lost_tail;
use crate::findings::Finding;
use crate::page::FileRole;
use crate::report::sinks::judgement::{JournalSource, Judgement, WitnessHeld};
use crate::sim::check::scan::{allowed_tears, scan_data, scan_log};
use crate::sim::engine::journal::JournalState;

/// What a judgement came to, beyond the findings emitted.
pub struct Judged {
    /// Integrity errors counted: the findings emitted, and the journal's own damage on the
    /// device under test.
    pub errors: u64,
    /// The journal's damage on the device under test, in words (it counts as one error but is
    /// no page's finding).
    pub journal_damage: Option<String>,
    /// What the files were held to and the counts the verdict rests on (the JSON summary's
    /// `judgement`).
    pub judgement: Judgement,
}

impl Selection {
    /// Judges the selection: the journal reported, the lost files, every file scanned, every
    /// stream scanned and, in a directory scan (`dirs`, no files given), the finished backups
    /// the journal holds. Each finding goes to `emit`.
    pub fn judge(
        self,
        dirs: &[PathBuf],
        files_given: bool,
        emit: &mut dyn FnMut(Finding),
    ) -> anyhow::Result<Judged> {
        let paths = self.paths();
        let mut judgement = Judgement {
            journal: source(self.journal.as_ref(), self.witness.as_ref()),
            witness: self.witness.clone(),
            ..Judgement::default()
        };
        let owner = self.journal.as_ref().and_then(|(path, _)| {
            std::os::unix::fs::MetadataExt::uid(&path.symlink_metadata().ok()?).into()
        });
        let loaded = self
            .journal
            .map(|(path, st)| crate::sim::check::journal_verdict::report(&path, st, &paths));
        for line in loaded.iter().flat_map(|l| &l.lines) {
            crate::exit::outln!("{line}").ok();
        }
        let mut errors = loaded.as_ref().map_or(0, |l| l.findings);
        let journal_damage = loaded
            .as_ref()
            .filter(|l| l.findings > 0)
            .and_then(|l| l.state.damage.as_ref().map(|d| d.to_string()));
        let journal = loaded.map(|l| l.state);
        judgement.pages_owed = journal
            .as_ref()
            .map_or(0, |j| j.durable.iter().map(|g| g.len()).sum());
        for line in &self.lost.notes {
            crate::exit::outln!("{line}").ok();
        }
        let mut count = |f: Finding| {
            errors += 1;
            emit(f);
        };
        for f in self.lost.findings {
            count(f);
        }
        for t in &self.targets {
            scan_one(t, journal.as_ref(), &mut judgement, &mut count)?;
        }
        let mut scanned = Vec::new();
        for s in &self.streams {
            let (_, on_disk) = scan_stream(s, journal.as_ref(), &mut count)?;
            scanned.push(on_disk);
        }
        // The finished backups the journal holds: each owed whole until a later one replaced
        // it (checked on the scans above, not read again); with files given, only the streams
        // given, each held to the journal's record of its name.
        if let Some(j) = journal.as_ref() {
            let given = files_given.then_some(&scanned[..]);
            for f in super::verify_backup::check_journaled(j, dirs, &scanned, given, owner) {
                count(f);
            }
        }
        Ok(Judged {
            errors,
            journal_damage,
            judgement,
        })
    }
}

/// The record the files are held to, for the summary.
fn source(
    journal: Option<&(PathBuf, JournalState)>,
    witness: Option<&WitnessHeld>,
) -> JournalSource {
    let Some((_, j)) = journal else {
        return JournalSource {
            source: "none".into(),
            ..JournalSource::default()
        };
    };
    let by_witness = witness.is_some_and(|w| w.held_to == "witness");
    JournalSource {
        source: if by_witness { "witness" } else { "local" }.into(),
        last_batch: Some(j.last_batch),
        last_batch_us: j.last_mark.map(|(us, _)| us),
        clean_shutdown: Some(j.clean),
    }
}

fn scan_one(
    t: &ScanTarget,
    journal: Option<&JournalState>,
    counts: &mut Judgement,
    emit: &mut dyn FnMut(Finding),
) -> anyhow::Result<u64> {
    let j = journal.filter(|j| j.run_id == t.header.run_id);
    let j = match j {
        Some(j) if restored_copy(j, t) => {
            crate::exit::outln!(
                "{}: a restore's copy of file {} of the journal's run, not the journal's file: judged by what its pages say about themselves (it holds a backup's pages), not held to the journal",
                t.path.display(),
                t.header.file_id
            )
            .ok();
            None
        }
        j => j,
    };
    let mut findings = 0;
    match t.header.role {
        FileRole::Data => {
            let stats = scan_data(t.storage.as_ref(), &t.header, j, |b| {
                if b.is_finding() {
                    findings += 1;
                    emit(b.into_finding(0, &t.path, t.header.file_id));
                }
            })
            .with_context(|| format!("cannot read {}", t.path.display()))?;
            let pages = t
                .storage
                .len()
                .with_context(|| format!("cannot read {}", t.path.display()))?
                / crate::page::PAGE_SIZE as u64;
            counts.pages_checked += stats.pages;
            counts.never_written += stats.never_written;
            counts.newer_than_journal += stats.newer_than_journal;
            counts.allowed_tears += stats.allowed_tears;
            if let Some(f) = j.and_then(|j| lost_tail(j, t, pages)) {
                findings += 1;
                emit(f);
            }
            crate::exit::outln!(
                "{}: {} pages checked, {} never written, {} newer than the journal, {} bad{}",
                t.path.display(),
                stats.pages,
                stats.never_written,
                stats.newer_than_journal,
                findings,
                allowed_tears(stats.allowed_tears, t.header.sector_size)
            )
            .ok();
        }
        FileRole::Log => {
            let bytes = crate::io::file::read_all(t.storage.as_ref())
                .with_context(|| format!("cannot read {}", t.path.display()))?;
            let durable = j.and_then(|j| j.log.get(t.header.file_id as usize).copied().flatten());
            let scan = scan_log(&bytes, &t.header, durable);
            if let Some(foreign) = scan.foreign(&t.path) {
                return Err(anyhow::Error::new(foreign));
            }
            let problems = scan.issues.len();
            counts.log_blocks += scan.blocks as u64;
            for issue in scan.issues {
                findings += 1;
                emit(issue.into_finding(0, &t.path, t.header.file_id));
            }
            crate::exit::outln!(
                "{}: {} log blocks found, {} along the chain, {} problem(s)",
                t.path.display(),
                scan.blocks,
                scan.chained,
                problems
            )
            .ok();
        }
    }
    Ok(findings)
}

/// Whether `t` is a restore's copy (`NAME.restored`, or `sqliosim restore`'s
/// `STREAM.fileID.restored`) and not the journal's file of its id. It carries the file's run and
/// file ids, but it holds the pages a backup read, and the journal's acknowledgements are of
/// the file's later writes: held to them, every page written since the backup was a false lost
/// write. Any other copy given by name (a data file copied off the device to be examined) is
/// held to the journal as its file: its pages are the device's.
fn restored_copy(j: &JournalState, t: &ScanTarget) -> bool {
    let restored = t
        .path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".restored"));
    let journals = j
        .files
        .iter()
        .find(|f| f.file_id == t.header.file_id)
        .is_some_and(|f| f.path.file_name() == t.path.file_name());
    restored && !journals
}

/// Checks one backup stream (`engine::backup::scan`): every block in its place with its CRC,
/// every carried page intact and of the generation its block names. In a directory scan with
/// a journal, a stream of another run is named and left alone, as a data file of another run
/// is; a stream given by name is always checked. Returns the findings and what the stream
/// says about itself (for the journal's check of the finished backups).
fn scan_stream(
    s: &Stream,
    journal: Option<&JournalState>,
    emit: &mut dyn FnMut(Finding),
) -> anyhow::Result<(u64, OnDisk)> {
    // A stream of another version is refused by name, not judged (exit 2).
    crate::sim::engine::backup::refuse_foreign(s.storage.as_ref(), &s.path, s.log)?;
    if s.log {
        return scan_log_stream(s, journal, emit);
    }
    let scan = crate::sim::engine::backup::scan::scan(s.storage.as_ref(), None)
        .with_context(|| format!("cannot read {}", s.path.display()))?;
    let on_disk = OnDisk::full(&s.path, &scan);
    if another_run(s, journal, scan.run_id) {
        return Ok((0, on_disk));
    }
    emit_problems(emit, &scan.problems, &s.path);
    crate::exit::outln!("{}", super::restore::stream_line(&s.path, &scan)).ok();
    Ok((scan.problems.len() as u64, on_disk))
}

/// Checks one log backup stream (`engine::backup::logstream`): every block in its place with
/// its CRC, every log block it carries intact and linked to the one before.
fn scan_log_stream(
    s: &Stream,
    journal: Option<&JournalState>,
    emit: &mut dyn FnMut(Finding),
) -> anyhow::Result<(u64, OnDisk)> {
    let scan = crate::sim::engine::backup::logstream::scan(s.storage.as_ref(), None)
        .with_context(|| format!("cannot read {}", s.path.display()))?;
    let on_disk = OnDisk::log(&s.path, &scan);
    if another_run(s, journal, scan.run_id) {
        return Ok((0, on_disk));
    }
    emit_problems(emit, &scan.problems, &s.path);
    crate::exit::outln!(
        "{}: log backup stream of run {}, log backup {}: {} blocks, {} log blocks checked{}, {}, {} problem(s)",
        s.path.display(),
        scan.run_id
            .map_or_else(|| "?".to_string(), super::previous::id_text),
        scan.backup_no
            .map_or_else(|| "?".to_string(), |n| n.to_string()),
        scan.blocks,
        scan.log_blocks,
        scan.range
            .map_or_else(String::new, |(a, b)| format!(" (LSN {a}..{b})")),
        if scan.complete {
            "finished"
        } else {
            "unfinished (no END block: the log backup did not finish)"
        },
        scan.problems.len()
    )
    .ok();
    Ok((scan.problems.len() as u64, on_disk))
}

/// A stream's problems as `backup_corruption` findings.
fn emit_problems(
    emit: &mut dyn FnMut(Finding),
    problems: &[crate::sim::engine::backup::scan::StreamProblem],
    path: &Path,
) {
    for p in problems {
        emit(p.finding(0, path, 0));
    }
}

/// In a directory scan with a journal, a stream of another run is named and left alone, as a
/// data file of another run is (true); a stream given by name is always checked.
fn another_run(s: &Stream, journal: Option<&JournalState>, run_id: Option<u64>) -> bool {
    let run = run_id.map_or_else(|| "?".to_string(), super::previous::id_text);
    if let Some(j) = journal.filter(|j| !s.explicit && run_id != Some(j.run_id)) {
        crate::exit::outln!(
            "{}: backup stream of another run (run {run}) than the journal's ({}), not checked; `sqliosim verify {}` checks it",
            s.path.display(),
            super::previous::id_text(j.run_id),
            s.path.display()
        )
        .ok();
        return true;
    }
    false
}
