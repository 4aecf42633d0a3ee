//! `sqliosim verify`: an offline scan of a file set, with no workload. Every page of the data
//! files and every block of the log files is checked; with the journal, against the
//! generations that were durable when the run stopped (or crashed).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::verify_backup::OnDisk;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;

use super::console::ConsoleSink;
use super::lock::{lock_set, LockError, SetLock};
use super::verify_found::{discover, Found, ScanTarget};
use super::verify_lost::{adopt_given, lost_tail, reconcile, Lost};
use crate::events::{EventSink, Fanout};
use crate::exit::Outcome;
use crate::findings::Finding;
use crate::io::{Backend, BufferedBackend};
use crate::page::{FileRole, HeaderError};
use crate::report::{Evidence, EvidenceOptions, RunInfo};
use crate::sim::check::scan::{allowed_tears, scan_data, scan_log};
use crate::sim::check::scope;
use crate::sim::engine::journal::{JournalState, JOURNAL_NAME};

pub use crate::cli::VerifyArgs;

/// Runs `sqliosim verify ARGS…`.
pub fn main(args: Vec<OsString>) -> anyhow::Result<Outcome> {
    let a = match VerifyArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            crate::exit::out!("{}", e.render())?;
            return Ok(Outcome::Clean);
        }
        Err(e) => anyhow::bail!(
            "{}",
            e.render()
                .to_string()
                .trim_start_matches("error: ")
                .trim_end()
        ),
    };
    run(a)
}

/// Runs `sqliosim verify` with parsed options.
pub fn run(mut a: VerifyArgs) -> anyhow::Result<Outcome> {
    a.files.append(&mut a.file_opts);
    // `--json -`: the summary alone on stdout, as `sqliosim run --json -` does.
    let json_stdout = a.json.as_deref() == Some(Path::new("-"));
    if json_stdout {
        crate::exit::console_to_stderr();
        a.json = None;
    }
    if a.files.is_empty() && a.dirs.is_empty() {
        anyhow::bail!(
            "nothing to verify: give --dir DIR or file names (see `sqliosim verify --help`)"
        );
    }
    let backend = BufferedBackend::new();
    let mut found = discover(&a.files, &a.dirs)?;
    if a.dirs.is_empty() && found.targets.is_empty() && found.headless.is_empty() {
        // Only backup streams given: each is checked by itself, no journal owes anything.
        a.no_journal = true;
    }
    let streams = std::mem::take(&mut found.streams);
    let journal = match read_journal(&a, &found, &backend)? {
        Some((path, st)) if st.never_started() => {
            // Created, and cut before its first record (the Start) landed: a run cut at its
            // start. Nothing was acknowledged, so nothing is owed; the pages still say what
            // they are. (It was taken for another run's journal: every file "not checked".)
            crate::exit::outln!("The journal {} holds no Start record (the run was cut before it journaled anything, so nothing was acknowledged): pages are judged by what they say about themselves.", path.display()).ok();
            a.no_journal = true;
            None
        }
        journal => journal,
    };
    let (targets, lost) = choose(&a, &mut found, journal.as_ref().map(|(_, j)| j))?;
    let _lock = lock_targets(&a, &targets)?;
    let loaded = journal
        .map(|(path, st)| crate::sim::check::journal_verdict::report(&path, st, &paths(&targets)));
    let mut findings = loaded.as_ref().map_or(0, |l| l.findings);
    let journal = loaded.map(|l| l.state);
    let evidence = Arc::new(open_evidence(&a, &targets, journal.as_ref())?);
    let sink: Arc<dyn EventSink> = Arc::new(Fanout::new(vec![
        Arc::new(ConsoleSink::without_seed()),
        evidence.clone(),
    ]));
    for line in &lost.notes {
        crate::exit::outln!("{line}").ok();
    }
    for f in lost.findings {
        findings += 1;
        emit(sink.as_ref(), f, findings);
    }
    for t in &targets {
        findings += scan_one(t, journal.as_ref(), sink.as_ref(), findings)?;
    }
    let mut scanned = Vec::new();
    for s in &streams {
        let (n, on_disk) = scan_stream(s, journal.as_ref(), sink.as_ref(), findings)?;
        findings += n;
        scanned.push(on_disk);
    }
    // The finished backups the journal holds: each owed whole until a later one replaced it
    // (checked on the scans above, not read again).
    if let Some(j) = journal.as_ref().filter(|_| a.files.is_empty()) {
        for f in super::verify_backup::check_journaled(j, &a.dirs, &scanned) {
            findings += 1;
            emit(sink.as_ref(), f, findings);
        }
    }
    super::run_outputs::finish_offline(&evidence, json_stdout)?;
    // Earlier lines are best effort (`.ok()`): stdout stays broken, so this last line meets
    // the failure again and reports it, without hiding the verdict.
    let printed = crate::exit::outln!(
        "Verdict: {}",
        if findings == 0 {
            "CLEAN - no integrity errors found.".to_string()
        } else {
            format!("{findings} INTEGRITY ERROR(S) found.")
        }
    );
    let verdict = if findings == 0 {
        Outcome::Clean
    } else {
        Outcome::Findings
    };
    crate::exit::after_printing(printed, Ok(verdict))
}

