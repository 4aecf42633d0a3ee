//! A directory opened once ([`Dir`]): every name the tool opens, creates or replaces is opened
//! relative to its descriptor, never following a symlink, and checked on the descriptor it
//! got (see the module above for why).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::{
    blocking, check_fd, os, problem_of, refused, split, Create, NameProblem, SafeFileError, Use,
};

/// A directory opened once; names in it are opened relative to its descriptor.
#[derive(Debug)]
pub struct Dir {
    pub(super) fd: OwnedFd,
    pub(super) path: PathBuf,
}

impl Dir {
    /// Opens the directory at `path` as the user gave it (symlinks in it followed: the user
    /// chose it; the run header says when it is exposed, see [`super::exposure`]).
    pub fn open(path: &Path) -> Result<Dir, SafeFileError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rfs::open(path, flags, Mode::empty()).map_err(|e| match e {
            Errno::NOTDIR => refused(path, NameProblem::NotDirectory),
            e => os(path, "open the directory", e),
        })?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The directory holding `path`, and the name in it.
    pub fn of(path: &Path) -> Result<(Dir, OsString), SafeFileError> {
        let (dir, name) = split(path)?;
        Ok((Dir::open(&dir)?, name))
    }

    /// Where the directory is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in this directory, for messages.
    pub fn join(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    /// A new file with no name in this directory's filesystem (`O_TMPFILE`, mode 0600, with
    /// `flags` such as O_DIRECT): no planted entry can take its place, nothing can open it by
    /// name, and it is gone when closed, whatever ends the process.
    pub fn unnamed_file(&self, flags: OFlags) -> Result<File, SafeFileError> {
        let how = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC | flags;
        rfs::openat(&self.fd, ".", how, Mode::from_raw_mode(0o600))
            .map(File::from)
            .map_err(|e| os(&self.path, "create an unnamed file in", e))
    }

    /// The tool's own subdirectory `name` (created when missing, mode 0755): never a symlink,
    /// and owned by us, so that nobody else can plant names in it.
    pub fn own_subdir(&self, name: &OsStr) -> Result<Dir, SafeFileError> {
        let path = self.join(name);
        match rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(os(&path, "create the directory", e)),
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&self.fd, name, flags, Mode::empty())
            .map_err(|e| self.classify(name, e, "open the directory"))?;
        let st = rfs::fstat(&fd).map_err(|e| os(&path, "stat", e))?;
        let me = rustix::process::geteuid().as_raw();
        if st.st_uid != me {
            return Err(refused(&path, NameProblem::Owner(st.st_uid)));
        }
        Ok(Dir { fd, path })
    }

    /// Opens `name` for reading and writing as one of the tool's files (`use_` says whose it
    /// may be), creating it as `how` says; never follows a symlink, never waits on a FIFO,
    /// never truncates.
    pub fn open_file(&self, name: &OsStr, how: Create, use_: Use) -> Result<File, SafeFileError> {
        self.open_with(name, how, use_, OFlags::empty())
    }

