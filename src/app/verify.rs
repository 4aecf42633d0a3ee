//! `sqliosim verify`: an offline scan of a file set, with no workload. Every page of the data
//! files and every block of the log files is checked; with the journal, against the
//! generations that were durable when the run stopped (or crashed).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;

use super::console::ConsoleSink;
use super::lock::{lock_set, LockError, SetLock};
use super::verify_journal::Loaded;
use super::verify_scope::{self, Found};
use crate::engine::journal::{JournalState, JOURNAL_NAME};
use crate::engine::scan::{allowed_tears, scan_data, scan_log};
use crate::exit::Outcome;
use crate::findings::{EventSink, Fanout, Finding};
use crate::io::{AlignedBuf, Backend, BufferedBackend, OpenOptions, Storage};
use crate::page::{FileHeader, FileRole, PAGE_SIZE};
use crate::report::{Evidence, EvidenceOptions, RunInfo};

pub use crate::cli::VerifyArgs;

/// One file to scan, with its header.
struct Target {
    path: PathBuf,
    header: FileHeader,
    storage: Arc<dyn Storage>,
}

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
    let backend = BufferedBackend::new();
    let mut targets = discover(&a, &backend)?;
    let _lock = lock_targets(&a, &targets)?;
    let loaded = load_journal(&a, &targets, &backend)?;
    let journal_findings = loaded.as_ref().map_or(0, |l| l.findings);
    let journal = loaded.map(|l| l.state);
    if a.files.is_empty() {
        targets = in_scope(targets, journal.as_ref());
        if targets.is_empty() {
            anyhow::bail!("none of the files the journal names was found; give them with --file PATH, or --no-journal to check every file with a sqliosim header");
        }
    }
    let evidence = Arc::new(open_evidence(&a, &targets)?);
    let sink: Arc<dyn EventSink> = Arc::new(Fanout::new(vec![
        Arc::new(ConsoleSink::without_seed()),
        evidence.clone(),
    ]));
    let mut findings = journal_findings;
    for t in &targets {
        findings += scan_one(t, journal.as_ref(), sink.as_ref(), findings)?;
    }
    evidence
        .finish(None)
        .map_err(|e| anyhow::anyhow!("writing the evidence failed: {e}"))?;
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

/// Takes the file set shared, so that no run starts on it during the scan; refuses (exit 2)
/// while a run has it, unless --force.
fn lock_targets(a: &VerifyArgs, targets: &[Target]) -> anyhow::Result<Option<SetLock>> {
    let paths: Vec<PathBuf> = targets.iter().map(|t| t.path.clone()).collect();
    match lock_set(&paths, false, "verify") {
        Ok(taken) => {
            for note in &taken.taken_over {
                eprintln!("sqliosim: note: {note}");
            }
            Ok(Some(taken.lock))
        }
        Err(e @ LockError::Busy { .. }) if a.force => {
            eprintln!("sqliosim: warning: {e}. Verifying anyway (--force): the verdict cannot be trusted, pages change while they are read");
            Ok(None)
        }
        Err(e @ LockError::Busy { .. }) => {
            anyhow::bail!("{e}. Pass --force to verify anyway (the verdict cannot be trusted)")
        }
        // Something planted under a lock file's name: said and refused, not worked around.
        Err(e @ LockError::Unsafe(_)) => Err(e.into()),
        Err(e) => {
            eprintln!("sqliosim: warning: {e}; verifying without the lock: a run starting meanwhile is not kept out");
            Ok(None)
        }
    }
}

/// The scan's own XML log (and dumps beside it) when `--log` asks for one, so the evidence
/// of a scan looks like a run's; the JSON summary when `--json` does. Nothing is written into
/// the directory being checked unless asked for (docs/security.md).
fn open_evidence(a: &VerifyArgs, targets: &[Target]) -> anyhow::Result<Evidence> {
    let dumps = a
        .log
        .as_ref()
        .and_then(|l| l.parent())
        // Apart from the run's own dumps, and from every other verify's.
        .map(|d| {
            let name = format!(
                "verify-{}",
                super::previous::id_text(targets[0].header.run_id)
            );
            super::previous::dump_dir(&d.join("dumps"), &name)
        });
    let opts = EvidenceOptions {
        log: a.log.clone(),
        dump_dir: dumps,
        json: a.json.clone(),
        ..EvidenceOptions::default()
    };
    let run = RunInfo {
        seed: None,
        run_id: Some(targets[0].header.run_id),
        command_line: std::env::args().collect(),
        config: serde_json::Value::Null,
    };
    Evidence::create(opts, run)
        .map_err(|e| anyhow::anyhow!("cannot write the evidence of the scan: {e}"))
}

