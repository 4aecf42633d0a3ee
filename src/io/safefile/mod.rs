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
mod dir;
mod exposure;
mod fresh_dir;
mod private;
mod replace;

pub use bounded::{check_size, read_bounded, read_bounded_in, read_checked, Kind, TooBig};
pub use dir::Dir;
pub use exposure::exposure;
pub use replace::{check_replaceable, replace, Replacement};

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, FileType, Mode, OFlags, Stat};
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
