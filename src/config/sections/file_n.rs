//! `[File1]`..`[FileN]`: one section per test file, numbered from 1 and read in order of N
//! (not of the file). Required keys are `FileName` and `InitialSize`; the advice about
//! `Shrinkable` and `Increment` is given here. Where the files go (`-dir`, Windows paths) and
//! their final sizes are `files`' part.

use super::{ParseContext, SectionSpec};
use crate::config::echo::yes;
use crate::config::error::{ConfigError, Warning};
use crate::config::ini::Ini;
use crate::config::model::PAGES_PER_MB;
use crate::config::reader::View;
use crate::config::save::flag;
use std::fmt::Write;
use std::path::PathBuf;

/// One `[FileN]` section.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileSpec {
    /// `FileName`: required. As written after parsing; absolute after `RunSettings::resolve`.
    pub path: PathBuf,
    /// `InitialSize`: MB, required; range 1..=1048576 (1 TB).
    pub initial_size_mb: u64,
    /// `MaxSize`: MB, default `InitialSize`; must be ≥ `InitialSize`.
    pub max_size_mb: u64,
    /// `Increment`: grow/shrink step in MB, default 0; lowered at resolve time so that
    /// Increment × MaxExtends < MaxMemoryMB / data files (0 makes the file non-shrinkable).
    pub increment_mb: u64,
    /// `Shrinkable`: the ShrinkUser may grow and shrink it, default false.
    pub shrinkable: bool,
    /// `LogFile`: holds simulated transaction log, default false.
    pub log_file: bool,
    /// `Sparse`: created with holes, default false.
    pub sparse: bool,
}

impl FileSpec {
    /// Number of 8 KB pages at the initial size.
    pub fn initial_pages(&self) -> u64 {
        self.initial_size_mb * PAGES_PER_MB
    }

    /// Number of 8 KB pages at the largest size.
    pub fn max_pages(&self) -> u64 {
        self.max_size_mb * PAGES_PER_MB
    }
}

/// Keys of every `[FileN]` section.
pub const FILE_KEYS: &[&str] = &[
    "FileName",
    "InitialSize",
    "MaxSize",
    "Increment",
    "Shrinkable",
    "LogFile",
    "Sparse",
];

/// The spec every `[FileN]` section shares.
pub static FILE_SECTION: SectionSpec = SectionSpec {
    name: "File1",
    keys: FILE_KEYS,
    ignored_key: |_| None,
};

/// The largest InitialSize / MaxSize / Increment accepted, in MB (1 TB).
pub const MAX_FILE_MB: u64 = 1 << 20;

/// A `[FileN]` section's name and the line of its `FileName`.
pub type FileOrigin = (String, usize);

/// N of a `[FileN]` section name (N ≥ 1), any case.
pub fn file_number(name: &str) -> Option<u32> {
    let digits = name
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("file"))
        .map(|_| &name[4..])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n >= 1)
}

/// Every `[FileN]` in order of N, with the line of its `FileName`.
pub(super) fn read_all(
    ini: &Ini,
    cx: &mut ParseContext,
) -> Result<(Vec<FileSpec>, Vec<FileOrigin>), ConfigError> {
    let mut numbered: Vec<_> = ini
        .sections
        .iter()
        .filter_map(|s| file_number(&s.name).map(|n| (n, s)))
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    let mut specs = Vec::new();
    let mut origins = Vec::new();
    for (_, section) in numbered {
        let v = View::new(cx.file, &section.name, Some(section));
        specs.push(file_spec(&v, cx.warnings)?);
        origins.push((section.name.clone(), v.line_of("FileName")));
    }
    Ok((specs, origins))
}

/// One `[FileN]` section.
fn file_spec(v: &View, w: &mut Vec<Warning>) -> Result<FileSpec, ConfigError> {
    let missing = |key: &str, what: &str| ConfigError::Rule {
        file: v.file.to_string(),
        line: v.line_of(key),
        message: format!("[{}] has no {key}: {what}", v.name),
    };
    let name = v
        .entry("FileName")
        .ok_or_else(|| missing("FileName", "every [FileN] section needs FileName=PATH"))?;
    if name.value.is_empty() {
        return Err(v.bad(name, "expected a file path"));
    }
    if v.entry("InitialSize").is_none() {
        return Err(missing(
            "InitialSize",
            "every [FileN] section needs InitialSize=MB",
        ));
    }
    let initial = v.uint("InitialSize", 0, 1, MAX_FILE_MB)?;
    let spec = FileSpec {
        path: PathBuf::from(&name.value),
        initial_size_mb: initial,
        max_size_mb: v.uint("MaxSize", initial, 1, MAX_FILE_MB)?,
        increment_mb: v.uint("Increment", 0, 0, MAX_FILE_MB)?,
        shrinkable: v.boolean("Shrinkable", false)?,
        log_file: v.boolean("LogFile", false)?,
        sparse: v.boolean("Sparse", false)?,
    };
    v.min_max(
        ("InitialSize", spec.initial_size_mb),
        ("MaxSize", spec.max_size_mb),
    )?;
    advise_shrinkable(v, &spec, w);
    Ok(spec)
}

/// SQLIOSim's documentation ties Shrinkable to Increment; its own samples do not, so this is
/// advice only.
fn advise_shrinkable(v: &View, spec: &FileSpec, w: &mut Vec<Warning>) {
    if spec.shrinkable && spec.increment_mb == 0 {
        w.push(Warning::at(
            v.file,
            v.line_of("Shrinkable"),
            format!(
                "[{}] Shrinkable=TRUE with Increment=0: the file will neither grow nor shrink",
                v.name
            ),
        ));
    } else if !spec.shrinkable && spec.increment_mb > 0 && spec.max_size_mb > spec.initial_size_mb {
        w.push(Warning::at(
            v.file,
            v.line_of("Increment"),
            format!(
                "[{}] Increment={} with Shrinkable=FALSE: the file keeps its size; \
                 set Shrinkable=TRUE to let it grow towards MaxSize",
                v.name, spec.increment_mb
            ),
        ));
    }
}

/// `[File1]`..`[FileN]` as `-save` writes them: the name and every key of each file.
pub fn save_files(files: &[FileSpec]) -> Vec<(String, Vec<(&'static str, String)>)> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let keys = vec![
                ("FileName", f.path.to_string_lossy().into_owned()),
                ("InitialSize", f.initial_size_mb.to_string()),
                ("MaxSize", f.max_size_mb.to_string()),
                ("Increment", f.increment_mb.to_string()),
                ("Shrinkable", flag(f.shrinkable)),
                ("LogFile", flag(f.log_file)),
                ("Sparse", flag(f.sparse)),
            ];
            (format!("File{}", i + 1), keys)
        })
        .collect()
}

/// The echo's line for each test file.
pub fn echo_files(out: &mut String, files: &[FileSpec]) {
    for (i, f) in files.iter().enumerate() {
        let _ = writeln!(
            out,
            "File{} = {}, {}, InitialSize = {} MB, MaxSize = {} MB, Increment = {} MB, \
             Shrinkable = {}, Sparse = {}",
            i + 1,
            f.path.display(),
            if f.log_file { "log" } else { "data" },
            f.initial_size_mb,
            f.max_size_mb,
            f.increment_mb,
            yes(f.shrinkable),
            yes(f.sparse)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_file_sections() {
        assert_eq!(file_number("File12"), Some(12));
        assert_eq!(file_number("file1"), Some(1));
        assert_eq!(file_number("File0"), None);
        assert_eq!(file_number("File"), None);
        assert_eq!(file_number("Filex"), None);
    }
}
