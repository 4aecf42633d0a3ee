//! `sqliosim verify`: an offline scan of a file set, with no workload. Every page of the data
//! files and every block of the log files is checked; with the journal, against the
//! generations that were durable when the run stopped (or crashed). The judgement itself is
//! `judge.rs`'s, shared with `run --resume`; this is the command around it: its lock, its
//! evidence and its verdict.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Parser;

use super::console::ConsoleSink;
use super::judge_select::Selection;
use super::lock::{lock_set, LockError, SetLock};
use super::verify_found::ScanTarget;
use crate::events::{EventSink, Fanout};
use crate::exit::Outcome;
use crate::report::{Evidence, EvidenceOptions, RunInfo};

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
    let selection = Selection::make(&mut a, false)?;
    let _lock = lock_targets(&a, &selection.targets)?;
    let journal_run = selection.journal.as_ref().map(|(_, j)| j.run_id);
    let evidence = Arc::new(open_evidence(&a, &selection.targets, journal_run)?);
    let sink: Arc<dyn EventSink> = Arc::new(Fanout::new(vec![
        Arc::new(ConsoleSink::without_seed()),
        evidence.clone(),
    ]));
    let mut seq = 0;
    let judged = selection.judge(&a.dirs, !a.files.is_empty(), &mut |mut f| {
        seq += 1;
        f.seq = seq;
        sink.emit(crate::events::Event::Finding(Box::new(f)));
    })?;
    let findings = judged.errors;
    evidence.judgement(judged.judgement);
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
    journal_run: Option<u64>,
) -> anyhow::Result<Evidence> {
    let run_id = targets.first().map(|t| t.header.run_id).or(journal_run);
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
