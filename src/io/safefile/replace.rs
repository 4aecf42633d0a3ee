//! Files replaced whole (the JSON summary, reports, bundles, man pages, the metrics textfile,
//! the journal's compaction): written to a temporary created with `O_EXCL` beside the name,
//! then renamed over it. A rename replaces whatever the name was (it never writes through a
//! symlink or a hard link), and a name that is not one of our own regular files is refused
//! before it is replaced, so that the refusal is said instead of passing unnoticed.
//!
//! The temporary's name ends in 16 random hex digits (`.NAME.<random>.tmp`), drawn afresh and
//! retried when taken ([`Dir::new_temp`]): with a fixed name, anyone who could write the
//! directory planted it first and the summary or the metrics were never written. A temporary
//! left by a process killed between its create and its rename is not looked for: no later
//! write needs its name, so it costs only its space, and removing names that merely look
//! like ours would remove another process's temporary while it is being written.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{problem_of, refused, Dir, SafeFileError, Use};

/// A replacement being written; renamed over its name by [`Replacement::commit`], removed if
/// dropped before.
#[derive(Debug)]
pub struct Replacement {
    dir: Dir,
    name: OsString,
    tmp: OsString,
    file: Option<File>,
}

impl Replacement {
    /// Starts replacing `path`, through a temporary `.NAME.<random>.tmp` beside it (mode 0644
    /// before the umask: the summaries and reports are for others to read).
    pub fn create(path: &Path) -> Result<Replacement, SafeFileError> {
        Replacement::hidden(path, 0o644)
    }

    /// As [`Replacement::create`], the file mode 0600: for content that may hold bytes of
    /// files only we can read (the evidence bundle packs page dumps).
    pub fn create_private(path: &Path) -> Result<Replacement, SafeFileError> {
        Replacement::hidden(path, 0o600)
    }

    fn hidden(path: &Path, mode: u32) -> Result<Replacement, SafeFileError> {
        let (dir, name) = Dir::of(path)?;
        let mut prefix = OsString::from(".");
        prefix.push(&name);
        prefix.push(".");
        Replacement::start(dir, name, &prefix, ".tmp", mode)
    }

    /// Starts replacing `path` through a temporary `PREFIX.<random>` in the same directory.
    pub fn create_through(path: &Path, prefix: &OsStr) -> Result<Replacement, SafeFileError> {
        let (dir, name) = Dir::of(path)?;
        let mut prefix = prefix.to_os_string();
        prefix.push(".");
        Replacement::start(dir, name, &prefix, "", 0o644)
    }

    fn start(
        dir: Dir,
        name: OsString,
        prefix: &OsStr,
        suffix: &str,
        mode: u32,
    ) -> Result<Replacement, SafeFileError> {
        check_target(&dir, &name)?;
        let (tmp, file) = dir.new_temp(prefix, suffix, mode)?;
        Ok(Replacement {
            dir,
            name,
            tmp,
            file: Some(file),
        })
    }

    /// The temporary, to write the new content into.
    pub fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("a replacement has its file until committed")
    }

    /// Where the temporary is, for messages.
    pub fn temp_path(&self) -> PathBuf {
        self.dir.join(&self.tmp)
    }

    /// Renames the temporary over the name (checked again just before); returns the file,
    /// now under the name.
    pub fn commit(mut self) -> Result<File, SafeFileError> {
        check_target(&self.dir, &self.name)?;
        self.dir.rename(&self.tmp, &self.name)?;
        Ok(self.file.take().expect("committed once"))
    }

    /// As [`Replacement::commit`], the content and the rename made durable (fdatasync, then
    /// the directory synced), so a crash leaves the old content or the new one.
    pub fn commit_durable(mut self) -> Result<File, SafeFileError> {
        let tmp = self.temp_path();
        self.file()
            .sync_data()
            .map_err(|source| SafeFileError::Os {
                path: tmp,
                what: "fdatasync",
                source,
            })?;
        check_target(&self.dir, &self.name)?;
        self.dir.rename(&self.tmp, &self.name)?;
        let file = self.file.take().expect("committed once");
        self.dir.sync()?;
        Ok(file)
    }
}

impl Drop for Replacement {
    fn drop(&mut self) {
        if self.file.is_some() {
            let _ = self.dir.unlink(&self.tmp);
        }
    }
}

/// Refuses a name that exists and is not one of our own regular files with one link.
fn check_target(dir: &Dir, name: &OsStr) -> Result<(), SafeFileError> {
    match dir
        .stat(name)?
        .as_ref()
        .and_then(|st| problem_of(st, Use::Own))
    {
        Some(p) => Err(refused(&dir.join(name), p)),
        None => Ok(()),
    }
}

/// Refuses `path` now if it could not be replaced later (an output checked before the work
/// that produces it, so a planted name is said at once).
pub fn check_replaceable(path: &Path) -> Result<(), SafeFileError> {
    let (dir, name) = Dir::of(path)?;
    check_target(&dir, &name)
}

/// Replaces `path` with `bytes` (see [`Replacement`]).
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), SafeFileError> {
    let mut r = Replacement::create(path)?;
    let tmp = r.temp_path();
    r.file()
        .write_all(bytes)
        .map_err(|source| SafeFileError::Os {
            path: tmp,
            what: "write",
            source,
        })?;
    r.commit().map(drop)
}
