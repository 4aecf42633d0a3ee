//! What the previous run of a file set left, and what a new `run` may do with it.
//!
//! A run that did not end cleanly (killed, crashed, power cut, or stopped at an error: its lock
//! was left by a dead process, its journal is damaged, or it has no End record and holds an
//! acknowledged write) left the files that show what the device lost. A fresh run would delete
//! them before anyone verified them, so it refuses (exit 2) and says what to do: `verify`,
//! `run --resume`, or `--discard-previous-run`.
//!
//! The evidence of a previous run that did not end cleanly or found errors (its XML log, JSON
//! summary, old-style flat `dumps/`, journal, backup stream) is never overwritten: it is moved aside under
//! the old run's id, and the run says so. A clean previous run's evidence is replaced as
//! before. Dumps of current runs go in `dumps/RUNID/`, so they never need moving.

use std::path::{Path, PathBuf};

use crate::config::RunSettings;
use crate::io::safefile::Dir;
use crate::io::Backend;
use crate::sim::engine::journal::JournalState;
use crate::sim::engine::manifest::{Keep, Rule};
use crate::sim::plan::SimPlan;

/// What the previous run of the file set left behind.
#[derive(Debug, Default)]
struct Previous {
    /// Why it did not end cleanly (empty: it did, or there was none).
    unclean: Vec<String>,
    /// Its run id, where anything says it.
    run_id: Option<u64>,
    /// Its evidence shows a run that found errors, or did not finish.
    evidence_not_clean: bool,
    /// The integrity errors its evidence holds (a run cut after it reported a loss holds
    /// them in its summary alone: the note says so).
    found: u64,
    /// On a resume, the findings an attempt of this run logged before it was cut or stopped:
    /// still the run's, so the resume reports them again (its summary is the one the fleet
    /// reads).
    carried: Vec<crate::findings::Finding>,
    /// Its files that may be moved aside: only what sqliosim wrote (a log, summary or journal
    /// of ours), never a file of the user's that happens to have the name.
    ours: Vec<PathBuf>,
    /// Its journal is damaged: a resume, which reads it where it is and then writes a new
    /// one in its place, keeps a copy.
    journal_damaged: bool,
    /// The names of the finished backup streams its journal holds: a stream under one of them
    /// is the run's even when its magic no longer reads (the device's damage is evidence).
    journaled_streams: Vec<std::ffi::OsString>,
}

/// Refuses a fresh run over a file set whose previous run did not end cleanly (unless
/// `--discard-previous-run` or `--resume`, or `afresh`: a resume that found nothing owed),
/// then moves aside the evidence that must not be overwritten. `taken_over` are the lock's
/// notes on records left by dead runs. Returns, on a resume, the findings an attempt of the
/// run logged before it was cut or stopped, for the resume to report as its own.
pub fn guard(
    settings: &RunSettings,
    plan: &SimPlan,
    backend: &dyn Backend,
    taken_over: &[String],
    afresh: bool,
) -> anyhow::Result<Vec<crate::findings::Finding>> {
    let mut prev = look(settings, plan, backend, taken_over);
    if !prev.unclean.is_empty() && !plan.resume && !settings.discard_previous_run && !afresh {
        anyhow::bail!("{}", refusal(settings, plan, &prev));
    }
    if prev.evidence_not_clean || !prev.unclean.is_empty() {
        // --resume reads the old journal and carries its run on: it stays where it is.
        let journal = crate::sim::driver::setup::journal_path(plan);
        let keep: Vec<&PathBuf> = prev
            .ours
            .iter()
            .filter(|p| !(plan.resume && Some(*p) == journal.as_ref()))
            .collect();
        let tag = prev.run_id.map_or_else(unknown_tag, id_text);
        let mut moved = move_aside(&keep, &tag)?;
        if let Some(j) = journal.filter(|_| plan.resume && prev.journal_damaged) {
            moved.push(copy_aside(&j, &tag, backend)?);
        }
        if !moved.is_empty() {
            crate::exit::errln!(
                "sqliosim: note: the previous run{} {}; its evidence is kept: {}",
                prev.run_id
                    .map(|r| format!(" ({})", id_text(r)))
                    .unwrap_or_default(),
                match (prev.unclean.is_empty(), prev.found) {
                    (true, _) => "found errors".to_string(),
                    (false, 0) => "did not end cleanly".to_string(),
                    (false, n) => format!(
                        "did not end cleanly, and found {n} integrity error(s) before it was cut (see its summary, kept below)"
                    ),
                },
                moved.join(", ")
            );
        }
    }
    // Said once, however many attempts a finding was carried through.
    let said = "found by an earlier attempt of this run, stopped before it ended";
    for f in &mut prev.carried {
        f.detail = Some(match f.detail.take() {
            Some(d) if d.contains(said) => d,
            Some(d) => format!("{d}; {said} (its evidence kept aside)"),
            None => format!("{said} (its evidence kept aside)"),
        });
    }
    Ok(prev.carried)
}

