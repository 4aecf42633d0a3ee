//! The evidence bundle: one tar.gz with the log, JSON, dumps, report and system information.

use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::io::safefile::{self, Replacement, Use};
use crate::report::error::ReportError;
use crate::report::readers::load::{InputKind, RunEvidence};

/// How the top directory inside the archive begins; [`top_dir`] adds the host and run id.
pub const TOP: &str = "sqliosim-evidence";

/// The top directory of the archive: `sqliosim-evidence-HOST-RUNID`, so bundles of many hosts
/// extract side by side. HOST is the run's host name with every character outside
/// `[A-Za-z0-9._-]` made `_` (a leading `.` too, so no hidden directory), RUNID the run id in
/// 16 hex digits as the log shows it; either is `unknown` when the input does not say.
pub fn top_dir(host: Option<&str>, run_id: Option<u64>) -> String {
    let host = host
        .map(|h| {
            let mut s: String = h
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if s.starts_with('.') {
                s.replace_range(..1, "_");
            }
            s
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let id = run_id.map_or_else(|| "unknown".into(), |id| format!("{id:016X}"));
    format!("{TOP}-{host}-{id}")
}

/// The top directory for the evidence of `l`: its host name and run id from the JSON summary
/// (given, or the one written beside the log), else the system information's host name.
pub fn top_dir_of(l: &RunEvidence) -> String {
    let j = l.json.as_ref();
    let host = j
        .and_then(|j| j.host.as_ref().map(|h| h.hostname.clone()))
        .filter(|h| !h.is_empty())
        .or_else(|| j.and_then(|j| j.system.as_ref().map(|s| s.hostname.clone())));
    top_dir(host.as_deref(), j.and_then(|j| j.run_id))
}

/// One member of the bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleFile {
    /// A file on disk, stored under `name`.
    Disk {
        /// Where it is.
        path: PathBuf,
        /// Its name in the archive (below the top directory).
        name: String,
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

/// Writes the archive through a temporary renamed over `out` (see
/// [`crate::io::safefile::Replacement`]); files that no longer exist are skipped (the
/// archive lists what it has), and so are members that are not regular files or are symlinks
/// (a name planted among the dumps must not carry another file into the archive).
/// Every member goes below the directory `top` ([`top_dir_of`]).
pub fn write(out: &Path, top: &str, files: &[BundleFile]) -> Result<(), ReportError> {
    let mut r = Replacement::create(out)?;
    let io = |e| ReportError::io(out, e);
    let mut tar = tar::Builder::new(GzEncoder::new(r.file(), Compression::default()));
    for m in files {
        match m {
            BundleFile::Disk { path, name } => {
                let Ok(Some(mut f)) = safefile::open_existing(path, Use::Input) else {
                    continue;
                };
                tar.append_file(format!("{top}/{name}"), &mut f)
                    .map_err(io)?;
            }
            BundleFile::Bytes { name, data } => {
                let mut h = tar::Header::new_gnu();
                h.set_size(data.len() as u64);
                h.set_mode(0o644);
                h.set_mtime(crate::report::sinks::clock::now_us() / 1_000_000);
                tar.append_data(&mut h, format!("{top}/{name}"), data.as_slice())
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
/// or JSON it names, the dumps, the terminal summary, configuration and system information,
/// and the HTML report under `html`'s file name when one was asked for.
pub fn evidence_files(l: &RunEvidence, html: Option<&Path>) -> Vec<BundleFile> {
    let base = l.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut v = vec![BundleFile::disk(&l.path, "")];
    let mut dump_dirs = Vec::new();
    if l.kind == InputKind::XmlLog {
        v.push(BundleFile::disk(
            &l.path.with_file_name(crate::report::sinks::xml::XSLT_NAME),
            "",
        ));
    }
    if let Some(j) = &l.json {
        if l.kind == InputKind::XmlLog {
            // The JSON summary the run wrote beside this log (see `load::load`).
            v.push(BundleFile::disk(
                &crate::report::sinks::json::beside_log(&l.path),
                "",
            ));
        } else if let Some(log) = &j.log {
            let log = locate(log, &base);
            v.push(BundleFile::disk(
                &log.with_file_name(crate::report::sinks::xml::XSLT_NAME),
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
        if let Some(b) = &j.bench {
            // The capacity run beside the simulation (`run --bench`): its figures and document.
            v.push(json("bench.json", b));
        }
        v.extend(crate::report::views::forensics::members(j, &l.findings));
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
        data: crate::report::views::terminal::render(l).into_bytes(),
    });
    // The page is rendered anew for the bundle, its dump links pointing at `dumps/` beside it.
    v.extend(html.map(|h| {
        BundleFile::Bytes {
            name: h.file_name().map_or_else(
                || "report.html".into(),
                |n| n.to_string_lossy().into_owned(),
            ),
            data: crate::report::views::html::render_loaded(
                l,
                crate::report::views::dump_links::DumpLinks::Bundle,
            )
            .into_bytes(),
        }
    }));
    v
}

#[cfg(test)]
mod tests {
    use super::top_dir;

    #[test]
    fn the_top_directory_names_host_and_run_id_in_safe_characters() {
        assert_eq!(
            top_dir(Some("node-7.rack_2"), Some(0x2A)),
            "sqliosim-evidence-node-7.rack_2-000000000000002A"
        );
        assert_eq!(
            top_dir(Some("../é x/y"), Some(u64::MAX)),
            "sqliosim-evidence-_.___x_y-FFFFFFFFFFFFFFFF"
        );
        assert_eq!(top_dir(Some(""), None), "sqliosim-evidence-unknown-unknown");
    }
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
    let loaded = crate::report::readers::load::load(input)?;
    let mut files = evidence_files(&loaded, html);
    files.extend_from_slice(extra);
    write(out, &top_dir_of(&loaded), &files)
}
