//! Files the journal names that `sqliosim verify` did not find as they should be: missing,
//! replaced by another file (another run's, or a header whose file id changed), without a
//! readable header, or shorter than the pages the journal holds durable. A file the device or
//! filesystem lost is the largest lost write there is, so each is a finding (`lost_file`, or
//! `lost_write` for a lost tail) naming the file and what the journal held durable for it.
//!
//! The journal is the authority: a file at the journal's path (or with its name in a
//! directory given) whose header page is gone is checked as the journal's file, page by page,
//! and its lost header is one finding more. A file the journal holds nothing durable for, in a
//! run that did not end cleanly, owes nothing: its absence is said, not counted (its creation
//! may never have reached the device before the cut).

use std::path::{Path, PathBuf};

use super::verify_found::{Found, Headless, ScanTarget};
use crate::findings::{Finding, FindingClass};
use crate::page::{ActorKind, FileHeader, FileRole, HeaderError, Verdict, PAGE_SIZE};
use crate::sim::engine::journal::{JournalFile, JournalState};

/// What the journal's missing files came to.
#[derive(Default)]
pub struct Lost {
    /// One finding per file lost, replaced or without its header.
    pub findings: Vec<Finding>,
    /// Files that owe nothing, said so.
    pub notes: Vec<String>,
    /// Files without a header that the journal names: checked as its files.
    pub adopted: Vec<ScanTarget>,
    /// Found files named in a finding (not to be listed again as "not checked").
    pub named: Vec<PathBuf>,
    /// Missing files that owe nothing (nothing durable held, the run not ended cleanly).
    pub owe_nothing: usize,
    /// Nothing of a set was found, only what a run leaves before it creates one: nothing is
    /// owed, and nothing is checked.
    pub nothing: bool,
}

/// Looks for each of the journal's files `missing` (indices into `j.files`) at its path and by
/// its name in `dirs`, and says what became of it; takes the files it adopts out of `found`.
/// A file of a directory in `moved` (the journal's directory, where its files were found) is
/// owed where its directory's files are now, and looked for there only.
pub fn reconcile(
    j: &JournalState,
    found: &mut Found,
    missing: &[usize],
    dirs: &[PathBuf],
    moved: &[(PathBuf, PathBuf)],
) -> Lost {
    let mut lost = Lost::default();
    for f in missing.iter().filter_map(|&i| j.files.get(i)) {
        let held = held(j, f);
        let now = f
            .path
            .parent()
            .and_then(|p| moved.iter().find(|(from, _)| from == p))
            .map(|(_, to)| to);
        let places = match (now, f.path.file_name()) {
            (Some(to), Some(name)) => vec![to.join(name)],
            _ => places(f, dirs),
        };
        let elsewhere = now.is_none() && f.path.is_file();
        if elsewhere && !in_dirs(&f.path, dirs) {
            // At its own path, outside the directories given (another --dir of the run): not
            // looked for by its name here, where another file of the run may have that name.
            lost.notes.push(format!(
                "{}: file {} of the journal's run is not in the directories given, not checked; `sqliosim verify --file {}` checks it",
                f.path.display(),
                f.file_id,
                f.path.display()
            ));
        } else if let Some(t) = places.iter().find_map(|p| target_at(found, p)) {
            let why = replaced(j, f, &t.header);
            let verdict = Verdict::ForeignRun {
                found_run: t.header.run_id,
                expected_run: j.run_id,
            };
            lost.named.push(t.path.clone());
            let text = format!("{why}; {}", owed(j, &held));
            lost.findings
                .push(file_finding(f, &t.path.clone(), verdict, text));
        } else if let Some(h) = places.iter().find_map(|p| take_headless(found, p)) {
            let text = header_lost(j, f, &h);
            let finding = match h.why {
                // The device answered the read of page 0 with an error: a read error there.
                HeaderError::Unreadable { errno, .. } => {
                    let mut x = file_finding(f, &h.path, Verdict::IoError { errno }, text);
                    x.class = FindingClass::ReadError;
                    x
                }
                _ => file_finding(f, &h.path, lost_verdict(j, f), text),
            };
            lost.findings.push(finding);
            lost.adopted.push(adopt(j, f, h));
        } else if elsewhere {
            lost.notes.push(format!(
                "{}: file {} of the journal's run is not in the directories given, not checked; `sqliosim verify --file {}` checks it",
                f.path.display(),
                f.file_id,
                f.path.display()
            ));
        } else if held.is_some() || j.clean {
            let text = format!(
                "the file is missing (not at its path, nor by its name in the directories given); {}",
                owed(j, &held)
            );
            let at = places.first().unwrap_or(&f.path);
            lost.findings
                .push(file_finding(f, at, lost_verdict(j, f), text));
        } else {
            lost.owe_nothing += 1;
            lost.notes.push(format!(
                "{}: file {} of the journal's run is missing; the journal holds nothing durable for it and the run did not end cleanly, so it owes nothing (not a finding)",
                f.path.display(),
                f.file_id
            ));
        }
    }
    lost
}

/// True when `path` lies directly in one of `dirs` (compared after resolving both).
fn in_dirs(path: &std::path::Path, dirs: &[PathBuf]) -> bool {
    let parent = path.parent().and_then(|p| {
        std::fs::canonicalize(if p.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            p
        })
        .ok()
    });
    dirs.iter().any(|d| {
        std::fs::canonicalize(d)
            .ok()
            .is_some_and(|d| Some(d) == parent)
    })
}