/// The dumps directory of one process: `dumps/NAME`, or `dumps/NAME-2`, `-3`… when an earlier
/// process of the same run id (a resumed run, a verify) already has one, so that no dump is
/// ever overwritten by, or mixed with, another process's.
pub fn dump_dir(dumps: &Path, name: &str) -> PathBuf {
    (1..)
        .map(|n| match n {
            1 => dumps.join(name),
            n => dumps.join(format!("{name}-{n}")),
        })
        .find(|p| !p.exists())
        .unwrap_or_else(|| dumps.join(name))
}

/// How a run id appears in names: 16 hex digits, as the log shows it.
pub fn id_text(run_id: u64) -> String {
    format!("{run_id:016X}")
}

fn look(
    settings: &RunSettings,
    plan: &SimPlan,
    backend: &dyn Backend,
    taken_over: &[String],
) -> Previous {
    // The lock's notes say "took over the lock …": here nothing is taken over yet.
    let mut unclean: Vec<String> = taken_over
        .iter()
        .take(1)
        .map(|n| n.replacen("took over the lock", "the lock", 1))
        .collect();
    if taken_over.len() > 1 {
        unclean[0].push_str(&format!(
            " (and {} more of its lock files)",
            taken_over.len() - 1
        ));
    }
    let mut prev = Previous {
        unclean,
        ..Previous::default()
    };
    if let Some(path) = crate::sim::driver::setup::journal_path(plan).filter(|p| backend.exists(p))
    {
        journal_left(&mut prev, &path, JournalState::load_own(backend, &path));
    }
    let mut evidence: Vec<&PathBuf> = Vec::new();
    evidence.extend(
        settings
            .json
            .iter()
            .filter(|p| written_by_us(p, "sqliosim-summary")),
    );
    if written_by_us(&settings.error_log, "SQLIOSIM_LOG") {
        evidence.push(&settings.error_log);
        let dumps = settings.error_log.parent().map(|d| d.join("dumps"));
        prev.ours.extend(dumps.filter(|d| has_flat_dumps(d)));
    }
    prev.ours.extend(evidence.iter().map(|p| p.to_path_buf()));
    let mut found_errors = false;
    if let Some(p) = evidence.first() {
        match crate::report::readers::load::load(p) {
            Ok(l) => {
                let finished = l.complete || l.stopped_by.is_some();
                prev.found = l.integrity_errors();
                found_errors = prev.found > 0;
                // A resume carries the run on: what it found before it stopped, by a cut or
                // a signal, is the run's (a run that ended by itself is not resumed).
                if plan.resume {
                    prev.carried = l.findings.clone();
                }
                prev.evidence_not_clean = found_errors || !l.other_errors.is_empty() || !finished;
                prev.run_id = prev.run_id.or(l.json.and_then(|j| j.run_id));
            }
            Err(_) => prev.evidence_not_clean = true,
        }
    }
    // What the manifest says a rerun keeps beside the set: the backup streams (the pages as
    // the last finished backup read them; a partial one, how far a backup got), a restore's
    // copies left beside the data files, and — only when the run found errors — the Sort
    // Users' tempdb files and the DBCC Users' snapshots (never durable: a crash leaves nothing
    // owed in them, and kept after every crash each would take its size of disk again).
    for e in crate::sim::driver::manifest(plan).beside_the_set() {
        let kept = match (e.rule, e.keep) {
            (_, Keep::Never) => false,
            (_, Keep::WhenErrors) if !found_errors => false,
            (Rule::Stream { log }, _) => {
                written_by_us(
                    &e.path,
                    &String::from_utf8_lossy(crate::sim::engine::backup::magic_of(log)),
                ) || journaled_own(&prev, &e.path)
            }
            (Rule::Header, _) => matches!(
                crate::sim::engine::files::check_ownership(backend, &e.path, false),
                Ok(Some(_))
            ),
            (Rule::Replace, _) => false,
        };
        if kept {
            prev.ours.push(e.path.clone());
        }
    }
    prev.run_id = prev.run_id.or_else(|| header_run_id(plan, backend));
    prev
}

