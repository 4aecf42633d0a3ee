//! The filesystem state: backing directory, inode numbers, open handles, fault table.
//!
//! The namespace is flat: the mount root shows the regular files of the backing
//! directory plus the virtual control file. Inode numbers are handed out by name
//! for the life of the daemon. The `fuser::Filesystem` methods live in ops.rs.

#![expect(
    unsafe_code,
    reason = "the pass-through filesystem calls libc on raw descriptors and buffers"
)]

use fuser::{Errno, FileAttr, FileType, INodeNo};
use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cache::{Cache, DEFAULT_MAX_MIB};
use crate::control::{ControlHandle, CONTROL_INO};
use crate::faults::FaultTable;

/// Locks a mutex, carrying on after a panic elsewhere: the data stays usable for a test tool.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An open file of the mount.
pub enum Handle {
    /// A regular file: its inode and the backing file.
    File(u64, Arc<File>),
    /// The control file: its command and reply buffers.
    Control(Arc<Mutex<ControlHandle>>),
}

impl Clone for Handle {
    fn clone(&self) -> Self {
        match self {
            Handle::File(ino, f) => Handle::File(*ino, Arc::clone(f)),
            Handle::Control(c) => Handle::Control(Arc::clone(c)),
        }
    }
}

/// Two-way map between file names and the inode numbers given to them.
#[derive(Default)]
struct Names {
    by_name: HashMap<String, u64>,
    by_ino: HashMap<u64, String>,
}

/// The whole daemon state shared by the FUSE worker threads.
pub struct FaultFs {
    backing: PathBuf,
    names: Mutex<Names>,
    next_ino: AtomicU64,
    handles: Mutex<HashMap<u64, Handle>>,
    next_fh: AtomicU64,
    /// Armed faults; locked only to plan a request, never across I/O.
    pub faults: Mutex<FaultTable>,
    /// Log each fault that fires and each rejected request to stderr.
    pub verbose: bool,
    /// Refuse opens with O_DIRECT (EINVAL), as filesystems without direct I/O support do.
    pub refuse_direct: bool,
    /// Ignore the O_DSYNC flag the kernel puts on a write: only an fsync request makes data
    /// durable, as in FUSE daemons that persist on fsync alone (LazyFS).
    pub ignore_dsync: bool,
    /// The volatile write cache (off unless `--volatile-cache` or `cache on`).
    pub cache: Mutex<Cache>,
    /// Held across every write-back so that two never reorder bytes on a backing file.
    pub writeback: Mutex<()>,
    /// What the kernel sent: which writes carried O_DSYNC, how many fsyncs came.
    pub requests: Requests,
}

/// Counts of the requests that decide durability, as the kernel sent them: a test can tell
/// an `O_DSYNC` write the kernel followed with a FUSE fsync from one it did not.
#[derive(Debug, Default)]
pub struct Requests {
    /// Writes to regular files.
    pub writes: AtomicU64,
    /// Of them, writes whose flags carry O_DSYNC (or O_SYNC).
    pub dsync_writes: AtomicU64,
    /// fsync/fdatasync requests on regular files.
    pub fsyncs: AtomicU64,
}

impl Requests {
    /// The status line: `requests writes=N dsync_writes=N fsyncs=N`.
    pub fn status(&self) -> String {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "requests writes={} dsync_writes={} fsyncs={}\n",
            n(&self.writes),
            n(&self.dsync_writes),
            n(&self.fsyncs)
        )
    }
}

impl FaultFs {
    /// A filesystem over `backing` with the given fault table.
    pub fn new(backing: PathBuf, faults: FaultTable, verbose: bool) -> Self {
        FaultFs {
            backing,
            names: Mutex::new(Names::default()),
            next_ino: AtomicU64::new(CONTROL_INO + 1),
            handles: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            faults: Mutex::new(faults),
            verbose,
            refuse_direct: false,
            ignore_dsync: false,
            cache: Mutex::new(Cache::new(false, DEFAULT_MAX_MIB)),
            writeback: Mutex::new(()),
            requests: Requests::default(),
        }
    }

    /// Path of a file in the backing directory.
    pub fn backing_path(&self, name: &str) -> PathBuf {
        self.backing.join(name)
    }

    /// The backing directory.
    pub fn backing_dir(&self) -> &Path {
        &self.backing
    }

