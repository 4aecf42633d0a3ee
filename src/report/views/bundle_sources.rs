//! The members of an evidence bundle ([`BundleFile`]) and where they may come from: the
//! directory of the summary or log the bundle is made from, and the run's own dump directories
//! below it — each opened once, without following a symlink, and every member opened relative
//! to those descriptors with `O_NOFOLLOW` (regular files with one link only). A path recorded
//! inside a summary (its `log`, its `dump_dir`, a finding's `dump`) is never opened: a summary
//! is a file anyone could have written, and root packing what it names put `/etc/shadow` into
//! a bundle (docs/security.md). What is taken is what carries the run's name: the log or
//! summary beside it by the tool's own naming, the stylesheet, `dumps/RUNID*` and
//! `dumps/verify-RUNID*`, and in `dumps/` itself only the dump names the findings give.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::io::safefile::{Dir, Use};
use crate::report::error::ReportError;
use crate::report::readers::load::{InputKind, RunEvidence};

/// One member of the bundle.
#[derive(Debug, Clone)]
pub enum BundleFile {
    /// A file at a path the user gave (the input, the configuration), stored under `name`.
    Disk {
        /// Where it is.
        path: PathBuf,
        /// Its name in the archive (below the top directory).
        name: String,
    },
    /// The file `file` of a directory the tool holds open, opened without following a
    /// symlink and taken only when it is a regular file with one link (`whose` says whose it
    /// may be); stored under `name`.
    At {
        /// The directory.
        dir: Arc<Dir>,
        /// The name in it.
        file: OsString,
        /// Its name in the archive (below the top directory).
        name: String,
        /// Whose it may be.
        whose: Use,
    },
    /// Generated content.
    Bytes {
        /// Its name in the archive (below the top directory).
        name: String,
        /// The content.
        data: Vec<u8>,
    },
}

impl BundleFile {
    /// A file on disk stored under `prefix/<file name>`.
    pub fn disk(path: &Path, prefix: &str) -> BundleFile {
        let file = path
            .file_name()
            .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
        let name = if prefix.is_empty() {
            file
        } else {
            format!("{prefix}/{file}")
        };
        BundleFile::Disk {
            path: path.to_path_buf(),
            name,
        }
    }
}

impl BundleFile {
    /// Its name in the archive.
    pub(crate) fn name(&self) -> &str {
        match self {
            BundleFile::Disk { name, .. }
            | BundleFile::At { name, .. }
            | BundleFile::Bytes { name, .. } => name,
        }
    }
}

/// The directories a bundle reads, held open, and whose files may go in.
#[derive(Debug)]
pub struct Sources {
    /// The directory of the summary or log the bundle is made from.
    dir: Arc<Dir>,
    /// The run's own dump directories: every regular file in them goes in.
    dumps: Vec<Arc<Dir>>,
    /// `dumps/` itself, for the dumps the findings name there (an older layout).
    loose: Option<Arc<Dir>>,
    /// Whose the members may be ([`Use::Own`] for a run's own bundle).
    whose: Use,
}

/// How a run id appears in names: 16 hex digits, as the log shows it.
fn id_text(id: u64) -> String {
    format!("{id:016X}")
}

/// True for the name of a dump directory of run `id`: `ID`, `ID-N`, `verify-ID`,
/// `verify-ID-N` (`dumps/` of the log's directory holds one per run and per verify).
fn is_runs_dump_dir(name: &OsStr, id: &str) -> bool {
    let Some(n) = name.to_str() else { return false };
    let n = n.strip_prefix("verify-").unwrap_or(n);
    match n.strip_prefix(id) {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix('-')
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    }
}

impl Sources {
    /// For `report INPUT --bundle`: INPUT's directory and, in its `dumps/`, the directories
    /// named by the run id the input gives.
    pub fn beside(input: &Path, run_id: Option<u64>) -> Result<Sources, ReportError> {
        let (dir, _) = Dir::of(input)?;
        let loose = dir.subdir(OsStr::new("dumps"))?;
        let mut dumps = Vec::new();
        if let (Some(root), Some(id)) = (&loose, run_id.map(id_text)) {
            for n in root.names()? {
                if is_runs_dump_dir(&n, &id) {
                    dumps.extend(root.subdir(&n)?.map(Arc::new));
                }
            }
        }
        Ok(Sources {
            dir: Arc::new(dir),
            dumps,
            loose: loose.map(Arc::new),
            whose: Use::Named,
        })
    }

