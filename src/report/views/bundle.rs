//! The evidence bundle: one tar.gz with the log, JSON, dumps, report and system information.
//! Its files come only from directories the tool holds open ([`Sources`]), never from a path
//! a summary records, and the archive is mode 0600: it may hold dumps of root-only bytes.

use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::io::safefile::{self, Dir, Replacement, Use};
use crate::report::error::ReportError;
use crate::report::readers::load::RunEvidence;
pub use crate::report::views::bundle_sources::{BundleFile, Sources};

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

/// Writes the archive (mode 0600) through a temporary renamed over `out` (see
/// [`crate::io::safefile::Replacement`]); files that no longer exist are skipped (the
/// archive lists what it has), and so are members that are not regular files or are symlinks
/// (a name planted among the dumps must not carry another file into the archive), and a
/// second member of the same name. Every member goes below the directory `top`
/// ([`top_dir_of`]).
pub fn write(out: &Path, top: &str, files: &[BundleFile]) -> Result<(), ReportError> {
    let mut r = Replacement::create_private(out)?;
    let io = |e| ReportError::io(out, e);
    let mut tar = tar::Builder::new(GzEncoder::new(r.file(), Compression::default()));
    let mut seen = std::collections::HashSet::new();
    for m in files.iter().filter(|m| seen.insert(m.name().to_owned())) {
        match m {
            BundleFile::Disk { path, name } => {
                let Ok(Some(mut f)) = safefile::open_existing(path, Use::Input) else {
                    continue;
                };
                tar.append_file(format!("{top}/{name}"), &mut f)
                    .map_err(io)?;
            }
            BundleFile::At {
                dir,
                file,
                name,
                whose,
            } => {
                let Ok(Some(mut f)) = dir.open_read(file, *whose) else {
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

/// The evidence around a loaded log or JSON summary: the file itself, and from `src` its
/// stylesheet, the log or JSON beside it and the run's dumps; the terminal summary,
/// configuration and system information, and the HTML report under `html`'s file name when
/// one was asked for.
pub fn evidence_files(l: &RunEvidence, html: Option<&Path>, src: &Sources) -> Vec<BundleFile> {
    let mut v = vec![BundleFile::disk(&l.path, "")];
    v.extend(src.companions(l));
    if let Some(j) = &l.json {
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
    v.extend(src.dump_files(l));
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

/// Bundles the evidence of the run that just ended into `out`: what `sqliosim run --bundle`
/// calls. `input` is its JSON summary (or its XML log), `log` its XML log, `dumps` the dump
/// directory the run opened (see [`Sources::of_run`]), `extra` files such as the INI
/// configuration.
pub fn write_for_run(
    input: &Path,
    log: &Path,
    dumps: Option<Dir>,
    extra: &[BundleFile],
    out: &Path,
) -> Result<(), ReportError> {
    let loaded = crate::report::readers::load::load(input)?;
    let src = Sources::of_run(log, dumps)?;
    let mut files = evidence_files(&loaded, None, &src);
    files.push(BundleFile::disk(log, ""));
    files.extend_from_slice(extra);
    write(out, &top_dir_of(&loaded), &files)
}
