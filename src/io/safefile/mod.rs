//! The one way the tool opens a name for writing, creates or replaces one of its own files,
//! and opens a file handed to it to read: so that a symlink, hard link, FIFO, device or
//! directory planted under that name by another user of a shared directory cannot redirect,
//! truncate or stall it (docs/security.md).
//!
//! How: the directory is opened once (`O_DIRECTORY`, following the path the user gave) and the
//! name opened relative to it with `openat` and `O_NOFOLLOW` (a symlink is refused, never
//! followed), `O_NONBLOCK` (a FIFO opens at once instead of waiting for a writer) and, for new
//! files, `O_CREAT|O_EXCL`; then the opened descriptor — not the path, which can change between
//! a check and a use — is checked with `fstat`: a regular file, one link, owned by us. Files
//! replaced whole are written to a temporary created with `O_EXCL` under a random name in the
//! same directory and renamed over the name (a rename replaces a planted name; it never
//! writes through it). Page dumps, which may hold root-only bytes, are 0600 in a 0700
//! directory ([`Dir::private_subdir`], [`Dir::open_private`]).
//! Nothing is truncated before those checks pass.

mod bounded;
mod exposure;
mod fresh_dir;
mod private;
mod replace;

pub use bounded::{check_size, read_bounded, read_bounded_in, read_checked, Kind, TooBig};
pub use exposure::exposure;
pub use replace::{check_replaceable, replace, Replacement};

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// What is wrong with a name the tool was about to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    /// A symbolic link (never followed for a name the tool writes).
    Symlink,
    /// A regular file with more than one name: writing it would write the other names too.
    HardLinks(u64),
    /// A named pipe: opening it would wait for a writer forever.
    Fifo,
    /// A directory where a file belongs.
    Directory,
    /// A file where a directory belongs.
    NotDirectory,
    /// A UNIX socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Owned by another user than the one running the tool.
    Owner(u32),
    /// Some other kind of file that is not a regular file.
    Special,
    /// A name created by someone else meanwhile (a new file's name already taken).
    Exists,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameProblem::Symlink => write!(f, "is a symlink"),
            NameProblem::HardLinks(n) => write!(f, "has {n} hard links"),
            NameProblem::Fifo => write!(f, "is a FIFO"),
            NameProblem::Directory => write!(f, "is a directory"),
            NameProblem::NotDirectory => write!(f, "is not a directory"),
            NameProblem::Socket => write!(f, "is a socket"),
            NameProblem::CharDevice => write!(f, "is a character device"),
            NameProblem::BlockDevice => write!(f, "is a block device"),
            NameProblem::Owner(uid) => write!(f, "is owned by uid {uid}"),
            NameProblem::Special => write!(f, "is not a regular file"),
            NameProblem::Exists => write!(f, "already exists"),
        }
    }
}

/// Why a name could not be used safely.
#[derive(Debug, thiserror::Error)]
pub enum SafeFileError {
    /// The name is not what the tool may write or read (see [`NameProblem`]).
    #[error("{path}: {problem}; refusing to use it (remove it, or choose another path)")]
    Refused {
        /// The name.
        path: PathBuf,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// The system refused an operation on the name.
    #[error("{path}: cannot {what}: {source}")]
    Os {
        /// The name.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The file is larger than its kind allows (see [`Kind::limit`]); nothing was read.
    #[error(transparent)]
    TooBig(Box<TooBig>),
}

impl From<SafeFileError> for io::Error {
    fn from(e: SafeFileError) -> io::Error {
        match e {
            SafeFileError::Os { source, .. } if source.kind() == io::ErrorKind::NotFound => source,
            e => io::Error::other(e),
        }
    }
}

/// Whose file an existing name may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// One of the tool's own files (logs, JSON, dumps, lock files, journal, reports): a
    /// regular file with one link, owned by the user running the tool.
    Own,
    /// A file of the set named by the configuration (data and log files), or a lock file read
    /// by `verify`: a regular file with one link, whoever owns it.
    Named,
    /// A file given to read (a `report` input): a regular file.
    Input,
}

/// How a name is opened for writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// A new file: the name must not exist (`O_EXCL`).
    New,
    /// The existing file or a new one; never truncated here.
    Either,
    /// Only an existing file.
    Existing,
}

fn os(path: &Path, what: &'static str, e: Errno) -> SafeFileError {
    SafeFileError::Os {
        path: path.to_path_buf(),
        what,
        source: e.into(),
    }
}

fn refused(path: &Path, problem: NameProblem) -> SafeFileError {
    SafeFileError::Refused {
        path: path.to_path_buf(),
        problem,
    }
}

