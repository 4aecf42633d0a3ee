//! The evidence bundle: one tar.gz with the log, JSON, dumps, report and system information.

use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use super::error::ReportError;
use super::reader::{InputKind, Loaded};
use crate::io::safefile::{self, Replacement, Use};

/// Top directory inside the archive.
pub const TOP: &str = "sqliosim-evidence";

/// One member of the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleFile {
    /// A file on disk, stored under `name`.
    Disk {
        /// Where it is.
        path: PathBuf,
        /// Its name in the archive (below [`TOP`]).
        name: String,
    },
    /// Generated content.
    Bytes {
        /// Its name in the archive (below [`TOP`]).
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

/// Writes the archive through a temporary renamed over `out` (see
/// [`crate::io::safefile::Replacement`]); files that no longer exist are skipped (the
/// archive lists what it has), and so are members that are not regular files or are symlinks
/// (a name planted among the dumps must not carry another file into the archive).
pub fn write(out: &Path, files: &[BundleFile]) -> Result<(), ReportError> {
    let mut r = Replacement::create(out)?;
    let io = |e| ReportError::io(out, e);
    let mut tar = tar::Builder::new(GzEncoder::new(r.file(), Compression::default()));
    for m in files {
        match m {
            BundleFile::Disk { path, name } => {
                let Ok(Some(mut f)) = safefile::open_existing(path, Use::Input) else {
                    continue;
                };
                tar.append_file(format!("{TOP}/{name}"), &mut f)
                    .map_err(io)?;
            }
            BundleFile::Bytes { name, data } => {
                let mut h = tar::Header::new_gnu();
                h.set_size(data.len() as u64);
                h.set_mode(0o644);
                h.set_mtime(super::clock::now_us() / 1_000_000);
                tar.append_data(&mut h, format!("{TOP}/{name}"), data.as_slice())
                    .map_err(io)?;
            }
        }
    }
    let gz = tar.into_inner().map_err(io)?;
    gz.finish().map_err(io)?.sync_all().map_err(io)?;
    r.commit()?;
    Ok(())
}

/// Every file in `dir` (not recursive), stored under `prefix/`.
pub fn dir_files(dir: &Path, prefix: &str) -> Vec<BundleFile> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v.iter().map(|p| BundleFile::disk(p, prefix)).collect()
}

/// A path recorded by the run, tried as given and relative to the evidence file's directory.
fn locate(recorded: &Path, base: &Path) -> PathBuf {
    if recorded.is_absolute() || recorded.exists() {
        return recorded.to_path_buf();
    }
    base.join(recorded)
}

/// The evidence around a loaded log or JSON summary: the file itself, its stylesheet, the log
/// or JSON it names, the dumps, the terminal summary, configuration and system information.
pub fn evidence_files(l: &Loaded, html: Option<&Path>) -> Vec<BundleFile> {
    let base = l.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut v = vec![BundleFile::disk(&l.path, "")];
    let mut dump_dirs = Vec::new();
    if l.kind == InputKind::XmlLog {
        v.push(BundleFile::disk(
            &l.path.with_file_name(super::xml::XSLT_NAME),
            "",
        ));
    }
    if let Some(j) = &l.json {
        if l.kind == InputKind::XmlLog {
            // The JSON summary the run wrote beside this log (see `reader::load`).
            v.push(BundleFile::disk(&super::json::beside_log(&l.path), ""));
        } else if let Some(log) = &j.log {
            let log = locate(log, &base);
            v.push(BundleFile::disk(
                &log.with_file_name(super::xml::XSLT_NAME),
                "",
            ));
            v.push(BundleFile::disk(&log, ""));
        }
        dump_dirs.extend(j.dump_dir.as_ref().map(|d| locate(d, &base)));
        let json = |name: &str, value: &dyn erased::Json| BundleFile::Bytes {
            name: name.into(),
            data: value.pretty(),
        };
        v.push(json("config.json", &j.config));
        v.push(json("system-info.json", &j.system));
    }
    for f in &l.findings {
        if let Some(d) = f.dump.as_ref().map(|d| locate(d, &base)) {
            dump_dirs.extend(d.parent().map(Path::to_path_buf));
        }
    }
    dump_dirs.sort();
    dump_dirs.dedup();
    for d in &dump_dirs {
        v.extend(dir_files(d, "dumps"));
    }
    v.push(BundleFile::Bytes {
        name: "summary.txt".into(),
        data: super::console::render(l).into_bytes(),
    });
    v.extend(html.map(|h| BundleFile::disk(h, "")));
    v
}

mod erased {
    /// Pretty JSON of any serialisable value, for bundle members.
    pub trait Json {
        fn pretty(&self) -> Vec<u8>;
    }
    impl<T: serde::Serialize> Json for T {
        fn pretty(&self) -> Vec<u8> {
            serde_json::to_vec_pretty(self).unwrap_or_default()
        }
    }
}

/// Bundles the evidence around `input` (a log or JSON summary of a run) plus `extra` files
/// (the INI configuration, for instance) into `out`: what `sqliosim run --bundle` calls.
pub fn write_for(
    input: &Path,
    html: Option<&Path>,
    extra: &[BundleFile],
    out: &Path,
) -> Result<(), ReportError> {
    let loaded = super::reader::load(input)?;
    let mut files = evidence_files(&loaded, html);
    files.extend_from_slice(extra);
    write(out, &files)
}