/// What the previous run's journal at `path` says of it. Damage, or bytes with no readable
/// Start, are evidence of what its device did (a lost or torn write it had acknowledged):
/// never ignored, so the run is unclean, as it is when the journal cannot be read.
fn journal_left(
    prev: &mut Previous,
    path: &Path,
    loaded: Result<JournalState, crate::sim::engine::journal::LoadError>,
) {
    let st = match loaded {
        Ok(st) => st,
        Err(e) => {
            prev.unclean.push(format!(
                "its journal {} cannot be read ({e})",
                path.display()
            ));
            return;
        }
    };
    prev.journaled_streams = st
        .backups
        .iter()
        .filter_map(|b| b.path.file_name().map(|n| n.to_os_string()))
        .collect();
    if st.damage.is_some() || st.start_lost() {
        prev.ours.push(path.to_path_buf());
        prev.journal_damaged = true;
        prev.unclean.push(format!(
            "its journal {} is damaged{}",
            path.display(),
            st.damage
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        ));
        return;
    }
    if st.never_started() {
        return; // Empty: created, and cut before its Start landed.
    }
    prev.run_id = Some(st.run_id);
    prev.ours.push(path.to_path_buf());
    // A journal that holds no acknowledged write (a run that stopped at an error during its
    // setup, then exited) owes nothing to preserve but its evidence, which is moved aside; a
    // lock left by a dead process still refuses.
    if !st.clean && holds_something(&st) {
        prev.unclean.push(format!(
            "its journal {} has no End record (the run was killed, crashed, lost power, or stopped at an error)",
            path.display()
        ));
    }
}

/// True when the journal holds an acknowledged write: a durable page or a durable log end.
fn holds_something(st: &JournalState) -> bool {
    st.durable.iter().any(|d| !d.is_empty()) || st.log.iter().flatten().any(|&(_, end)| end > 0)
}

/// The run id in the header of the first data file, if it is ours.
fn header_run_id(plan: &SimPlan, backend: &dyn Backend) -> Option<u64> {
    let &first = plan.data_files().first()?;
    crate::sim::engine::files::check_ownership(backend, &plan.files[first].path, false)
        .ok()
        .flatten()
        .map(|h| h.run_id)
}

fn refusal(settings: &RunSettings, plan: &SimPlan, prev: &Previous) -> String {
    let dir = plan
        .data_files()
        .first()
        .and_then(|&i| plan.files[i].path.parent())
        .map_or_else(|| ".".into(), |d| d.display().to_string());
    let journal = settings
        .journal_dir
        .as_ref()
        .map(|j| format!(" --journal-dir {}", j.display()))
        .unwrap_or_default();
    format!(
        "the previous run of this file set did not end cleanly: {}. Its files show what the device \
         lost, so this run does not replace them. Check them with `sqliosim verify --dir {dir}{journal}`, \
         carry the run on with `sqliosim run --resume` (it verifies first), or start afresh with \
         `sqliosim run --discard-previous-run` (its data files are replaced; its log, JSON \
         summary, dumps, journal, backup streams and restored copies are kept under its run id)",
        prev.unclean.join("; ")
    )
}

/// A stream the previous run's journal holds at `path`, damaged past reading its magic, but
/// still a regular file of ours with one link: kept as evidence of what the device lost (the
/// resume reports it lost), never left for the new run to refuse or `--force` to overwrite.
fn journaled_own(prev: &Previous, path: &Path) -> bool {
    use crate::io::safefile::{problem_of, Use};
    path.file_name()
        .is_some_and(|n| prev.journaled_streams.iter().any(|j| j == n))
        && rustix::fs::lstat(path).is_ok_and(|st| problem_of(&st, Use::Own).is_none())
}

/// A file of ours: it exists, is not empty, and carries `marker` near its start.
fn written_by_us(path: &Path, marker: &str) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
        && super::targets::ensure_ours(path, marker, false).is_ok()
}

fn move_aside(moves: &[&PathBuf], tag: &str) -> anyhow::Result<Vec<String>> {
    let mut said = Vec::new();
    for from in moves.iter().filter(|p| p.symlink_metadata().is_ok()) {
        let cannot = |to: &Path, e: &dyn std::fmt::Display| {
            anyhow::anyhow!(
                "cannot keep the previous run's {} as {}: {e}; move it away yourself, or use another directory",
                from.display(),
                to.display()
            )
        };
        let (dir, name) = Dir::of(from).map_err(|e| cannot(from, &e))?;
        let mut kept = None;
        for to in names_for(from, tag) {
            let to_name = to.file_name().unwrap_or_default();
            if dir
                .rename_new(&name, to_name)
                .map_err(|e| cannot(&to, &e))?
            {
                kept = Some(to);
                break;
            }
        }
        let to = kept.ok_or_else(|| cannot(from, &"every name for it is taken"))?;
        said.push(format!("{} → {}", from.display(), to.display()));
    }
    Ok(said)
}