/// What is wrong with a file of status `st` for `use_`, if anything.
pub fn problem_of(st: &Stat, use_: Use) -> Option<NameProblem> {
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => None,
        FileType::Symlink => Some(NameProblem::Symlink),
        FileType::Fifo => Some(NameProblem::Fifo),
        FileType::Directory => Some(NameProblem::Directory),
        FileType::Socket => Some(NameProblem::Socket),
        FileType::CharacterDevice => Some(NameProblem::CharDevice),
        FileType::BlockDevice => Some(NameProblem::BlockDevice),
        FileType::Unknown => Some(NameProblem::Special),
    };
    // An allow, not an expect: the lint fires only where st_nlink is already u64.
    #[allow(
        clippy::useless_conversion,
        reason = "st_nlink is u64 on x86_64 and u32 elsewhere"
    )]
    let nlink = u64::from(st.st_nlink);
    let me = rustix::process::geteuid().as_raw();
    let links_or_owner = match use_ {
        Use::Input => None,
        _ if nlink > 1 => Some(NameProblem::HardLinks(nlink)),
        Use::Own if st.st_uid != me => Some(NameProblem::Owner(st.st_uid)),
        _ => None,
    };
    kind.or(links_or_owner)
}

/// Checks an opened file against `use_`, by its descriptor.
pub fn check_fd<Fd: AsFd>(fd: Fd, path: &Path, use_: Use) -> Result<(), SafeFileError> {
    let st = rfs::fstat(fd).map_err(|e| os(path, "stat", e))?;
    match problem_of(&st, use_) {
        Some(p) => Err(refused(path, p)),
        None => Ok(()),
    }
}

/// The directory holding `path` and the name in it.
pub(crate) fn split(path: &Path) -> Result<(PathBuf, OsString), SafeFileError> {
    let name = path.file_name().ok_or_else(|| SafeFileError::Os {
        path: path.to_path_buf(),
        what: "use",
        source: io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"),
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_os_string()))
}

/// A directory opened once; names in it are opened relative to its descriptor.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    /// Opens the directory at `path` as the user gave it (symlinks in it followed: the user
    /// chose it; the run header says when it is exposed, see [`exposure`]).
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

    fn checked(&self, fd: OwnedFd, name: &OsStr, use_: Use) -> Result<File, SafeFileError> {
        let path = self.join(name);
        check_fd(&fd, &path, use_)?;
        blocking(&fd, &path)?;
        Ok(File::from(fd))
    }

    /// What an open of `name` that failed with `e` ran into: a refusal when the name is
    /// something the tool must not use, else the OS error.
    fn classify(&self, name: &OsStr, e: Errno, what: &'static str) -> SafeFileError {
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

/// Clears `O_NONBLOCK` once the descriptor is known to be a regular file, so that later reads
/// and writes behave as usual.
fn blocking(fd: &OwnedFd, path: &Path) -> Result<(), SafeFileError> {
    let flags = rfs::fcntl_getfl(fd).map_err(|e| os(path, "read the flags of", e))?;
    rfs::fcntl_setfl(fd, flags - OFlags::NONBLOCK).map_err(|e| os(path, "set the flags of", e))
}

/// Opens `path` for writing as one of the tool's own files (see [`Dir::open_file`]).
pub fn open_own(path: &Path, how: Create) -> Result<File, SafeFileError> {
    let (dir, name) = Dir::of(path)?;
    dir.open_file(&name, how, Use::Own)
}

/// Opens `path` for writing as a file named by the configuration (see [`Use::Named`]).
pub fn open_named(path: &Path, how: Create) -> Result<File, SafeFileError> {
    let (dir, name) = Dir::of(path)?;
    dir.open_file(&name, how, Use::Named)
}

/// Opens an existing `path` read-only, never following a symlink or waiting on a FIFO, and
/// checks it against `use_`; `None` when it does not exist.
pub fn open_existing(path: &Path, use_: Use) -> Result<Option<File>, SafeFileError> {
    let (dir, name) = Dir::of(path)?;
    dir.open_read(&name, use_)
}

/// Opens a file handed to the tool to read (a `report` input, a configuration): symlinks
/// followed (the user named the path), but a FIFO or device is refused instead of waited on.
pub fn open_input(path: &Path) -> Result<File, SafeFileError> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rfs::open(path, flags, Mode::empty()).map_err(|e| os(path, "open", e))?;
    check_fd(&fd, path, Use::Input)?;
    blocking(&fd, path)?;
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests;
