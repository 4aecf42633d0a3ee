//! Where the test files go and how big they are: `[FileN]` names resolved against `-dir` or the
//! configuration's folder, Windows paths and NTFS stream names mapped to Linux, `-size` applied,
//! the Increment adjustment, and the checks that need the final file list.

use super::error::{ConfigError, Warning};
use super::model::PAGES_PER_MB;
use super::sections::{Config, FileOrigin, FileSpec};
use std::path::{Path, PathBuf};

/// Where a placed file came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `[File1]`, or `-dir` for the pair `-dir` creates.
    pub label: String,
    /// Configuration file name (or "command line").
    pub file: String,
    /// Line of `FileName`, 0 when not from the file.
    pub line: usize,
}

/// The data and log file `-dir` creates in each directory when the file has no `[FileN]`;
/// `size_mb` is the data file's initial size (`-size`, default 200).
pub fn dir_pair(size_mb: u64) -> Vec<FileSpec> {
    let log = log_size(size_mb);
    vec![
        FileSpec {
            path: "sqliosim.mdx".into(),
            initial_size_mb: size_mb,
            max_size_mb: size_mb * 2,
            increment_mb: (size_mb / 10).max(1),
            shrinkable: true,
            log_file: false,
            sparse: false,
        },
        FileSpec {
            path: "sqliosim.ldx".into(),
            initial_size_mb: log,
            max_size_mb: log,
            increment_mb: 0,
            shrinkable: false,
            log_file: true,
            sparse: false,
        },
    ]
}

/// [`Origin::label`] of the pair [`dir_pair`] makes.
pub const DIR_PAIR_LABEL: &str = "-dir";

/// The data-file size `-dir` uses when neither `-size` nor `[FileN]` gives one.
pub const DEFAULT_DIR_SIZE_MB: u64 = 200;

/// `-size`'s log file: half the data size, at least 1 MB, at most 50 MB.
pub fn log_size(size_mb: u64) -> u64 {
    (size_mb / 2).clamp(1, 50)
}

/// True for `f:\x`, `f:/x`, `f:`, `\\server\share` and anything holding a backslash.
pub fn is_windows_path(name: &str) -> bool {
    let b = name.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    (drive && (b.len() == 2 || b[2] == b'\\' || b[2] == b'/')) || name.contains('\\')
}

/// The last component of a Windows or Linux path.
pub fn name_part(name: &str) -> &str {
    name.rsplit(['\\', '/']).next().unwrap_or(name)
}

/// `BackupFile` placed as a `FileName` is: with `-dir`, only its name part, so the stream
/// and its `.trn` go beside the data files in DIR whatever directory the configuration names
/// (an absolute path or `..` would have the run create and, with `--force`, overwrite files
/// outside the directories it was given). Refused, naming the key's line: a Windows path
/// without `-dir`, and a value whose name part names no file (`x/`, `..`).
pub fn place_backup_file(
    p: &super::parse::Parsed,
    dir_given: bool,
    file: &str,
) -> Result<String, ConfigError> {
    let written = p.config.backup.backup_file.as_str();
    let view = super::reader::View::new(file, "BackupUser", p.ini.section("BackupUser"));
    let rule = |message: String| ConfigError::Rule {
        file: file.to_string(),
        line: view.line_of("BackupFile"),
        message,
    };
    if written.is_empty() {
        return Ok(String::new());
    }
    if matches!(name_part(written), "" | "." | "..") {
        return Err(rule(format!(
            "[BackupUser] BackupFile={written} names no file; give a file name such as sqliosim.bak"
        )));
    }
    if dir_given {
        return Ok(name_part(written).to_string());
    }
    if is_windows_path(written) {
        return Err(rule(format!(
            "[BackupUser] BackupFile={written} is a Windows path; pass -dir DIR (or --dir DIR) to create {} in DIR, or write a Linux path",
            name_part(written)
        )));
    }
    Ok(written.to_string())
}

/// Maps `name.mdx:stream` to `name.mdx.stream` (Linux has no NTFS streams); `None` if `name`
/// has no stream. A `:$DATA` type suffix is dropped; the default stream maps to the file itself.
pub fn stream_to_sibling(name: &str) -> Option<String> {
    let (dir, last) = match name.rfind('/') {
        Some(i) => name.split_at(i + 1),
        None => ("", name),
    };
    let (base, stream) = last.split_once(':')?;
    let stream = stream.split(':').next().unwrap_or_default();
    Some(if stream.is_empty() {
        format!("{dir}{base}")
    } else {
        format!("{dir}{base}.{stream}")
    })
}

