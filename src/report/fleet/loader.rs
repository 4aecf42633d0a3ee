//! Finding and reading the results of a fleet: the inputs named on the command line, and in
//! each directory (recursively) every `*.json` whose `schema` starts with "sqliosim-summary/"
//! and every XML log (`*.xml`) of a run that has no JSON summary beside it. Files are read in
//! parallel (one thread per CPU) so a thousand summaries take seconds, not minutes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::io::safefile::{Kind, Use};
use crate::report::readers::load::{self, InputKind};

use super::record::{log_beside, RunRecord};

/// Schema prefix of the run summaries the fleet report reads.
pub const SUMMARY_SCHEMA_PREFIX: &str = "sqliosim-summary/";

/// A candidate file, and whether the user named it (a named file that is not a summary is an
/// error; a file found in a directory that is not one is skipped).
#[derive(Debug, Clone)]
struct Candidate {
    path: PathBuf,
    named: bool,
}

/// A file that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoadProblem {
    /// The file (or directory); in JSON as text, a byte that is not UTF-8 shown as U+FFFD.
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    /// Why, in words.
    pub reason: String,
}

fn lossy_path<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// Everything read.
#[derive(Debug, Default)]
pub struct FleetInputs {
    /// The runs, sorted by path.
    pub runs: Vec<RunRecord>,
    /// Inputs that could not be read (exit code 2).
    pub unreadable: Vec<LoadProblem>,
    /// Files found in a directory that are not results, or XML logs whose JSON summary was
    /// read instead.
    pub skipped: Vec<LoadProblem>,
}

/// What one file turned out to be.
enum Read {
    Run(Box<RunRecord>),
    Unreadable(LoadProblem),
    Skipped(LoadProblem),
}

/// Finds and reads every result under `inputs`; symlinks inside a directory are followed only
/// when `follow`.
pub fn load(inputs: &[PathBuf], follow: bool) -> FleetInputs {
    let mut out = FleetInputs::default();
    let mut walk = Walk {
        follow,
        ..Walk::default()
    };
    for input in inputs {
        if input.is_dir() {
            walk.dir(input);
        } else {
            let c = Candidate {
                path: input.clone(),
                named: true,
            };
            match input.extension().and_then(|e| e.to_str()) {
                Some("xml") => walk.xmls.push(c),
                _ => walk.jsons.push(c),
            }
        }
    }
    let Walk {
        jsons,
        xmls,
        bad,
        skipped,
        ..
    } = walk;
    out.unreadable.extend(bad);
    out.skipped.extend(skipped);
    let read = parallel(&jsons, read_json);
    // Logs whose run has a JSON summary beside it (or among the inputs) are left out.
    let covered: Vec<PathBuf> = jsons.iter().map(|c| c.path.with_extension("xml")).collect();
    let covered_by_log: Vec<PathBuf> = read
        .iter()
        .filter_map(|r| match r {
            Read::Run(rec) => rec.log.clone(),
            _ => None,
        })
        .collect();
    let (xmls, beside): (Vec<Candidate>, Vec<Candidate>) = xmls
        .into_iter()
        .partition(|c| !covered.contains(&c.path) && !covered_by_log.contains(&c.path));
    for c in beside {
        out.skipped.push(LoadProblem {
            path: c.path,
            reason: "the JSON summary of this run is read instead".into(),
        });
    }
    let read_logs = parallel(&xmls, read_xml);
    for r in read.into_iter().chain(read_logs) {
        match r {
            Read::Run(rec) => out.runs.push(*rec),
            Read::Unreadable(p) => out.unreadable.push(p),
            Read::Skipped(p) => out.skipped.push(p),
        }
    }
    out.runs.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// What a directory walk found, and the directories it has been in (by device and inode, so
/// that symlinks back up the tree are not walked again and again).
#[derive(Default)]
struct Walk {
    jsons: Vec<Candidate>,
    xmls: Vec<Candidate>,
    bad: Vec<LoadProblem>,
    skipped: Vec<LoadProblem>,
    seen: std::collections::HashSet<(u64, u64)>,
    /// Symlinks met inside a directory are followed (`--follow`); else passed over.
    follow: bool,
}

impl Walk {
    /// Every `*.json` and `*.xml` under `dir`, sorted; a directory that cannot be listed is
    /// unreadable. A symlink inside is skipped unless `follow` (another user who can write
    /// the directory could point it at `/`, and the report would show root's results); when
    /// followed, a directory already walked is not walked again. A name that is not a regular
    /// file (a FIFO would stall the read) is skipped.
    fn dir(&mut self, dir: &Path) {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(dir) else {
            return;
        };
        if !self.seen.insert((meta.dev(), meta.ino())) {
            return;
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.bad.push(LoadProblem {
                    path: dir.to_path_buf(),
                    reason: format!("cannot list the directory: {e}"),
                });
                return;
            }
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            self.entry(p);
        }
    }

    fn entry(&mut self, p: PathBuf) {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        // Temporary files of an atomic rewrite (".x.json.<random>.tmp") and hidden files are not results.
        if name.as_deref().is_some_and(|n| n.starts_with('.')) {
            return;
        }
        let link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if link && !self.follow {
            self.skipped.push(LoadProblem {
                path: p,
                reason: "a symlink: not followed (--follow follows symlinks)".into(),
            });
            return;
        }
        let Ok(meta) = std::fs::metadata(&p) else {
            return; // a dangling symlink
        };
        if meta.is_dir() {
            return self.dir(&p);
        }
        let list = match p.extension().and_then(|e| e.to_str()) {
            Some("json") => &mut self.jsons,
            Some("xml") => &mut self.xmls,
            _ => return,
        };
        if meta.is_file() {
            list.push(Candidate {
                path: p,
                named: false,
            });
        } else {
            self.skipped.push(LoadProblem {
                path: p,
                reason: "not a regular file (a FIFO, socket or device): not read".into(),
            });
        }
    }
}

