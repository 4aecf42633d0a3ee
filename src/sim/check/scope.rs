//! Which files `sqliosim verify --dir` checks. With a journal: the files it names (found by
//! path, else by name, in the directories given). Other files that carry a sqliosim header are
//! listed with what they are — a copy of a file of this run, a file of another run — and never
//! checked or counted: a copy taken an hour ago is not the live file and owes nothing. Without a
//! journal every file with a header is checked, but once per (run, file id): the oldest file
//! (by creation time) is taken as the original and the others are named as copies.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::sim::engine::journal::JournalState;

/// A file found with a sqliosim header: (path, run id, file id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Path.
    pub path: PathBuf,
    /// Run id from its header.
    pub run_id: u64,
    /// File id from its header.
    pub file_id: u32,
}

/// What to check and what to only mention.
#[derive(Debug, Default)]
pub struct Scope {
    /// Indices (into the found files) to check.
    pub check: Vec<usize>,
    /// Files left alone (index into the found files), each with a sentence saying what it is.
    pub skipped: Vec<(usize, String)>,
    /// Files of the journal (indices into its file list) not found among them.
    pub missing: Vec<usize>,
}

/// Chooses the files to check among `found` (in directory order).
pub fn choose(found: &[Found], journal: Option<&JournalState>) -> Scope {
    let mut scope = Scope::default();
    let mut taken: Vec<Option<usize>> = vec![None; found.len()];
    // Files of the journal's run that carry the id of a journal's file not found: copies
    // (a restore's, or one taken by hand), never standing in for it.
    let mut stand_ins: Vec<bool> = vec![false; found.len()];
    let mut order: Vec<usize> = Vec::new();
    match journal {
        Some(j) => {
            for (n, f) in j.files.iter().enumerate() {
                let same: Vec<usize> = (0..found.len())
                    .filter(|&i| found[i].run_id == j.run_id && found[i].file_id == f.file_id)
                    .collect();
                match pick_named(found, &same, &f.path) {
                    Some(i) => {
                        order.push(i);
                        for &k in &same {
                            taken[k] = Some(i);
                        }
                    }
                    None => {
                        scope.missing.push(n);
                        same.iter().for_each(|&k| stand_ins[k] = true);
                    }
                }
            }
        }
        None => {
            for i in 0..found.len() {
                if taken[i].is_some() {
                    continue;
                }
                let same: Vec<usize> = (0..found.len())
                    .filter(|&k| {
                        found[k].run_id == found[i].run_id && found[k].file_id == found[i].file_id
                    })
                    .collect();
                let pick = pick_oldest(found, &same);
                order.push(pick);
                for &k in &same {
                    taken[k] = Some(pick);
                }
            }
        }
    }
    let journal_run = journal.map(|j| j.run_id);
    for (i, f) in found.iter().enumerate() {
        match taken[i] {
            None if stand_ins[i] => scope.skipped.push((i, format!(
                "{}: a copy of file {} of this run under another name (a restore's copy, or one taken by hand): it never stands in for the journal's file, which is judged where it should be; not checked; `sqliosim verify --file {}` checks it",
                f.path.display(),
                f.file_id,
                f.path.display()
            ))),
            None if journal_run == Some(f.run_id) => scope.skipped.push((i, format!(
                "{}: file {} of this run outside its journaled set (a Sort User's tempdb file or a DBCC User's snapshot, which are never durable: nothing is owed), not checked",
                f.path.display(),
                f.file_id
            ))),
            Some(orig) if orig != i => scope.skipped.push((i, format!(
                "{}: a copy of file {} of this run ({} is checked), not checked; `sqliosim verify --file {}` checks it",
                f.path.display(),
                f.file_id,
                found[orig].path.display(),
                f.path.display()
            ))),
            Some(_) => {}
            None => scope.skipped.push((i, format!(
                "{}: file {} of another run (run {:016x}) than the journal's, not checked; `sqliosim verify --no-journal --file {}` checks it",
                f.path.display(),
                f.file_id,
                f.run_id,
                f.path.display()
            ))),
        }
    }
    scope.check = order;
    scope
}

/// The candidate at the journal's path, else with its file name. A file of the same run and
/// id under another name is a copy (a restore's copy carries both): it never stands in for
/// the journal's file, or a lost data file would be judged by its copy and pass.
fn pick_named(found: &[Found], same: &[usize], path: &Path) -> Option<usize> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let want = canon(path);
    same.iter()
        .copied()
        .find(|&i| want.is_some() && canon(&found[i].path) == want)
        .or_else(|| {
            same.iter()
                .copied()
                .find(|&i| found[i].path.file_name() == path.file_name())
        })
}

/// The candidate created first (a copy is created after its original); ties keep the first.
fn pick_oldest(found: &[Found], same: &[usize]) -> usize {
    let born = |i: usize| {
        std::fs::metadata(&found[i].path)
            .and_then(|m| m.created())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    };
    same.iter()
        .copied()
        .min_by_key(|&i| (born(i), i))
        .unwrap_or(same[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::FileRole;
    use crate::sim::engine::journal::{JournalFile, Record};

    fn found(path: &str, run_id: u64, file_id: u32) -> Found {
        Found {
            path: path.into(),
            run_id,
            file_id,
        }
    }

    /// The journal of run 7 with one data file, at a path that is gone.
    fn journal_of_one_file() -> JournalState {
        JournalState::replay(
            &[Record::Start {
                run_id: 7,
                files: vec![JournalFile {
                    file_id: 0,
                    role: FileRole::Data,
                    path: "/gone/d/sqliosim.mdx".into(),
                    max_pages: None,
                }],
            }],
            false,
        )
    }

    #[test]
    fn the_journal_names_the_live_files_and_copies_are_only_named() {
        let j = journal_of_one_file();
        let f = [
            found("/x/old.copy", 7, 0),
            found("/x/sqliosim.mdx", 7, 0),
            found("/x/other.mdx", 9, 0),
        ];
        let s = choose(&f, Some(&j));
        assert_eq!(s.check, vec![1], "checked by name, not the copy");
        assert_eq!(s.skipped.len(), 2);
        assert!(
            s.skipped[0].1.contains("a copy of file 0"),
            "{:?}",
            s.skipped
        );
        assert!(s.skipped[1].1.contains("another run"), "{:?}", s.skipped);
        assert!(s.missing.is_empty());
    }

    #[test]
    fn a_copy_under_another_name_never_stands_in_for_a_missing_file() {
        let j = journal_of_one_file();
        let f = [found("/x/sqliosim.mdx.restored", 7, 0)];
        let s = choose(&f, Some(&j));
        assert!(s.check.is_empty(), "the copy is not checked as the file");
        assert_eq!(s.missing, vec![0], "the journal's file is missing");
        assert!(
            s.skipped[0].1.contains("never stands in"),
            "{:?}",
            s.skipped
        );
    }

    #[test]
    fn without_a_journal_each_run_and_file_is_checked_once() {
        let f = [
            found("/nonexistent/a", 7, 0),
            found("/nonexistent/b", 7, 0),
            found("/nonexistent/c", 7, 1),
        ];
        let s = choose(&f, None);
        assert_eq!(s.check, vec![0, 2]);
        assert_eq!(s.skipped.len(), 1);
        assert!(s.skipped[0].1.starts_with("/nonexistent/b: a copy"));
    }
}