/// The files given by name (`--file`) without a header that the journal names (at its path,
/// else by its name): checked as its files, each lost header a finding.
pub fn adopt_given(j: &JournalState, found: &mut Found) -> Lost {
    let mut lost = Lost::default();
    for f in &j.files {
        let at = |h: &Headless| {
            h.explicit && (same_file(&h.path, &f.path) || h.path.file_name() == f.path.file_name())
        };
        let Some(i) = found.headless.iter().position(at) else {
            continue;
        };
        let h = found.headless.remove(i);
        let text = header_lost(j, f, &h);
        lost.findings
            .push(file_finding(f, &h.path, lost_verdict(j, f), text));
        lost.adopted.push(adopt(j, f, h));
    }
    lost
}

fn header_lost(j: &JournalState, f: &JournalFile, h: &Headless) -> String {
    let what = match &h.why {
        HeaderError::Unreadable { what, .. } => {
            format!("its header page (page 0) cannot be read ({what})")
        }
        why => format!("its header page (page 0) is not a sqliosim header ({why})"),
    };
    format!(
        "{what}: the device lost, damaged or cannot read it. The journal names the file as file {} of run {:016x} and holds {}; its pages are checked as that file",
        f.file_id,
        j.run_id,
        held(j, f).unwrap_or_else(|| "nothing durable for it".into())
    )
}

/// The journal's path of `f`, then its name in each directory given.
fn places(f: &JournalFile, dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = vec![f.path.clone()];
    if let Some(name) = f.path.file_name() {
        v.extend(dirs.iter().map(|d| d.join(name)));
    }
    v
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

fn target_at<'a>(found: &'a Found, at: &Path) -> Option<&'a ScanTarget> {
    found.targets.iter().find(|t| same_file(&t.path, at))
}

fn take_headless(found: &mut Found, at: &Path) -> Option<Headless> {
    let i = found.headless.iter().position(|h| same_file(&h.path, at))?;
    Some(found.headless.remove(i))
}

/// What sits where `f` should be, in words.
fn replaced(j: &JournalState, f: &JournalFile, h: &FileHeader) -> String {
    if h.run_id == j.run_id {
        format!(
            "the file there says it is file {} of this run, not file {} (its header's file id changed)",
            h.file_id, f.file_id
        )
    } else {
        format!(
            "the file there is file {} of another run (run {:016x}), not file {} of the journal's run {:016x}: it was replaced",
            h.file_id, h.run_id, f.file_id, j.run_id
        )
    }
}

/// What the journal held durable for `f`, if anything.
fn held(j: &JournalState, f: &JournalFile) -> Option<String> {
    let id = f.file_id as usize;
    match f.role {
        FileRole::Data => {
            let d = j.durable.get(id)?;
            let (last, generation) = d.highest()?;
            Some(format!(
                "{} page(s) durable (up to page {last}, generation {generation})",
                d.len()
            ))
        }
        FileRole::Log => {
            let (last_block, end) = j.log.get(id).copied().flatten()?;
            (end > 0).then(|| {
                format!("its log durable up to LSN {end} (last block at LSN {last_block})")
            })
        }
    }
}

/// "the journal held …, all lost", or what a clean shutdown owes.
fn owed(j: &JournalState, held: &Option<String>) -> String {
    match held {
        Some(h) => format!("the journal held {h}, all lost"),
        None if j.clean => {
            "the run ended cleanly with the file in place, and it is gone".to_string()
        }
        None => "the journal held nothing durable for it".to_string(),
    }
}

fn lost_verdict(j: &JournalState, f: &JournalFile) -> Verdict {
    let generation = j
        .durable
        .get(f.file_id as usize)
        .and_then(|d| d.highest())
        .map_or(0, |(_, g)| g);
    Verdict::NeverWritten {
        expected: generation,
    }
}

fn file_finding(f: &JournalFile, path: &Path, verdict: Verdict, detail: String) -> Finding {
    let mut x = Finding::page(
        0,
        path.to_path_buf(),
        f.file_id,
        0,
        ActorKind::Verifier,
        0,
        verdict,
    );
    x.class = FindingClass::LostFile;
    x.detail = Some(detail);
    x
}

/// A file without a header, checked as the journal's file `f`.
fn adopt(j: &JournalState, f: &JournalFile, h: Headless) -> ScanTarget {
    ScanTarget {
        header: FileHeader {
            run_id: j.run_id,
            file_id: f.file_id,
            page_size: PAGE_SIZE as u32,
            role: f.role,
            tool_version: String::new(),
            created_us: 0,
            sector_size: h.storage.dio_align(),
        },
        path: h.path,
        storage: h.storage,
    }
}

/// The pages of a data file beyond its end (it has `pages` pages) that the journal holds
/// durable: one `lost_write` finding covering them all, when there are any.
pub fn lost_tail(j: &JournalState, t: &ScanTarget, pages: u64) -> Option<Finding> {
    let d = j.durable.get(t.header.file_id as usize)?;
    let beyond: Vec<(u64, u64)> = d.iter().filter(|&(p, _)| p >= pages.max(1)).collect();
    let (first, last) = (beyond.first()?.0, beyond.last()?.0);
    let generation = beyond.iter().map(|&(_, g)| g).max().unwrap_or(0);
    let mut x = Finding::page(
        0,
        t.path.clone(),
        t.header.file_id,
        first,
        ActorKind::Verifier,
        0,
        Verdict::NeverWritten {
            expected: generation,
        },
    );
    x.class = FindingClass::LostWrite;
    x.page_count = u32::try_from(beyond.len()).unwrap_or(u32::MAX);
    x.detail = Some(format!(
        "the file ends at page {pages} ({} bytes), but the journal held {} page(s) beyond it durable (pages {first}..={last}, up to generation {generation}): the device or filesystem lost the file's tail",
        pages * PAGE_SIZE as u64,
        beyond.len()
    ));
    Some(x)
}