fn paths(targets: &[ScanTarget]) -> Vec<PathBuf> {
    targets.iter().map(|t| t.path.clone()).collect()
}

/// The journal, read (not yet reported: a verify refused by the lock says nothing of it).
fn read_journal(
    a: &VerifyArgs,
    found: &Found,
    backend: &dyn Backend,
) -> anyhow::Result<Option<(PathBuf, JournalState)>> {
    if a.no_journal {
        return Ok(None);
    }
    let Some(path) = journal_path(a, found) else {
        return Ok(None);
    };
    let st = JournalState::load(backend, &path)
        .map_err(|e| anyhow::anyhow!("cannot read the journal: {e}"))?;
    Ok(Some((path, st)))
}

/// The files to check, and what became of the journal's files that are not among them.
fn choose(
    a: &VerifyArgs,
    found: &mut Found,
    journal: Option<&JournalState>,
) -> anyhow::Result<(Vec<ScanTarget>, Lost)> {
    if journal.is_none() && !a.no_journal {
        crate::exit::outln!("No journal found (sqliosim.journal): pages are judged by what they say about themselves, lost writes cannot be found; give --journal-dir DIR if the run had one.").ok();
    }
    if !a.files.is_empty() {
        // Exactly the files given: one whose header is gone is checked only as the journal's.
        let mut lost = journal.map_or_else(Lost::default, |j| adopt_given(j, found));
        if let Some(h) = found.headless.iter().find(|h| h.explicit) {
            anyhow::bail!(
                "{}: not a file created by sqliosim: {}",
                h.path.display(),
                h.why
            );
        }
        let mut targets = std::mem::take(&mut found.targets);
        targets.append(&mut lost.adopted);
        return Ok((targets, lost));
    }
    let targets = std::mem::take(&mut found.targets);
    let (mut targets, mut lost) = in_scope(targets, journal, found, &a.dirs);
    for h in &found.headless {
        if let HeaderError::Unreadable { .. } = h.why {
            crate::exit::outln!(
                "WARNING: {}: {}; not checked: no journal names it (if it is a file of sqliosim, its device failed to read its header page; give the journal with --journal to check it)",
                h.path.display(),
                h.why
            )
            .ok();
        }
    }
    if targets.is_empty()
        && lost.findings.is_empty()
        && journal.is_some_and(|j| !j.files.is_empty() && lost.owe_nothing == j.files.len())
    {
        // A run cut at its start, after its journal began and before its files reached the
        // device: nothing was acknowledged, so nothing is owed (and nothing is checked).
        lost.notes.push(
            "None of the journal's files exists, and the journal holds nothing durable for any of them: the run was cut before its files reached the device, so nothing was acknowledged and nothing is owed; 0 pages checked.".to_string(),
        );
    } else if targets.is_empty() && lost.findings.is_empty() && found.streams.is_empty() {
        if let (None, Some(busy)) = (&journal, run_starting(&a.dirs)) {
            // A run holds its lock and has not created its files yet (its start-up comes
            // first): refused as while it works, not "no file found".
            if !a.force {
                anyhow::bail!(
                    "{busy}. Pass --force to verify anyway (the verdict cannot be trusted)"
                );
            }
            crate::exit::errln!("sqliosim: warning: {busy}. Verifying anyway (--force): the verdict cannot be trusted, its files are being created");
        }
        anyhow::bail!(
            "{}",
            match journal {
                Some(_) => "none of the files the journal names was found; give them with --file PATH, or --no-journal to check every file with a sqliosim header".to_string(),
                None => format!("no file created by sqliosim found in {}", shown(&a.dirs)),
            }
        );
    }
    targets.append(&mut lost.adopted);
    Ok((targets, lost))
}

