//! What `run --resume` does before it moves, creates or writes anything (issue #35): it checks
//! that the set is the one the configuration makes (a resume refused here has changed
//! nothing on disk), then judges the set with `verify`'s own judgement (`judge.rs`: the same
//! files chosen, the same findings, the same classes), so that the resume's verdict on the
//! set it opens is verify's. A directory where a run was cut before anything was acknowledged
//! (only its lock files or log there) owes nothing: the run starts afresh, and says so.

use std::path::{Path, PathBuf};

use crate::cli::VerifyArgs;
use crate::config::RunSettings;
use crate::findings::{Finding, FindingClass};
use crate::io::Backend;
use crate::page::{ActorKind, Verdict};
use crate::sim::plan::SimPlan;

/// What the resume found before it began.
pub enum First {
    /// Nothing was acknowledged and nothing exists to resume: start afresh (the line says so).
    Afresh(String),
    /// The set's findings, judged as `verify` judges them.
    Judged(Vec<Finding>),
    /// The set cannot be carried on (`why`), and what the journal owes of it is lost: the
    /// findings `verify` makes of it. Nothing was moved or created.
    Lost {
        /// The findings.
        findings: Vec<Finding>,
        /// Why the set cannot be carried on.
        why: String,
    },
}

/// Judges the set a resume of `plan` opens, or refuses (exit 2) before anything changed.
/// `dead_lock`: the lock found records of a run that died holding it (a trace of a cut run,
/// as its XML log is; the lock files this process made are none).
pub fn first(
    plan: &SimPlan,
    settings: &RunSettings,
    backend: &dyn Backend,
    dead_lock: bool,
) -> anyhow::Result<First> {
    let none_exists = plan
        .files
        .iter()
        .all(|f| f.path.symlink_metadata().is_err());
    if none_exists {
        if let Ok(s) = super::judge_select::Selection::make(&mut args(plan, settings), true) {
            let nothing = s.lost.nothing || (dead_lock && s.lost.findings.is_empty());
            if nothing && s.targets.is_empty() && s.streams.is_empty() {
                return Ok(First::Afresh(format!(
                    "sqliosim: note: nothing to resume in {}: no file of the set and no journal holding anything exist (a run cut before anything was acknowledged, so nothing is owed); the run starts afresh",
                    dirs(plan).iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
    }
    if let Err(refusal) = crate::sim::driver::resume::check_set(plan, backend) {
        // A file of the set missing or empty is a usage error only when nothing is owed of
        // it: what the journal held durable and is gone is the device's loss, which verify
        // reports (lost_file), so the resume reports it too, and carries nothing on.
        return match judged_anyway(plan, settings)? {
            Some(findings) => Ok(First::Lost {
                findings,
                // Without its advice to create the set afresh: a plain run over a set the
                // journal owes is refused too (it would erase the evidence).
                why: refusal
                    .resume_refusal()
                    .unwrap_or_else(|| refusal.to_string()),
            }),
            None => Err(refusal.into()),
        };
    }
    // A journal the resume could not carry on is refused here, before anything moves.
    crate::sim::driver::setup::resumable(plan, backend)?;
    let mut a = args(plan, settings);
    let selection = super::judge_select::Selection::make(&mut a, true)?;
    let mut found = Vec::new();
    let judged = selection.judge(&a.dirs, false, &mut |f| found.push(f))?;
    if let Some(damage) = judged.journal_damage {
        let path = crate::sim::driver::setup::journal_path(plan).unwrap_or_default();
        found.insert(0, journal_finding(&path, &damage));
    }
    Ok(First::Judged(found))
}

/// The findings verify makes of a set the resume cannot open (`None`: none, or it cannot be
/// judged either: the resume's own refusal stands).
fn judged_anyway(plan: &SimPlan, settings: &RunSettings) -> anyhow::Result<Option<Vec<Finding>>> {
    let mut a = args(plan, settings);
    let Ok(selection) = super::judge_select::Selection::make(&mut a, true) else {
        return Ok(None);
    };
    if selection.lost.findings.is_empty() {
        return Ok(None);
    }
    let mut found = Vec::new();
    selection.judge(&a.dirs, false, &mut |f| found.push(f))?;
    Ok((!found.is_empty()).then_some(found))
}

/// `verify --dir` over the directories of the plan's files, with the run's journal.
fn args(plan: &SimPlan, settings: &RunSettings) -> VerifyArgs {
    VerifyArgs {
        dirs: dirs(plan),
        files: Vec::new(),
        file_opts: Vec::new(),
        journal: None,
        journal_dir: settings.journal_dir.clone(),
        no_journal: !plan.journal,
        witness: settings.witness.as_ref().map(|w| w.addr.clone()),
        witness_token_file: settings.witness.as_ref().and_then(|w| w.token_file.clone()),
        log: None,
        json: None,
        force: false,
    }
}

/// The directories of the plan's files (the working directory for a bare name).
fn dirs(plan: &SimPlan) -> Vec<PathBuf> {
    let here = |d: &Path| match d.as_os_str().is_empty() {
        true => PathBuf::from("."),
        false => d.to_path_buf(),
    };
    plan.dirs().into_iter().map(here).collect()
}

/// The journal damaged on the device under test, as the finding verify counts it for: the
/// device broke a write it had acknowledged as durable, at the journal.
fn journal_finding(path: &Path, damage: &str) -> Finding {
    let mut f = Finding::page(
        0,
        path.to_path_buf(),
        0,
        0,
        ActorKind::Verifier,
        0,
        Verdict::Garbage {
            first_bytes: [0; 16],
        },
    );
    f.class = FindingClass::LostWrite;
    f.detail = Some(format!(
        "JOURNAL DAMAGED: {damage}: the journal's device (the device under test) lost, tore or corrupted a write it had acknowledged as durable; the set is held only to what the journal recorded before the damage"
    ));
    f
}
