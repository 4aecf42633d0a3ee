//! Which files `sqliosim verify` and `run --resume` judge (one choice, made here for both): the
//! files given, or those found in the directories given, told apart by their headers; the
//! journal they are held to; and what became of the journal's files that are not among them.
//! A directory where a run left only its lock files or its log (cut before anything was
//! acknowledged) owes nothing; one with nothing of ours is a usage error.

use std::path::{Path, PathBuf};

use super::lock::{lock_set, LockError};
use super::verify_found::{discover, Found, ScanTarget, Stream};
use super::verify_lost::{adopt_given, reconcile, Lost};
use crate::cli::VerifyArgs;
use crate::io::{Backend, BufferedBackend};
use crate::page::HeaderError;
use crate::report::sinks::judgement::WitnessHeld;
use crate::sim::check::scope;
use crate::sim::engine::journal::{JournalState, LoadError, JOURNAL_NAME};

/// What is to be judged, chosen before anything is reported.
pub struct Selection {
    /// The files to scan.
    pub targets: Vec<ScanTarget>,
    /// What became of the journal's files not among them.
    pub lost: Lost,
    /// The backup streams found.
    pub streams: Vec<Stream>,
    /// The journal (its path and what it holds), not yet reported.
    pub journal: Option<(PathBuf, JournalState)>,
    /// With `--witness`: what the witness held against the local journal.
    pub witness: Option<WitnessHeld>,
}

impl Selection {
    /// Finds the files of `a` (given, or in its directories), reads the journal, and chooses.
    /// `ours`: the caller holds the set's lock itself (a resume), so a lock held is no run
    /// starting meanwhile.
    pub fn make(a: &mut VerifyArgs, ours: bool) -> anyhow::Result<Selection> {
        let backend = BufferedBackend::new();
        let mut found = discover(&a.files, &a.dirs)?;
        if a.dirs.is_empty() && found.targets.is_empty() && found.headless.is_empty() {
            // Only backup streams given: each is checked by itself, and held to the journal
            // beside it (or given) when there is one; without one, nothing owes anything.
            let beside = a
                .files
                .first()
                .and_then(|f| f.parent())
                .map(|d| d.join(JOURNAL_NAME));
            let journal = a.journal.is_some()
                || a.journal_dir.is_some()
                || beside.is_some_and(|j| j.is_file());
            a.no_journal |= !journal;
        }
        let streams = std::mem::take(&mut found.streams);
        let (journal, witness) = read_journal(a, &found, &backend)?;
        let journal = match journal {
            Some((path, st)) if st.never_started() => {
                // Created, and cut before its first record (the Start) landed: a run cut at
                // its start. Nothing was acknowledged, so nothing is owed; the pages still say
                // what they are. (It was taken for another run's journal: every file "not
                // checked".)
                crate::exit::outln!("The journal {} holds no Start record (the run was cut before it journaled anything, so nothing was acknowledged): pages are judged by what they say about themselves.", path.display()).ok();
                a.no_journal = true;
                None
            }
            journal => journal,
        };
        let (targets, lost) = choose(a, &mut found, journal.as_ref().map(|(_, j)| j), ours)?;
        Ok(Selection {
            targets,
            lost,
            streams,
            journal,
            witness,
        })
    }

    /// The paths of the files to scan.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.targets.iter().map(|t| t.path.clone()).collect()
    }
}

/// The record chosen: the journal (its path, or the witness's label, and what it holds) and,
/// with `--witness`, what the witness held against the local journal.
type Chosen = (Option<(PathBuf, JournalState)>, Option<WitnessHeld>);

/// The journal, read (not yet reported: a verify refused by the lock says nothing of it).
fn read_journal(a: &VerifyArgs, found: &Found, backend: &dyn Backend) -> anyhow::Result<Chosen> {
    if a.no_journal {
        return Ok((None, None));
    }
    let local = match journal_path(a, found) {
        Some(path) => {
            let st = JournalState::load(backend, &path).map_err(|e| match e {
                LoadError::Foreign(f) => anyhow::Error::new(f),
                LoadError::Io(e) => anyhow::anyhow!("cannot read the journal: {e}"),
            })?;
            Some((path, st))
        }
        None => None,
    };
    match &a.witness {
        Some(addr) => with_witness(a, addr, found, local),
        None => Ok((local, None)),
    }
}