fn discover(a: &VerifyArgs, backend: &dyn Backend) -> anyhow::Result<Vec<Target>> {
    let mut paths: Vec<PathBuf> = a.files.clone();
    for dir in &a.dirs {
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the directory {}", dir.display()))?;
        let mut found = Vec::new();
        for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            match std::fs::metadata(&p) {
                Ok(m) if m.is_file() => found.push(p),
                // Names readable but not their files: a directory without search permission.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => anyhow::bail!(
                    "cannot look into the directory {}: {e} (reading its files needs search permission, x, on it)",
                    dir.display()
                ),
                _ => {}
            }
        }
        found.sort();
        paths.extend(found);
    }
    if paths.is_empty() {
        anyhow::bail!(
            "nothing to verify: give --dir DIR or file names (see `sqliosim verify --help`)"
        );
    }
    let explicit = a.files.len();
    let mut targets = Vec::new();
    for (i, path) in paths.into_iter().enumerate() {
        match open_target(&path, backend) {
            Ok(t) => targets.push(t),
            Err(e) if i < explicit => return Err(e),
            Err(_) => {} // Files in a directory that are not ours are skipped.
        }
    }
    if targets.is_empty() {
        anyhow::bail!(
            "no file created by sqliosim found in {}",
            a.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(targets)
}

fn open_target(path: &Path, backend: &dyn Backend) -> anyhow::Result<Target> {
    let storage = backend
        .open(
            path,
            OpenOptions {
                create: false,
                direct: false,
                write_through: false,
            },
        )
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = AlignedBuf::new(PAGE_SIZE)?;
    let n = storage
        .read_at(&mut buf, 0)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let header = FileHeader::decode(&buf[..n])
        .map_err(|e| anyhow::anyhow!("{}: not a file created by sqliosim: {e}", path.display()))?;
    Ok(Target {
        path: path.to_path_buf(),
        header,
        storage,
    })
}

/// The files of a directory scan that are checked; the others are named, with what they are.
fn in_scope(targets: Vec<Target>, journal: Option<&JournalState>) -> Vec<Target> {
    let found: Vec<Found> = targets
        .iter()
        .map(|t| Found {
            path: t.path.clone(),
            run_id: t.header.run_id,
            file_id: t.header.file_id,
        })
        .collect();
    let scope = verify_scope::choose(&found, journal);
    for line in &scope.skipped {
        crate::exit::outln!("{line}").ok();
    }
    let mut slots: Vec<Option<Target>> = targets.into_iter().map(Some).collect();
    scope
        .check
        .iter()
        .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// The journal to judge against: --journal, --journal-dir, the first --dir that has one, or
/// beside the first file.
fn journal_path(a: &VerifyArgs, targets: &[Target]) -> Option<PathBuf> {
    if let Some(p) = &a.journal {
        return Some(p.clone());
    }
    if let Some(d) = &a.journal_dir {
        return Some(d.join(JOURNAL_NAME));
    }
    let beside = a
        .files
        .first()
        .or(targets.first().map(|t| &t.path))
        .and_then(|p| p.parent().map(Path::to_path_buf));
    a.dirs
        .iter()
        .cloned()
        .chain(beside)
        .map(|d| d.join(JOURNAL_NAME))
        .find(|p| p.exists())
}

fn load_journal(
    a: &VerifyArgs,
    targets: &[Target],
    backend: &dyn Backend,
) -> anyhow::Result<Option<Loaded>> {
    if a.no_journal {
        return Ok(None);
    }
    let Some(path) = journal_path(a, targets) else {
        crate::exit::outln!("No journal found (sqliosim.journal): pages are judged by what they say about themselves, lost writes cannot be found; give --journal-dir DIR if the run had one.").ok();
        return Ok(None);
    };
    let checked: Vec<PathBuf> = targets.iter().map(|t| t.path.clone()).collect();
    super::verify_journal::load(backend, &path, &checked).map(Some)
}

fn scan_one(
    t: &Target,
    journal: Option<&JournalState>,
    sink: &dyn EventSink,
    base: u64,
) -> anyhow::Result<u64> {
    let j = journal.filter(|j| j.run_id == t.header.run_id);
    let mut findings = 0;
    let mut seq = base;
    let mut emit = |mut f: Finding| {
        seq += 1;
        f.seq = seq;
        sink.emit(crate::findings::Event::Finding(Box::new(f)));
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