/// Places each `[FileN]` (or the `-dir` pair) and returns the files with absolute paths.
pub fn place(
    config: &Config,
    origins: &[FileOrigin],
    dirs: &[PathBuf],
    base: &Path,
    file: &str,
    w: &mut Vec<Warning>,
) -> Result<Vec<(FileSpec, Origin)>, ConfigError> {
    let from_file: Vec<(FileSpec, Origin)> = config
        .files
        .iter()
        .zip(origins)
        .map(|(s, (label, line))| {
            (
                s.clone(),
                Origin {
                    label: format!("[{label}]"),
                    file: file.into(),
                    line: *line,
                },
            )
        })
        .collect();
    if dirs.is_empty() {
        return from_file
            .into_iter()
            .map(|(s, o)| place_one(s, o, None, base, w))
            .collect();
    }
    let templates = if from_file.is_empty() {
        let origin = Origin {
            label: DIR_PAIR_LABEL.into(),
            file: "command line".into(),
            line: 0,
        };
        dir_pair(DEFAULT_DIR_SIZE_MB)
            .into_iter()
            .map(|s| (s, origin.clone()))
            .collect()
    } else {
        from_file
    };
    let mut placed = Vec::new();
    for dir in dirs {
        for (spec, origin) in &templates {
            placed.push(place_one(spec.clone(), origin.clone(), Some(dir), base, w)?);
        }
    }
    Ok(placed)
}

/// Resolves one file's name: into `dir` (name part only) when given, else against `base`.
fn place_one(
    mut spec: FileSpec,
    origin: Origin,
    dir: Option<&PathBuf>,
    base: &Path,
    w: &mut Vec<Warning>,
) -> Result<(FileSpec, Origin), ConfigError> {
    let written = spec.path.to_string_lossy().into_owned();
    let mut name = match dir {
        Some(_) => name_part(&written).to_string(),
        None if is_windows_path(&written) => return Err(windows_path(&origin, &written)),
        None => written.clone(),
    };
    if let Some(sibling) = stream_to_sibling(&name) {
        w.push(stream_warning(&origin, &written, &name, &sibling));
        name = sibling;
    }
    spec.path = dir.map_or(base, |d| d.as_path()).join(name);
    Ok((spec, origin))
}

/// The error for a Windows path given without `-dir`.
fn windows_path(origin: &Origin, written: &str) -> ConfigError {
    ConfigError::Rule {
        file: origin.file.clone(),
        line: origin.line,
        message: format!(
            "{} FileName={written} is a Windows path; pass -dir DIR (or --dir DIR) to create {} \
             in DIR, or write a Linux path",
            origin.label,
            name_part(written)
        ),
    }
}

/// The warning for an NTFS stream name mapped to a sibling file.
fn stream_warning(origin: &Origin, written: &str, name: &str, sibling: &str) -> Warning {
    let owner = name.split(':').next().unwrap_or(name);
    Warning {
        file: origin.file.clone(),
        line: (origin.line > 0).then_some(origin.line),
        message: format!(
            "{} FileName={written} names an NTFS stream, which Linux does not have; \
             it becomes the separate file {sibling} beside {owner}",
            origin.label
        ),
    }
}

/// Applies `-size MB`: data files start at MB and may grow to 2×MB; log files get half, ≤ 50 MB.
pub fn apply_size(files: &mut [(FileSpec, Origin)], size_mb: u64) {
    for (spec, origin) in files {
        if spec.log_file {
            spec.initial_size_mb = log_size(size_mb);
            spec.max_size_mb = spec.initial_size_mb;
        } else {
            spec.initial_size_mb = size_mb;
            spec.max_size_mb = size_mb * 2;
            // The pair -dir makes grows by a tenth of its size (docs/configuration.md); a
            // [FileN]'s own Increment is the user's and stays.
            if origin.label == DIR_PAIR_LABEL {
                spec.increment_mb = (size_mb / 10).max(1);
            }
        }
    }
}