/// The refusal of a lock file in `dirs` that a process holds: a run that took its lock and
/// has not created its files yet.
fn run_starting(dirs: &[PathBuf]) -> Option<LockError> {
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(file) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else {
                continue;
            };
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            if let Err(busy @ LockError::Busy { .. }) = lock_set(&[d.join(file)], false, "verify") {
                return Some(busy);
            }
        }
    }
    None
}

fn shown(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn emit(sink: &dyn EventSink, mut f: Finding, seq: u64) {
    f.seq = seq;
    sink.emit(crate::events::Event::Finding(Box::new(f)));
}

/// Takes the file set shared, so that no run starts on it during the scan; refuses (exit 2)
/// while a run has it, unless --force.
fn lock_targets(a: &VerifyArgs, targets: &[ScanTarget]) -> anyhow::Result<Option<SetLock>> {
    match lock_set(&paths(targets), false, "verify") {
        Ok(taken) => {
            for note in &taken.taken_over {
                crate::exit::errln!("sqliosim: note: {note}");
            }
            Ok(Some(taken.lock))
        }
        Err(e @ LockError::Busy { .. }) if a.force => {
            crate::exit::errln!("sqliosim: warning: {e}. Verifying anyway (--force): the verdict cannot be trusted, pages change while they are read");
            Ok(None)
        }
        Err(e @ LockError::Busy { .. }) => {
            anyhow::bail!("{e}. Pass --force to verify anyway (the verdict cannot be trusted)")
        }
        // Something planted under a lock file's name: said and refused, not worked around.
        Err(e @ LockError::Unsafe(_)) => Err(e.into()),
        Err(LockError::Io { path, source, .. }) if read_only(&source) => {
            let meanwhile = if source.raw_os_error() == Some(libc::EROFS) {
                "a read-only filesystem, which no run can write meanwhile"
            } else {
                "read-only to this user: a run by a user who may write there is not kept out"
            };
            crate::exit::errln!(
                "sqliosim: note: cannot lock {}: read-only ({source}); verified without a lock ({meanwhile})",
                path.display()
            );
            Ok(None)
        }
        Err(e) => {
            crate::exit::errln!("sqliosim: warning: {e}; verifying without the lock: a run starting meanwhile is not kept out");
            Ok(None)
        }
    }
}

/// The lock file cannot be made because the directory is read-only to us (a read-only mount
/// or copy).
fn read_only(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EROFS) | Some(libc::EACCES) | Some(libc::EPERM)
    )
}

/// The scan's own XML log (and dumps beside it) when `--log` asks for one, so the evidence
/// of a scan looks like a run's; the JSON summary when `--json` does. Nothing is written into
/// the directory being checked unless asked for (docs/security.md).
fn open_evidence(
    a: &VerifyArgs,
    targets: &[ScanTarget],
    journal: Option<&JournalState>,
) -> anyhow::Result<Evidence> {
    let run_id = targets
        .first()
        .map(|t| t.header.run_id)
        .or(journal.map(|j| j.run_id));
    let dumps = a
        .log
        .as_ref()
        .and_then(|l| l.parent())
        // Apart from the run's own dumps, and from every other verify's.
        .map(|d| {
            let name = format!("verify-{}", super::previous::id_text(run_id.unwrap_or(0)));
            super::previous::dump_dir(&d.join("dumps"), &name)
        });
    let opts = EvidenceOptions {
        log: a.log.clone(),
        dump_dir: dumps,
        json: a.json.clone(),
        ..EvidenceOptions::default()
    };
    let run = RunInfo::offline(run_id);
    let shown_log = a.log.clone().unwrap_or_default();
    Evidence::create(opts, run)
        .map_err(|e| anyhow::anyhow!("cannot write the log {}: {e}", shown_log.display()))
}