/// Copies the damaged journal at `from`, read through the backend, to a new file named by
/// `tag` (created `O_EXCL`, never through a planted link; a taken name, whatever it is, is
/// left alone and the next one tried), synced; returns "FROM → copy TO".
fn copy_aside(from: &Path, tag: &str, backend: &dyn Backend) -> anyhow::Result<String> {
    use std::io::Write;
    let cannot = |to: &Path, e: &dyn std::fmt::Display| {
        anyhow::anyhow!(
            "cannot keep a copy of the damaged journal {} as {} before the resume replaces it: {e}; copy it away yourself, or use another directory",
            from.display(),
            to.display()
        )
    };
    let bytes = backend
        .read_whole(from, crate::io::safefile::Use::Input)
        .map_err(|e| cannot(from, &e))?;
    for to in names_for(from, tag) {
        let mut f = match crate::io::safefile::open_own(&to, crate::io::safefile::Create::New) {
            Ok(f) => f,
            // Taken (by anything: a file, a link, a FIFO, a directory): not ours to touch.
            Err(_) if to.symlink_metadata().is_ok() => continue,
            Err(e) => return Err(cannot(&to, &e)),
        };
        f.write_all(&bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| cannot(&to, &e))?;
        return Ok(format!("{} → copy {}", from.display(), to.display()));
    }
    Err(cannot(from, &"every name for it is taken"))
}

/// A directory of dumps written the way runs before per-run dump directories wrote them:
/// files directly inside.
fn has_flat_dumps(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .any(|e| e.file_type().is_ok_and(|t| t.is_file()))
        })
        .unwrap_or(false)
}

/// Where nothing says the old run's id: the time now, which is unique enough for one host.
fn unknown_tag() -> String {
    format!("unknown-{}", crate::page::layout::now_us())
}

/// Most names tried for one kept file (`TAG`, `TAG-2` … `TAG-1000`).
const MAX_NAMES: usize = 1000;

/// The names a kept file may take, in order: `dir/stem.TAG.ext` (or `dir/name.TAG` without an
/// extension), then with `-2`, `-3`… added to the tag (a run id resumed and kept more than
/// once, or a name someone else took). The caller takes the first it can create without
/// replacing anything.
pub(super) fn names_for<'a>(from: &'a Path, tag: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    let name = from
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (name.clone(), String::new()),
    };
    (1..=MAX_NAMES).map(move |n| {
        let t = if n == 1 {
            tag.to_string()
        } else {
            format!("{tag}-{n}")
        };
        from.with_file_name(format!("{stem}.{t}{ext}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_run_id_before_the_extension() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("sqliosim.log.xml");
        let names: Vec<PathBuf> = names_for(&log, "00AB").take(2).collect();
        assert_eq!(
            names,
            [
                dir.path().join("sqliosim.log.00AB.xml"),
                dir.path().join("sqliosim.log.00AB-2.xml")
            ]
        );
        assert_eq!(
            names_for(&dir.path().join("dumps"), "00AB").next(),
            Some(dir.path().join("dumps.00AB"))
        );
        assert_eq!(names_for(&log, "00AB").count(), MAX_NAMES);
        assert_eq!(id_text(0xAB), "00000000000000AB");
        let dumps = dir.path().join("dumps");
        assert_eq!(dump_dir(&dumps, "00AB"), dumps.join("00AB"));
        std::fs::create_dir_all(dumps.join("00AB")).expect("mkdir");
        assert_eq!(
            dump_dir(&dumps, "00AB"),
            dumps.join("00AB-2"),
            "a resumed run's own"
        );
    }

    #[test]
    fn moving_aside_never_replaces_a_taken_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("sqliosim.log.xml");
        std::fs::write(&log, b"evidence").expect("write");
        // Someone else's dangling symlink where the first choice of name is.
        let first = dir.path().join("sqliosim.log.00AB.xml");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &first).expect("symlink");
        let said = move_aside(&[&log], "00AB").expect("moved");
        let kept = dir.path().join("sqliosim.log.00AB-2.xml");
        assert_eq!(std::fs::read(&kept).expect("kept"), b"evidence");
        assert!(said[0].contains(&*kept.to_string_lossy()), "{said:?}");
        assert_eq!(
            std::fs::read_link(&first).expect("still a symlink"),
            dir.path().join("nowhere")
        );
        assert!(log.symlink_metadata().is_err(), "moved, not copied");
    }
}
