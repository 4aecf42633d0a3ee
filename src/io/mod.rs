//! The storage layer: one trait is the only door to the disk.
//!
//! [`Backend`] opens and removes files; [`Storage`] is one open file. Backends: `direct`
//! (O_DIRECT, O_DSYNC on request), `buffered`, `service` (the same files, their reads and writes
//! carried by the I/O service: one thread, one io_uring, kernel AIO or psync ring), and `faulty` (in
//! memory, injects faults on command, for tests and the self-test).
//!
//! What goes through the door, so that the faulty backend (`--fault-injection`, the self-test)
//! and faultfs reach it:
//!
//! - the data and log files: [`Backend::open`] → [`Storage`] (page reads and writes, direct or
//!   buffered, carried by the I/O service when one is running);
//! - the durability journal: [`Backend::create_append`] → [`AppendFile`] (append, fdatasync,
//!   truncate a failed append, replace whole by rename) and [`Backend::read_whole`] (verify and
//!   `--resume` read it back through the same backend that wrote it);
//! - the log file read whole by `verify` and `--resume`: [`file::read_all`] over its
//!   [`Storage`].
//!
//! Every name the tool creates or writes, whichever door it goes through, is opened by
//! [`safefile`] (no symlink followed, no FIFO waited on, the descriptor checked).
//!
//! What does not, and why: the run lock files (`app::lock`) are `flock`ed, and a `flock` needs a
//! kernel file descriptor; the in-memory faulty backend has none, and a lock is about processes
//! on one kernel, not about the device, so the lock files stay on `std::fs` (faultfs still
//! reaches them, being a real filesystem). Reports (XML log, JSON, dumps, HTML) and the
//! configuration are the tool's own output and input, not files under test.

pub mod aio;
pub mod align;
pub mod append;
pub mod buffered;
pub mod direct;
pub mod faulty;
pub mod fiemap;
pub mod file;
pub mod flush_gate;
pub(crate) mod hook_thread;
pub mod nodes;
pub mod oserr;
pub mod post;
pub mod safefile;
pub mod service;
pub(crate) mod sysfs;

pub use align::{AlignedBuf, BufPool, Frame, BUF_ALIGN};
pub use append::AppendFile;
pub use buffered::BufferedBackend;
pub use direct::DirectBackend;
pub use faulty::{FaultyBackend, FaultyStorage};
pub use flush_gate::{FlushGate, Ticket};
pub use post::{Completion, Completions, OnComplete, PostOp};
pub use service::{IoService, PostRing, RingFile, ServiceBackend};

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How to open a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Create the file if it does not exist.
    pub create: bool,
    /// Bypass the page cache (O_DIRECT).
    pub direct: bool,
    /// Every write is durable when it completes (O_DSYNC).
    pub write_through: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            create: true,
            direct: true,
            write_through: false,
        }
    }
}