/// The files of a directory scan that are checked; the others are named, with what they are,
/// and the journal's files not found among them are looked for and judged ([`reconcile`]).
fn in_scope(
    targets: Vec<ScanTarget>,
    journal: Option<&JournalState>,
    found: &mut Found,
    dirs: &[PathBuf],
) -> (Vec<ScanTarget>, Lost) {
    let seen: Vec<scope::Found> = targets
        .iter()
        .map(|t| scope::Found {
            path: t.path.clone(),
            run_id: t.header.run_id,
            file_id: t.header.file_id,
        })
        .collect();
    let scope = scope::choose(&seen, journal);
    found.targets = targets;
    let lost = journal.map_or_else(Lost::default, |j| reconcile(j, found, &scope.missing, dirs));
    for (i, line) in &scope.skipped {
        if !lost.named.iter().any(|p| *p == seen[*i].path) {
            crate::exit::outln!("{line}").ok();
        }
    }
    let mut slots: Vec<Option<ScanTarget>> = std::mem::take(&mut found.targets)
        .into_iter()
        .map(Some)
        .collect();
    let checked = scope
        .check
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .collect();
    (checked, lost)
}

/// The journal to judge against: --journal, --journal-dir, the first --dir that has one, or
/// beside the first file.
fn journal_path(a: &VerifyArgs, found: &Found) -> Option<PathBuf> {
    if let Some(p) = &a.journal {
        return Some(p.clone());
    }
    if let Some(d) = &a.journal_dir {
        return Some(d.join(JOURNAL_NAME));
    }
    let beside = a
        .files
        .first()
        .or(found.targets.first().map(|t| &t.path))
        .and_then(|p| p.parent().map(Path::to_path_buf));
    a.dirs
        .iter()
        .cloned()
        .chain(beside)
        .map(|d| d.join(JOURNAL_NAME))
        .find(|p| p.exists())
}

fn scan_one(
    t: &ScanTarget,
    journal: Option<&JournalState>,
    sink: &dyn EventSink,
    base: u64,
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
    let mut seq = base;
    let mut emit = |f: Finding| {
        seq += 1;
        emit(sink, f, seq);
    };
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
            let problems = scan.issues.len();
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
    s: &super::verify_found::Stream,
    journal: Option<&JournalState>,
    sink: &dyn EventSink,
    base: u64,
) -> anyhow::Result<(u64, OnDisk)> {
    if s.log {
        return scan_log_stream(s, journal, sink, base);
    }
    let scan = crate::sim::engine::backup::scan::scan(s.storage.as_ref(), None)
        .with_context(|| format!("cannot read {}", s.path.display()))?;
    let on_disk = OnDisk::full(&s.path, &scan);
    if another_run(s, journal, scan.run_id) {
        return Ok((0, on_disk));
    }
    emit_problems(sink, &scan.problems, &s.path, base);
    crate::exit::outln!("{}", super::restore::stream_line(&s.path, &scan)).ok();
    Ok((scan.problems.len() as u64, on_disk))
}

/// Checks one log backup stream (`engine::backup::logstream`): every block in its place with
/// its CRC, every log block it carries intact and linked to the one before.
fn scan_log_stream(
    s: &super::verify_found::Stream,
    journal: Option<&JournalState>,
    sink: &dyn EventSink,
    base: u64,
) -> anyhow::Result<(u64, OnDisk)> {
    let scan = crate::sim::engine::backup::logstream::scan(s.storage.as_ref(), None)
        .with_context(|| format!("cannot read {}", s.path.display()))?;
    let on_disk = OnDisk::log(&s.path, &scan);
    if another_run(s, journal, scan.run_id) {
        return Ok((0, on_disk));
    }
    emit_problems(sink, &scan.problems, &s.path, base);
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

/// A stream's problems as `backup_corruption` findings, numbered on from `base`.
fn emit_problems(
    sink: &dyn EventSink,
    problems: &[crate::sim::engine::backup::scan::Problem],
    path: &Path,
    base: u64,
) {
    for (i, p) in problems.iter().enumerate() {
        emit(sink, p.finding(0, path, 0), base + 1 + i as u64);
    }
}

/// In a directory scan with a journal, a stream of another run is named and left alone, as a
/// data file of another run is (true); a stream given by name is always checked.
fn another_run(
    s: &super::verify_found::Stream,
    journal: Option<&JournalState>,
    run_id: Option<u64>,
) -> bool {
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