/// The local journal or the witness's record of the run, whichever went further (the
/// witness holds the same batches, acknowledged off the host: the two are prefixes of one
/// sequence, so the one with the later batch holds everything the other does). Says which,
/// and how many owed page generations only the witness held.
fn with_witness(
    a: &VerifyArgs,
    addr: &str,
    found: &Found,
    local: Option<(PathBuf, JournalState)>,
) -> anyhow::Result<Chosen> {
    let key = match &a.witness_token_file {
        Some(p) => crate::witness::Key::from_file(p)?,
        None => crate::witness::Key::none(),
    };
    let mut held = WitnessHeld {
        addr: addr.to_string(),
        local_batch: local.as_ref().map(|(_, l)| l.last_batch),
        held_to: if local.is_some() { "local" } else { "none" }.into(),
        ..WitnessHeld::default()
    };
    let Some(run_id) = found
        .targets
        .first()
        .map(|t| t.header.run_id)
        .or(local.as_ref().map(|(_, j)| j.run_id))
        .filter(|&id| id != 0)
    else {
        crate::exit::outln!("Witness {addr}: no data file header and no journal names the run; the witness is not asked.").ok();
        return Ok((local, Some(held)));
    };
    let Some((bytes, last_seq)) = crate::witness::fetch(addr, &key, run_id)? else {
        crate::exit::outln!("Witness {addr}: holds no record of run {run_id:016x}; judged with the local journal alone.").ok();
        return Ok((local, Some(held)));
    };
    crate::sim::engine::journal::version_of(&bytes)
        .map_err(|v| anyhow::anyhow!("witness {addr}: its record of run {run_id:016x}: {v}"))?;
    let w = JournalState::from_bytes(&bytes);
    if w.run_id != run_id {
        anyhow::bail!(
            "witness {addr}: its record of run {run_id:016x} holds run {:016x}",
            w.run_id
        );
    }
    held.record_batch = Some(w.last_batch);
    let label = PathBuf::from(format!("witness {addr} (run {run_id:016x})"));
    let Some((path, l)) = local.filter(|(_, l)| l.run_id == run_id) else {
        crate::exit::outln!("Witness {addr}: record of run {run_id:016x} to batch {} ({} received); no local journal of the run: held to the witness's record alone.", w.last_batch, last_seq).ok();
        held.local_batch = None;
        held.held_to = "witness".into();
        held.owed_only_witness = w.durable.iter().map(|g| g.len()).sum();
        return Ok((Some((label, w)), Some(held)));
    };
    if w.last_batch > l.last_batch
        || (l.damage.is_some() && w.damage.is_none() && w.last_batch >= l.last_batch)
    {
        held.held_to = "witness".into();
        held.owed_only_witness = owed_beyond(&w, &l);
        crate::exit::outln!(
            "Witness {addr}: its record of run {run_id:016x} goes to journal batch {}, the local journal {} to batch {}{}: held to the witness's record; {} owed page generation(s) are known only to the witness (the local journal lost them with the host).",
            w.last_batch,
            path.display(),
            l.last_batch,
            if l.damage.is_some() { " (damaged)" } else { "" },
            held.owed_only_witness,
        )
        .ok();
        Ok((Some((label, w)), Some(held)))
    } else {
        held.acked_after_witness_batches = l.last_batch.saturating_sub(w.last_batch);
        held.acked_after_witness_pages = owed_beyond(&l, &w);
        crate::exit::outln!(
            "Witness {addr}: its record of run {run_id:016x} goes to journal batch {}, the local journal {} to batch {}: held to the local journal; {} batch(es) and {} owed page generation(s) were acknowledged after the witness's last record (the witness lag at the cut, not judged by the witness).",
            w.last_batch,
            path.display(),
            l.last_batch,
            held.acked_after_witness_batches,
            held.acked_after_witness_pages,
        )
        .ok();
        Ok((Some((path, l)), Some(held)))
    }
}