/// One open file. Every direct transfer's offset, length and memory address is a multiple of
/// the file's [`Storage::dio_align`] unit (data pages are 8192 bytes, so any unit up to 8192).
pub trait Storage: Send + Sync + std::fmt::Debug {
    /// Reads into `buf` at `offset`; returns the bytes read (fewer only at end of file).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes all of `buf` at `offset`.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Reads consecutive buffers starting at `offset` in one request (preadv).
    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize>;
    /// Writes consecutive buffers starting at `offset` in one request (pwritev).
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()>;
    /// Makes completed writes durable (fdatasync).
    fn sync_data(&self) -> io::Result<()>;
    /// Reserves space up to `len` bytes without writing it (fallocate); grows the file.
    fn allocate(&self, len: u64) -> io::Result<()>;
    /// Sets the file length (truncate or extend with a hole).
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Current file length.
    fn len(&self) -> io::Result<u64>;
    /// The bytes the filesystem holds for the file (`st_blocks` × 512), when it is a file on
    /// a filesystem; `None` where nothing says (in memory).
    fn allocated(&self) -> Option<u64> {
        None
    }
    /// True when the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Path the file was opened with.
    fn path(&self) -> &Path;
    /// The direct-I/O unit of this file, decided once when it was opened: offsets and lengths
    /// of direct transfers are multiples of it (512 when nothing else is known).
    fn dio_align(&self) -> u32 {
        DEFAULT_DIO_ALIGN
    }
    /// Posts `op` without waiting (see [`post`]): its completion, tagged `token` and holding
    /// the request's frames, is pushed to `to`. By default the transfer is done on the spot
    /// and its completion queued at once.
    fn post(&self, op: PostOp, to: &std::sync::Arc<Completions>, token: u64) {
        let (result, frames) = op.run_blocking(self);
        to.push(Completion {
            token,
            result,
            done_at: crate::clock::now(),
            frames,
        });
    }
    /// True when [`Storage::post`] returns before the transfer is done (requests really in
    /// flight at once), false when it transfers on the spot.
    fn posts_async(&self) -> bool {
        false
    }
    /// The file for a poster's own io_uring ([`PostRing`]), when this storage lets posters
    /// carry its requests themselves instead of through [`Storage::post`] (the service-backed
    /// storage on io_uring, unless switched off); `None` by default. The handle keeps the file
    /// open while a request on it is in flight.
    fn ring_file(&self) -> Option<RingFile> {
        None
    }
}

/// The direct-I/O unit assumed when neither statx nor the block device says anything.
pub const DEFAULT_DIO_ALIGN: u32 = 512;

/// What a backend found out about direct I/O where a file lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectIoInfo {
    /// Memory alignment required, if the kernel reported one (statx DIOALIGN).
    pub mem_align: Option<u32>,
    /// File offset alignment required, if reported.
    pub offset_align: Option<u32>,
    /// Filesystem name (ext4, xfs, tmpfs, btrfs, fuse, …).
    pub filesystem: String,
    /// False when the filesystem accepts O_DIRECT without honouring it (tmpfs, btrfs, FUSE).
    pub honoured: bool,
    /// Logical block size of the block device under the filesystem (sysfs), when there is one.
    pub logical_block: Option<u32>,
    /// Physical block size of that device (sysfs): 4096 on a 512e disk, whose logical block
    /// is 512.
    pub physical_block: Option<u32>,
}

impl DirectIoInfo {
    /// The unit every direct transfer is aligned to in offset and length: statx's offset
    /// alignment, else the device's logical block size, else 512.
    pub fn unit(&self) -> u32 {
        self.offset_align
            .or(self.logical_block)
            .unwrap_or(DEFAULT_DIO_ALIGN)
            .max(DEFAULT_DIO_ALIGN)
    }

    /// The unit a log file created here is written in, as SQL Server sizes its log I/O: the
    /// device's physical sector (up to a page; 4096 on a 512e disk), at least the direct-I/O
    /// unit, and with `force_4k` (SQL Server's trace flag 1800) at least 4096.
    pub fn log_unit(&self, force_4k: bool) -> u32 {
        let physical = self
            .physical_block
            .filter(|p| p.is_power_of_two() && *p as usize <= crate::page::PAGE_SIZE)
            .unwrap_or(0);
        let forced = if force_4k { 4096 } else { 0 };
        self.unit().max(physical).max(forced)
    }

    /// False where an `O_DSYNC` write completes without reaching the medium, whatever submits
    /// it (FUSE): a write-through write there needs an fdatasync of its own to be durable.
    pub fn dsync_flushed(&self) -> bool {
        direct::dsync_flushed(&self.filesystem)
    }

    /// Where [`DirectIoInfo::unit`] comes from, for the run header and the log.
    pub fn unit_source(&self) -> String {
        match (self.offset_align, self.mem_align, self.logical_block) {
            (Some(o), Some(m), _) => format!("statx DIOALIGN: offset {o}, memory {m}"),
            (_, _, Some(b)) => format!("logical block size of the device: {b}"),
            _ => "nothing reported: 512 assumed".to_string(),
        }
    }