    /// For `run --bundle`: the directory of the run's log, and the dump directory the run
    /// itself opened and wrote into (`None`: it wrote no dump) — not whatever the path names
    /// by the end of the run.
    pub fn of_run(log: &Path, dumps: Option<Dir>) -> Result<Sources, ReportError> {
        let (dir, _) = Dir::of(log)?;
        Ok(Sources {
            dir: Arc::new(dir),
            dumps: dumps.into_iter().map(Arc::new).collect(),
            loose: None,
            whose: Use::Own,
        })
    }

    fn at(&self, dir: &Arc<Dir>, file: &OsStr, name: String) -> BundleFile {
        BundleFile::At {
            dir: dir.clone(),
            file: file.to_os_string(),
            name,
            whose: self.whose,
        }
    }

    /// `file` in the input's directory, stored under its own name.
    fn beside_file(&self, file: &OsStr) -> BundleFile {
        self.at(&self.dir, file, file.to_string_lossy().into_owned())
    }

    /// The log, stylesheet and summary that go with the input `l`, from its directory.
    pub fn companions(&self, l: &RunEvidence) -> Vec<BundleFile> {
        let xslt = OsStr::new(crate::report::sinks::xml::XSLT_NAME);
        let mut v = vec![self.beside_file(xslt)];
        let Some(name) = l.path.file_name() else {
            return v;
        };
        match l.kind {
            // The JSON summary the run wrote beside this log (see `load::load`).
            InputKind::XmlLog => {
                let json = crate::report::sinks::json::beside_log(Path::new(name));
                v.extend(json.file_name().map(|n| self.beside_file(n)));
            }
            _ => v.extend(log_names(l, name).iter().map(|n| self.beside_file(n))),
        }
        v
    }

    /// Every file of the run's dump directories, and the dumps the findings name in `dumps/`,
    /// stored under `dumps/`.
    pub fn dump_files(&self, l: &RunEvidence) -> Vec<BundleFile> {
        let mut v = Vec::new();
        for d in &self.dumps {
            for n in d.names().unwrap_or_default() {
                let name = format!("dumps/{}", n.to_string_lossy());
                v.push(self.at(d, &n, name));
            }
        }
        if let Some(root) = &self.loose {
            let named = l
                .findings
                .iter()
                .filter_map(|f| f.dump.as_ref()?.file_name());
            for n in named.flat_map(dump_set) {
                v.push(self.at(root, &n, format!("dumps/{}", n.to_string_lossy())));
            }
        }
        v
    }
}

/// The files of one dump, from the name a finding gives (its text file `STEM.txt`): that
/// name, `STEM.received` and `STEM.expected`.
fn dump_set(text: &OsStr) -> Vec<OsString> {
    let name = text.to_string_lossy();
    let mut v = vec![text.to_os_string()];
    if let Some(stem) = name.strip_suffix(".txt") {
        v.extend(["received", "expected"].map(|ext| OsString::from(format!("{stem}.{ext}"))));
    }
    v
}

/// The names the log of JSON summary `l` (named `json`) may have in the summary's own
/// directory: the one the tool gives a log beside its summary (`NAME.json` → `NAME.xml`),
/// and the name the summary records when it records that same directory.
fn log_names(l: &RunEvidence, json: &OsStr) -> Vec<OsString> {
    let json = json.to_string_lossy();
    let mut v: Vec<OsString> = json
        .strip_suffix(".json")
        .map(|stem| OsString::from(format!("{stem}.xml")))
        .into_iter()
        .collect();
    let recorded = l.json.as_ref().and_then(|j| j.log.as_deref());
    if let Some(log) = recorded.filter(|log| same_dir(log, &l.path)) {
        v.extend(log.file_name().map(OsStr::to_os_string));
    }
    v
}

/// True when the recorded `log` is in the directory of `input` (compared as written, made
/// absolute against the working directory, never resolved through the file system).
fn same_dir(log: &Path, input: &Path) -> bool {
    let parent = |p: &Path| {
        let d = p.parent().filter(|d| !d.as_os_str().is_empty());
        std::path::absolute(d.unwrap_or(Path::new("."))).ok()
    };
    parent(log).is_some() && parent(log) == parent(input)
}

#[cfg(test)]
mod tests {
    use super::is_runs_dump_dir;
    use std::ffi::OsStr;

    #[test]
    fn only_the_runs_own_dump_directories_are_taken() {
        let id = "00000000000000AB";
        for yes in [id, "00000000000000AB-2", "verify-00000000000000AB-13"] {
            assert!(is_runs_dump_dir(OsStr::new(yes), id), "{yes}");
        }
        for no in [
            "00000000000000AC",
            "00000000000000AB-",
            "00000000000000ABx",
            "x",
        ] {
            assert!(!is_runs_dump_dir(OsStr::new(no), id), "{no}");
        }
    }
}