/// Pages whose generation `a` holds them to above what `b` does.
fn owed_beyond(a: &JournalState, b: &JournalState) -> u64 {
    a.durable
        .iter()
        .enumerate()
        .map(|(f, gens)| {
            gens.iter()
                .filter(|&(p, g)| g > b.durable_gen(f as u32, p))
                .count() as u64
        })
        .sum()
}

/// The files to check, and what became of the journal's files that are not among them.
fn choose(
    a: &VerifyArgs,
    found: &mut Found,
    journal: Option<&JournalState>,
    ours: bool,
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
        lost.nothing = true;
    } else if targets.is_empty() && lost.findings.is_empty() && found.streams.is_empty() {
        let busy = if ours { None } else { run_starting(&a.dirs) };
        if let (None, Some(busy)) = (&journal, busy) {
            // A run holds its lock and has not created its files yet (its start-up comes
            // first): refused as while it works, not "no file found".
            if !a.force {
                anyhow::bail!(
                    "{busy}. Pass --force to verify anyway (the verdict cannot be trusted)"
                );
            }
            crate::exit::errln!("sqliosim: warning: {busy}. Verifying anyway (--force): the verdict cannot be trusted, its files are being created");
        }
        if let (None, Some(trace)) = (&journal, traces_of_a_run(&a.dirs, ours)) {
            // A run cut before its journal or any file of its set existed (its lock files or
            // its log are all it left): nothing was acknowledged, so nothing is owed.
            lost.notes.push(format!(
                "No file of a sqliosim set and no journal in {}, only what a run leaves beside them ({}): no journal holds anything acknowledged (a run cut before it acknowledged anything, or one that deleted its files at shutdown), so nothing is owed; 0 pages checked.",
                shown(&a.dirs),
                trace.display()
            ));
            lost.nothing = true;
            return Ok((targets, lost));
        }
        if ours && journal.is_none() {
            // A resume: nothing found is for it to judge (it refuses, or starts afresh after a
            // cut its lock records show).
            return Ok((targets, lost));
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

/// A file a run leaves before its set exists, of the user running verify: a lock file holding
/// a run's record (`NAME.lock`, a regular file; not when the caller holds the set's lock
/// itself, `ours`: it made them), or an XML log of ours.
fn traces_of_a_run(dirs: &[PathBuf], ours: bool) -> Option<PathBuf> {
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        let ours = |p: &PathBuf| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            // Not empty: a lock file holds the record of the run that took it until it ends
            // cleanly; an empty one (or one this process made) says nothing of a run.
            // And ours: another user's file in a shared directory says nothing of our runs.
            let me = rustix::process::geteuid().as_raw();
            let file = p.symlink_metadata().is_ok_and(|m| {
                m.is_file() && m.len() > 0 && std::os::unix::fs::MetadataExt::uid(&m) == me
            });
            file && ((name.ends_with(".lock") && !ours)
                || (name.ends_with(".xml")
                    && crate::app::targets::ensure_ours(p, "SQLIOSIM_LOG", false).is_ok()))
        };
        if let Some(p) = names.into_iter().find(ours) {
            return Some(p);
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
    let moved = journal.map_or_else(Vec::new, |j| relocated(j, &seen, &scope.check));
    found.targets = targets;
    let lost = journal.map_or_else(Lost::default, |j| {
        reconcile(j, found, &scope.missing, dirs, &moved)
    });
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

/// The journal's directories whose files were found in another directory given (a copy of
/// the set, or the set moved): (the journal's directory, where its files are now). The other
/// files of such a directory are owed there too, and judged there, not at the journal's path
/// (where the original may still stand, and is not what was asked about).
fn relocated(j: &JournalState, seen: &[scope::Found], check: &[usize]) -> Vec<(PathBuf, PathBuf)> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    for f in check.iter().filter_map(|&i| seen.get(i)) {
        let Some(g) = j
            .files
            .iter()
            .find(|g| f.run_id == j.run_id && g.file_id == f.file_id)
        else {
            continue;
        };
        let (Some(from), Some(to)) = (g.path.parent(), f.path.parent()) else {
            continue;
        };
        if canon(from) != canon(to) && !moved.iter().any(|(m, _)| m == from) {
            moved.push((from.to_path_buf(), to.to_path_buf()));
        }
    }
    moved
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