/// Stops unless there is at least one data file and one log file, and no path is used twice.
pub fn check_file_set(files: &[(FileSpec, Origin)], file: &str) -> Result<(), ConfigError> {
    let rule = |message: String| ConfigError::Rule {
        file: file.to_string(),
        line: 0,
        message,
    };
    for (log, kind, hint) in [
        (false, "data", "LogFile=FALSE"),
        (true, "log", "LogFile=TRUE"),
    ] {
        if !files.iter().any(|(s, _)| s.log_file == log) {
            return Err(rule(format!(
                "no {kind} file: add a [FileN] section with FileName=, InitialSize= and {hint}, \
                 or pass -dir DIR to create sqliosim.mdx and sqliosim.ldx in DIR"
            )));
        }
    }
    // By path, so that many files are checked in linear time.
    let mut first: std::collections::HashMap<&std::path::Path, &Origin> =
        std::collections::HashMap::with_capacity(files.len());
    for (b, ob) in files {
        if let Some(oa) = first.insert(&b.path, ob) {
            return Err(rule(format!(
                "{} and {} both resolve to {}; give each file its own name or directory",
                oa.label,
                ob.label,
                b.path.display()
            )));
        }
    }
    Ok(())
}

/// SQLIOSim lowers Increment so that Increment × MaxExtends < MaxMemoryMB / data files; a file
/// whose Increment drops to 0 is no longer shrinkable. Changes to shrinkable files are reported.
pub fn adjust_increments(
    files: &mut [(FileSpec, Origin)],
    max_memory_mb: u64,
    max_extends: u32,
    w: &mut Vec<Warning>,
) {
    let data = files.iter().filter(|(s, _)| !s.log_file).count().max(1) as u64;
    let limit = max_memory_mb / data;
    let extends = u64::from(max_extends.max(1));
    for (spec, origin) in files.iter_mut() {
        if spec.increment_mb == 0 || spec.increment_mb * extends < limit {
            continue;
        }
        let lowered = limit.saturating_sub(1) / extends;
        let mut message = format!(
            "{} {}: Increment={} lowered to {lowered} so that Increment × MaxExtends ({extends}) \
             stays below MaxMemoryMB / data files ({max_memory_mb} / {data} = {limit})",
            origin.label,
            spec.path.display(),
            spec.increment_mb
        );
        if lowered == 0 && spec.shrinkable {
            message.push_str("; the file is not shrinkable");
        }
        // A file that is not shrinkable never uses its Increment, so the change is not news.
        if spec.shrinkable {
            w.push(Warning {
                file: origin.file.clone(),
                line: (origin.line > 0).then_some(origin.line),
                message,
            });
        }
        spec.increment_mb = lowered;
        spec.shrinkable &= lowered > 0;
    }
}

/// The smallest data file's pages at its initial size (for page-count checks).
pub fn smallest_data_pages(files: &[(FileSpec, Origin)]) -> Option<(u64, &FileSpec)> {
    files
        .iter()
        .filter(|(s, _)| !s.log_file)
        .map(|(s, _)| (s.initial_size_mb * PAGES_PER_MB, s))
        .min_by_key(|(p, _)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_windows_paths_and_streams() {
        assert!(is_windows_path(r"f:\sqliosim.mdx"));
        assert!(is_windows_path(r"\\server\share\x.mdx"));
        assert!(is_windows_path("D:/x.mdx"));
        assert!(!is_windows_path("/mnt/a:b/x.mdx"));
        assert!(!is_windows_path("sqliosim.mdx:replica"));
        assert_eq!(name_part(r"f:\dir\sqliosim.mdx"), "sqliosim.mdx");
        assert_eq!(
            stream_to_sibling("sqliosim.mdx:replica").as_deref(),
            Some("sqliosim.mdx.replica")
        );
        assert_eq!(
            stream_to_sibling("a/x.mdx:s:$DATA").as_deref(),
            Some("a/x.mdx.s")
        );
        assert_eq!(stream_to_sibling("x.mdx::$DATA").as_deref(), Some("x.mdx"));
        assert_eq!(stream_to_sibling("/mnt/a:b/x.mdx"), None);
    }

    #[test]
    fn size_rule_halves_and_caps_the_log() {
        assert_eq!(log_size(500), 50);
        assert_eq!(log_size(64), 32);
        assert_eq!(log_size(1), 1);
        let pair = dir_pair(500);
        assert_eq!(
            (
                pair[0].initial_size_mb,
                pair[0].max_size_mb,
                pair[0].increment_mb
            ),
            (500, 1000, 50)
        );
        assert_eq!((pair[1].initial_size_mb, pair[1].max_size_mb), (50, 50));
    }
}