/// Applies `f` to every candidate on one thread per CPU; results in input order.
fn parallel(items: &[Candidate], f: fn(&Candidate) -> Read) -> Vec<Read> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let take = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(c) = items.get(i) else { break };
            mine.push((i, f(c)));
        }
        mine
    };
    let mut done: Vec<(usize, Read)> = std::thread::scope(|s| {
        // A thread the system will not start (ulimit -u) is not needed: the others, and this
        // one, take what is left.
        let workers: Vec<_> = (1..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, take).ok())
            .collect();
        let here = take();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .chain(here)
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

fn unreadable(c: &Candidate, reason: impl Into<String>) -> Read {
    Read::Unreadable(LoadProblem {
        path: c.path.clone(),
        reason: reason.into(),
    })
}

fn read_json(c: &Candidate) -> Read {
    let loaded = match load::load(&c.path) {
        Ok(l) => l,
        Err(e) => return unreadable(c, e.to_string()),
    };
    let schema = loaded.json.as_ref().map(|j| j.schema.clone());
    match (loaded.kind, schema) {
        (InputKind::Json, Some(s)) if s.starts_with(SUMMARY_SCHEMA_PREFIX) => {}
        (InputKind::XmlLog, _) => return run_of_log(c, loaded),
        (_, s) => {
            let what = s.filter(|s| !s.is_empty()).map_or_else(
                || "a JSON document without a \"schema\" field".to_string(),
                |s| format!("a JSON document of schema \"{s}\""),
            );
            let reason = format!("not a sqliosim run summary: {what}");
            // A document cut short before it says what it is, is a damaged result.
            return match c.named || loaded.truncated {
                true => unreadable(c, reason),
                false => Read::Skipped(LoadProblem {
                    path: c.path.clone(),
                    reason,
                }),
            };
        }
    }
    let doc = loaded.json.as_ref();
    let log = doc.and_then(|d| log_beside(&c.path, d));
    let text = log.as_ref().and_then(|p| read_text(p));
    let mut rec = RunRecord::from_loaded(&loaded, text.as_deref());
    rec.log = log;
    Read::Run(Box::new(rec))
}

/// A discovered `*.xml` that is not a sqliosim/SQLIOSim log (a JUnit file, say) is skipped.
fn looks_like_log(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = Vec::with_capacity(4096);
    let ok = crate::io::safefile::open_input(path)
        .map_err(std::io::Error::from)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .is_ok();
    let head = String::from_utf8_lossy(&head).to_ascii_uppercase();
    !ok || head.contains("<ENTRY") || head.contains("SQLIOSIM")
}

fn read_xml(c: &Candidate) -> Read {
    if !c.named && !looks_like_log(&c.path) {
        return Read::Skipped(LoadProblem {
            path: c.path.clone(),
            reason: "not a sqliosim or SQLIOSim XML log".into(),
        });
    }
    match load::load(&c.path) {
        Ok(l) => run_of_log(c, l),
        Err(e) => unreadable(c, e.to_string()),
    }
}

fn run_of_log(c: &Candidate, l: load::RunEvidence) -> Read {
    let text = read_text(&c.path);
    let mut rec = RunRecord::from_loaded(&l, text.as_deref());
    rec.log = Some(c.path.clone());
    Read::Run(Box::new(rec))
}

/// The text of a result file (never waiting on a FIFO); `None` when it cannot be read.
fn read_text(path: &Path) -> Option<String> {
    let bytes = crate::io::safefile::read_bounded(path, Use::Input, Kind::XmlLog).ok()?;
    String::from_utf8(bytes).ok()
}