    /// One line for the run header and the log, e.g.
    /// `4096 bytes (statx DIOALIGN: offset 4096, memory 512; ext4)`.
    pub fn describe(&self) -> String {
        format!(
            "{} bytes ({}; {})",
            self.unit(),
            self.unit_source(),
            self.filesystem
        )
    }
}

/// Opens and removes files. The only way the engine reaches the disk.
///
/// Every backend opens files its own way; removing them, testing that they exist and the
/// direct-I/O facts default to the real filesystem's, which the direct, buffered and
/// service-backed backends share. A backend not on the real filesystem (the in-memory faulty
/// one) overrides all three.
pub trait Backend: Send + Sync {
    /// The clock a simulation on this backend runs on: the real one, or the in-memory
    /// backend's stepped clock (`crate::clock`). A backend that wraps another must pass its
    /// clock on: a stepped backend's waits would otherwise wait for a clock nobody steps.
    fn clock(&self) -> crate::clock::Clock {
        crate::clock::Clock::Real
    }
    /// Opens (and with `opts.create`, creates) a file.
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError>;
    /// Removes a file; a missing file is not an error.
    fn remove(&self, path: &Path) -> Result<(), IoError> {
        direct::remove_file(path)
    }
    /// True when the file exists.
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    /// Renames `from` over `to` (both in one directory) and makes the rename durable: a
    /// finished backup stream replaces the last finished one whole, never before it is.
    fn rename(&self, from: &Path, to: &Path) -> Result<(), IoError> {
        direct::rename_file(from, to)
    }
    /// Creates (or empties) a file written by appending (the journal), its directory entry
    /// made durable.
    fn create_append(&self, path: &Path) -> Result<Box<dyn AppendFile>, IoError> {
        Ok(Box::new(append::DiskAppendFile::create(path)?))
    }
    /// Opens a file written by appending and keeps what it holds (appends go after it), so
    /// that its first [`AppendFile::replace`] swaps the old content for the new atomically
    /// (a restarted run's journal); created empty when missing.
    fn open_append(&self, path: &Path) -> Result<Box<dyn AppendFile>, IoError> {
        Ok(Box::new(append::DiskAppendFile::open(path)?))
    }
    /// The whole content of the journal, read through the page cache: whoever owns it
    /// ([`safefile::Use::Input`], `verify`) or only ours ([`safefile::Use::Own`], a run that
    /// resumes over it), checked before it is read, as its size is.
    fn read_whole(&self, path: &Path, use_: safefile::Use) -> Result<Vec<u8>, IoError> {
        append::read_whole(path, use_)
    }
    /// Direct-I/O facts for the filesystem holding `path` (or its parent directory).
    fn direct_io_info(&self, path: &Path) -> DirectIoInfo {
        direct::direct_io_info(path)
    }
    /// True when the backend itself holds requests beyond MaxOutstandingIO (an I/O service of
    /// that depth with a queue in front), so the simulation needs no gate of its own.
    fn caps_outstanding_io(&self) -> bool {
        false
    }
    /// The most requests the backend's I/O service carries at once, if it has one.
    fn depth(&self) -> Option<usize> {
        None
    }
}

/// A storage error that names the file and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The filesystem refused O_DIRECT.
    #[error("{path}: the {filesystem} filesystem refused direct I/O (O_DIRECT): {source}; set NoBuffering=FALSE and UseScatterGather=FALSE in [CONFIG] to run with buffered I/O")]
    DirectRefused {
        /// File that was opened.
        path: PathBuf,
        /// Filesystem name.
        filesystem: String,
        /// The OS error.
        source: io::Error,
    },
    /// The name holds something the tool must not open (a planted symlink, hard link, FIFO,
    /// device or directory; see [`safefile`]).
    #[error(transparent)]
    Unsafe(#[from] safefile::SafeFileError),
    /// Any other failure on a named file.
    #[error("{path}: {what}: {source}")]
    Os {
        /// File concerned.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: io::Error,
    },
}