    /// The inode number of `name`, given one now if it has none.
    pub fn ino_for(&self, name: &str) -> u64 {
        let mut names = lock(&self.names);
        if let Some(&ino) = names.by_name.get(name) {
            return ino;
        }
        let ino = self.next_ino.fetch_add(1, Ordering::Relaxed);
        names.by_name.insert(name.to_string(), ino);
        names.by_ino.insert(ino, name.to_string());
        ino
    }

    /// The inode number of `name`, if it has one.
    pub fn ino_of(&self, name: &str) -> Option<u64> {
        lock(&self.names).by_name.get(name).copied()
    }

    /// The current name of inode `ino`, if it still has one.
    pub fn name_of(&self, ino: u64) -> Option<String> {
        lock(&self.names).by_ino.get(&ino).cloned()
    }

    /// Forgets a name after unlink; open handles keep their backing file.
    pub fn forget_name(&self, name: &str) {
        let mut names = lock(&self.names);
        if let Some(ino) = names.by_name.remove(name) {
            names.by_ino.remove(&ino);
        }
    }

    /// Moves the inode of `from` to `to`, replacing whatever `to` was.
    pub fn rename_name(&self, from: &str, to: &str) {
        let mut names = lock(&self.names);
        if let Some(old) = names.by_name.remove(to) {
            names.by_ino.remove(&old);
        }
        if let Some(ino) = names.by_name.remove(from) {
            names.by_name.insert(to.to_string(), ino);
            names.by_ino.insert(ino, to.to_string());
        }
    }

    /// Stores an open handle and returns its number.
    pub fn add_handle(&self, handle: Handle) -> u64 {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        lock(&self.handles).insert(fh, handle);
        fh
    }

    /// The handle `fh`, or EBADF.
    pub fn handle(&self, fh: u64) -> Result<Handle, Errno> {
        lock(&self.handles).get(&fh).cloned().ok_or(Errno::EBADF)
    }

    /// Drops handle `fh`, closing its backing file once no request uses it.
    pub fn remove_handle(&self, fh: u64) -> Option<Handle> {
        lock(&self.handles).remove(&fh)
    }

    /// Attributes of a backing file under inode `ino` (its size includes cached writes).
    pub fn file_attr(&self, ino: u64, name: &str) -> Result<FileAttr, Errno> {
        let meta = std::fs::metadata(self.backing_path(name)).map_err(Errno::from)?;
        if !meta.is_file() {
            return Err(Errno::ENOENT);
        }
        let mut attr = attr_from(ino, &meta);
        // Writes held in the volatile cache may extend the file.
        attr.size = self.shown_size(ino, attr.size);
        Ok(attr)
    }

    /// Attributes of the root directory, taken from the backing directory.
    pub fn root_attr(&self) -> Result<FileAttr, Errno> {
        let meta = std::fs::metadata(&self.backing).map_err(Errno::from)?;
        Ok(attr_from(INodeNo::ROOT.0, &meta))
    }
}

/// Builds FUSE attributes from a backing file's metadata, under our inode number.
pub fn attr_from(ino: u64, meta: &Metadata) -> FileAttr {
    let at = |secs: i64, nsecs: i64| {
        let d = Duration::new(secs.max(0) as u64, nsecs.clamp(0, 999_999_999) as u32);
        UNIX_EPOCH + d
    };
    FileAttr {
        ino: INodeNo(ino),
        size: meta.size(),
        blocks: meta.blocks(),
        atime: at(meta.atime(), meta.atime_nsec()),
        mtime: at(meta.mtime(), meta.mtime_nsec()),
        ctime: at(meta.ctime(), meta.ctime_nsec()),
        crtime: at(meta.ctime(), meta.ctime_nsec()),
        kind: if meta.is_dir() {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: (meta.mode() & 0o7777) as u16,
        nlink: meta.nlink() as u32,
        uid: meta.uid(),
        gid: meta.gid(),
        rdev: 0,
        blksize: meta.blksize() as u32,
        flags: 0,
    }
}

/// Attributes of the virtual control file: size 0, read and write by the owner.
pub fn control_attr() -> FileAttr {
    let now = SystemTime::now();
    FileAttr {
        ino: INodeNo(CONTROL_INO),
        size: 0,
        blocks: 0,
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind: FileType::RegularFile,
        perm: 0o600,
        nlink: 1,
        // SAFETY: getuid and getgid have no preconditions and cannot fail.
        uid: unsafe { libc::getuid() },
        // SAFETY: as above.
        gid: unsafe { libc::getgid() },
        rdev: 0,
        blksize: 4096,
        flags: 0,
    }
}
