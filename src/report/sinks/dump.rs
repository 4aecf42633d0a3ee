//! Page dumps: the raw received and expected images of a corrupt page, and a text file that
//! decodes both headers and shows the differing bytes (like SQLIOSim's SqlSimErrorDump files).
//!
//! A received image holds whatever the file read held, which may be bytes only root can read
//! (a data file of a root-only set, or one another user slipped in): every dump is mode 0600
//! in directories of mode 0700 (`dumps/` and the per-run one), whatever the umask.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::findings::Finding;
use crate::io::safefile::{Create, Dir, Use};

use crate::report::error::ReportError;
use crate::report::sinks::dump_text::dump_text;

/// Writes dumps into one directory, numbering repeated dumps of the same page.
#[derive(Debug)]
pub struct DumpWriter {
    dir: PathBuf,
    /// The directory, opened (and made) at the first dump; never a symlink, always ours.
    opened: Option<Dir>,
    seen: HashMap<(String, u64), u32>,
}

/// The files written for one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpFiles {
    /// The text file (decoded headers and differences): the "dump file" of the log entry.
    pub text: PathBuf,
    /// The raw bytes read, if they were kept.
    pub received: Option<PathBuf>,
    /// The raw bytes expected, if they could be regenerated.
    pub expected: Option<PathBuf>,
}

/// The per-run directory's parent when `dir` is one (`dumps/` of `dumps/RUNID/`): the tool's
/// own directory too, checked and made as one ([`Dir::own_subdir`]), never followed.
fn dumps_root(dir: &Path) -> Option<&Path> {
    dir.parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "dumps"))
}

/// Opens the tool's own directory `dir` (made when missing; never a symlink, ours), and the
/// `dumps/` above a per-run one the same way.
fn own_dir(dir: &Path) -> Result<Dir, ReportError> {
    if let (Some(root), Some(name)) = (dumps_root(dir), dir.file_name()) {
        return Ok(own_dir(root)?.private_subdir(name)?);
    }
    let (parent, name) = Dir::of(dir)?;
    Ok(parent.private_subdir(&name)?)
}

impl DumpWriter {
    /// Dumps go into `dir` (created on the first dump).
    pub fn new(dir: impl Into<PathBuf>) -> DumpWriter {
        DumpWriter {
            dir: dir.into(),
            opened: None,
            seen: HashMap::new(),
        }
    }

    /// Refuses at once a dump directory that exists and is not one of ours (a symlink, a file,
    /// another user's directory), instead of at the first finding.
    pub fn check_existing(&mut self) -> Result<(), ReportError> {
        let exists = |p: &Path| p.symlink_metadata().is_ok();
        if let Some(root) = dumps_root(&self.dir) {
            if exists(root) {
                let (parent, name) = Dir::of(root)?;
                let root_dir = parent.private_subdir(&name)?;
                if let Some(name) = self.dir.file_name() {
                    if root_dir.stat(name)?.is_some() {
                        self.opened = Some(root_dir.private_subdir(name)?);
                    }
                }
            }
            return Ok(());
        }
        let (parent, name) = Dir::of(&self.dir)?;
        if parent.stat(&name)?.is_some() {
            self.opened = Some(parent.private_subdir(&name)?);
        }
        Ok(())
    }

    fn open(&mut self) -> Result<&Dir, ReportError> {
        if self.opened.is_none() {
            self.opened = Some(own_dir(&self.dir)?);
        }
        Ok(self.opened.as_ref().expect("opened above"))
    }

    /// The directory dumps went to, as opened when the first was written (another
    /// descriptor of it); `None` when none was written. Readers of the dumps (the bundle) go
    /// through it, never through the path again: the path may name another directory now.
    pub fn opened(&self) -> Option<Dir> {
        self.opened.as_ref().and_then(|d| d.try_clone().ok())
    }

    /// The directory dumps go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `<file>.<page>.<n>.received`, `.expected` and `.txt` for a finding.
    pub fn write(&mut self, f: &Finding) -> Result<DumpFiles, ReportError> {
        let file = f.path.file_name().map_or_else(
            || format!("file{}", f.file_id),
            |n| n.to_string_lossy().into_owned(),
        );
        let n = self.seen.entry((file.clone(), f.page_id)).or_insert(0);
        *n += 1;
        let stem = format!("{file}.{}.{n}", f.page_id);
        let dir = self.open()?;
        let raw = |ext: &str, bytes: &Option<Vec<u8>>| -> Result<Option<PathBuf>, ReportError> {
            let Some(bytes) = bytes else { return Ok(None) };
            write_dump(dir, &format!("{stem}.{ext}"), bytes).map(Some)
        };
        let received = raw("received", &f.received)?;
        let expected = raw("expected", &f.expected_image)?;
        let text = write_dump(dir, &format!("{stem}.txt"), dump_text(f).as_bytes())?;
        Ok(DumpFiles {
            text,
            received,
            expected,
        })
    }
}

/// Writes one dump file in `dir`: a new file, or one of ours from an earlier run emptied.
fn write_dump(dir: &Dir, name: &str, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    let path = dir.join(name.as_ref());
    let mut f = dir.open_private(name.as_ref(), Create::Either, Use::Own)?;
    f.set_len(0)
        .and_then(|_| f.write_all(bytes))
        .map_err(|e| ReportError::io(&path, e))?;
    Ok(path)
}