    /// As [`Dir::open_file`], with `extra` flags (O_DIRECT, O_DSYNC for the data files).
    pub fn open_with(
        &self,
        name: &OsStr,
        how: Create,
        use_: Use,
        extra: OFlags,
    ) -> Result<File, SafeFileError> {
        let mut flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        flags |= extra;
        flags |= match how {
            Create::New => OFlags::CREATE | OFlags::EXCL,
            Create::Either => OFlags::CREATE,
            Create::Existing => OFlags::empty(),
        };
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))
            .map_err(|e| self.classify(name, e, "open"))?;
        self.checked(fd, name, use_)
    }

    /// Opens an existing `name` read-only, never following a symlink or waiting on a FIFO;
    /// `None` when there is no such name.
    pub fn open_read(&self, name: &OsStr, use_: Use) -> Result<Option<File>, SafeFileError> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        match rfs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => self.checked(fd, name, use_).map(Some),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.classify(name, e, "open")),
        }
    }

    pub(super) fn checked(
        &self,
        fd: OwnedFd,
        name: &OsStr,
        use_: Use,
    ) -> Result<File, SafeFileError> {
        let path = self.join(name);
        check_fd(&fd, &path, use_)?;
        blocking(&fd, &path)?;
        Ok(File::from(fd))
    }

    /// What an open of `name` that failed with `e` ran into: a refusal when the name is
    /// something the tool must not use, else the OS error.
    pub(super) fn classify(&self, name: &OsStr, e: Errno, what: &'static str) -> SafeFileError {
        let path = self.join(name);
        let st = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok();
        let found = st.as_ref().and_then(|st| problem_of(st, Use::Own));
        let problem = match (e, found) {
            (Errno::LOOP, _) | (_, Some(NameProblem::Symlink)) => Some(NameProblem::Symlink),
            (Errno::ISDIR, _) => Some(NameProblem::Directory),
            (Errno::NOTDIR, _) => Some(NameProblem::NotDirectory),
            (_, Some(p)) => Some(p),
            (Errno::EXIST, None) if st.is_some() => Some(NameProblem::Exists),
            _ => None,
        };
        match problem {
            Some(p) => refused(&path, p),
            None => os(&path, what, e),
        }
    }

    /// The status of `name` itself (a symlink not followed); `None` when there is none.
    pub fn stat(&self, name: &OsStr) -> Result<Option<Stat>, SafeFileError> {
        match rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(os(&self.join(name), "stat", e)),
        }
    }

    /// Removes `name` (a file; a symlink is removed, not followed).
    pub fn unlink(&self, name: &OsStr) -> Result<(), SafeFileError> {
        rfs::unlinkat(&self.fd, name, AtFlags::empty())
            .map_err(|e| os(&self.join(name), "remove", e))
    }

    /// Renames `from` over `to`, both in this directory.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> Result<(), SafeFileError> {
        rfs::renameat(&self.fd, from, &self.fd, to)
            .map_err(|e| os(&self.join(to), "rename over", e))
    }

    /// Renames `from` to `to`, both in this directory, only when no entry of any kind has the
    /// name `to` (a dangling symlink, a FIFO or a directory included): `Ok(false)` when it is
    /// taken, and then nothing changed. It never replaces an entry, even one planted between a
    /// check and the rename: `renameat2(RENAME_NOREPLACE)`, or where the filesystem lacks that
    /// flag (EINVAL), a hard link under the new name (which fails on a taken name) and the
    /// old name's removal. Where the filesystem has neither (some FUSE and network
    /// filesystems: EPERM, ENOSYS or EOPNOTSUPP for the link), a check and a plain rename, but
    /// only in a directory nobody else may write (ours, no group or other write bit), where
    /// nobody can plant a name between the two; elsewhere it is refused, saying why.
    pub fn rename_new(&self, from: &OsStr, to: &OsStr) -> Result<bool, SafeFileError> {
        match rfs::renameat_with(&self.fd, from, &self.fd, to, rfs::RenameFlags::NOREPLACE) {
            Ok(()) => Ok(true),
            Err(Errno::EXIST) => Ok(false),
            Err(Errno::INVAL | Errno::NOSYS) => {
                match rfs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty()) {
                    Ok(()) => {}
                    Err(Errno::EXIST) => return Ok(false),
                    Err(Errno::PERM | Errno::NOSYS | Errno::OPNOTSUPP) => {
                        return self.rename_new_private(from, to)
                    }
                    Err(e) => return Err(os(&self.join(to), "rename to", e)),
                }
                self.unlink(from).map(|()| true)
            }
            Err(e) => Err(os(&self.join(to), "rename to", e)),
        }
    }

    /// [`Dir::rename_new`] on a filesystem without `RENAME_NOREPLACE` or hard links: a check
    /// that `to` is free, then a plain rename, only where nobody else may write the directory.
    fn rename_new_private(&self, from: &OsStr, to: &OsStr) -> Result<bool, SafeFileError> {
        let st = rfs::fstat(&self.fd).map_err(|e| os(&self.path, "stat", e))?;
        let ours = st.st_uid == rustix::process::geteuid().as_raw();
        if !ours || st.st_mode & 0o022 != 0 {
            return Err(os(
                &self.join(to),
                "rename to (the filesystem has neither renameat2(RENAME_NOREPLACE) nor hard links, and others may write the directory, so a name could be planted between a check and a rename)",
                Errno::PERM,
            ));
        }
        if self.stat(to)?.is_some() {
            return Ok(false);
        }
        self.rename(from, to).map(|()| true)
    }

    /// Makes the directory's entries durable (after a create or rename).
    pub fn sync(&self) -> Result<(), SafeFileError> {
        rfs::fsync(&self.fd).map_err(|e| os(&self.path, "sync the directory", e))
    }
}
