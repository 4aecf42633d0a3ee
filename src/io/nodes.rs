//! What a path names before the tool creates, deletes or writes it: a regular file, a device
//! node, a FIFO, a socket, a directory; and whether a new file there would land among the
//! device nodes of `/dev`.
//!
//! A device node named as a data file must never be unlinked and replaced by a regular file
//! (on devtmpfs, that is RAM, and the run would test memory), and a mistyped device name must
//! never become a new file in `/dev`. `/dev/shm` and other filesystems mounted below `/dev` are
//! ordinary places for files: only the filesystem of `/dev` itself is refused.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What is at a path (following symbolic links).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// Nothing.
    Missing,
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A block device node.
    BlockDevice,
    /// A character device node.
    CharDevice,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
}

impl NodeKind {
    /// Says what is at `path`.
    pub fn of(path: &Path) -> NodeKind {
        let Ok(m) = std::fs::metadata(path) else {
            return NodeKind::Missing;
        };
        let t = m.file_type();
        if t.is_file() {
            NodeKind::Regular
        } else if t.is_dir() {
            NodeKind::Directory
        } else if t.is_block_device() {
            NodeKind::BlockDevice
        } else if t.is_char_device() {
            NodeKind::CharDevice
        } else if t.is_fifo() {
            NodeKind::Fifo
        } else {
            NodeKind::Socket
        }
    }

    /// "a block device", "a FIFO", … for messages.
    pub fn describe(self) -> &'static str {
        match self {
            NodeKind::Missing => "missing",
            NodeKind::Regular => "a regular file",
            NodeKind::Directory => "a directory",
            NodeKind::BlockDevice => "a block device",
            NodeKind::CharDevice => "a character device",
            NodeKind::Fifo => "a FIFO (named pipe)",
            NodeKind::Socket => "a socket",
        }
    }
}

/// True when a file created at `path` would be on the filesystem of `/dev` (devtmpfs): its
/// nearest existing directory is below `/dev` and on the same filesystem as `/dev`.
pub fn among_device_nodes(path: &Path) -> bool {
    let Some(dir) = nearest_dir(path) else {
        return false;
    };
    let dev_of = |p: &Path| std::fs::metadata(p).ok().map(|m| m.dev());
    dir.starts_with("/dev") && dev_of(&dir).is_some() && dev_of(&dir) == dev_of(Path::new("/dev"))
}

/// Why `dir` (resolved: symlinks and `..` followed) is no directory for the tool's files, if
/// it is not: the filesystem of `/dev` (as for [`among_device_nodes`]; `/dev/shm` is a place
/// for files), anything under `/proc` or `/sys` (the kernel's views, where a write is a
/// command), or not a directory at all. `None` when it does not exist (its open says so).
pub fn no_place_for_files(dir: &Path) -> Option<String> {
    let real = std::fs::canonicalize(dir).ok()?;
    let said = |what: &str| Some(format!("{what} ({})", real.display()));
    if !real.is_dir() {
        return Some(format!(
            "{} is not a directory",
            NodeKind::of(&real).describe()
        ));
    }
    if real.starts_with("/proc") || real.starts_with("/sys") {
        return said("is among the kernel's files of /proc or /sys");
    }
    if among_device_nodes(&real.join("x")) {
        return said("is among the device nodes of /dev");
    }
    None
}

/// The canonical form of the closest existing directory holding `path`.
fn nearest_dir(path: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(path).ok()?;
    let mut at = abs.parent();
    while let Some(dir) = at {
        if let Ok(c) = std::fs::canonicalize(dir) {
            return Some(c);
        }
        at = dir.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").expect("write");
        assert_eq!(NodeKind::of(&f), NodeKind::Regular);
        assert_eq!(NodeKind::of(dir.path()), NodeKind::Directory);
        assert_eq!(NodeKind::of(&dir.path().join("none")), NodeKind::Missing);
        assert_eq!(NodeKind::of(Path::new("/dev/null")), NodeKind::CharDevice);
    }

    #[test]
    fn dev_is_refused_but_not_a_temporary_directory() {
        if std::fs::metadata("/dev").is_ok() {
            assert!(among_device_nodes(Path::new("/dev/loop99")));
            assert!(among_device_nodes(Path::new("/dev/no/such/dir/x.lock")));
        }
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(!among_device_nodes(&dir.path().join("x")));
        assert!(!among_device_nodes(Path::new("relative/x.mdx")));
    }
}
