//! The asynchronous I/O [`Ring`] shared by capacity runs and the simulation's I/O service
//! ([`crate::io::service`]): a fixed number of aligned buffer slots, and a `submit` / `reap` API
//! that carries a caller-chosen `user_data` through each operation. It is called a ring after
//! io_uring's submission and completion rings, which the psync back end imitates with helper
//! threads. (The user-facing `--engine` flag chooses its [`RingKind`].)
//!
//! Capacity runs use the slots ([`Op`], [`Ring::submit`]): one ring per worker thread, the
//! buffers registered with the kernel. Their files come from the io layer as
//! [`FileStorage`] handles (opened by `io::direct::open_existing_file`), which own the descriptors
//! the ring registers with io_uring and keep them open while any ring uses them; no raw
//! descriptor is handed around. The simulation brings its own memory and file
//! descriptors ([`ExtOp`], the unsafe [`Ring::submit_external`]): single buffers and
//! scatter/gather lists, on any open file.
//!
//! Three back ends sit behind [`Ring`]: io_uring (`uring`) with batched submission, registered
//! buffers and registered files; kernel AIO (`kaio`, `--engine libaio`: `io_submit` and
//! `io_getevents`, as SQL Server on Linux submits, asynchronous on O_DIRECT files only); and
//! a pread/pwrite fallback (`psync`) used when io_uring or kernel AIO is refused (EPERM,
//! ENOSYS, EOPNOTSUPP) or when asked for. Dispatch is a plain `match`, not a trait object, so
//! the hot path has no indirect call.

#![expect(
    unsafe_code,
    reason = "io_uring and kernel AIO submission and pread/pwrite on raw buffers and descriptors need unsafe; here and in kaio.rs, kaio_sys.rs, psync.rs, uring.rs and tests.rs"
)]

mod buffers;
mod kaio;
mod kaio_sys;
pub mod probe;
mod psync;
mod uring;

pub use buffers::AlignedBuffers;

use std::os::fd::RawFd;
use std::sync::Arc;

use super::file::FileStorage;

/// Which back end to use, or which one a built ring ended up with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RingKind {
    /// io_uring, one io_uring instance per ring.
    Uring,
    /// pread/pwrite: inline at depth 1, otherwise a pool of `depth` helper threads.
    Psync,
    /// Kernel AIO (`io_submit`/`io_getevents`), one AIO context per ring; named `libaio` as
    /// fio names it.
    #[serde(rename = "libaio")]
    Kaio,
}

impl RingKind {
    /// Every name, as typed on the command line (`bench --engine`).
    pub const NAMES: [&'static str; 3] = ["uring", "psync", "libaio"];

    /// Parses a command-line name: `uring` (or `io_uring`), `psync`, or `libaio` (or `aio`,
    /// `kaio`).
    pub fn from_name(name: &str) -> Option<RingKind> {
        match name {
            "uring" | "io_uring" => Some(RingKind::Uring),
            "psync" => Some(RingKind::Psync),
            "libaio" | "aio" | "kaio" => Some(RingKind::Kaio),
            _ => None,
        }
    }

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RingKind::Uring => "uring",
            RingKind::Psync => "psync",
            RingKind::Kaio => "libaio",
        }
    }
}

/// Direction of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read `len` bytes at `offset` into the slot's buffer.
    Read,
    /// Write `len` bytes from the slot's buffer at `offset`.
    Write,
}

/// One operation to submit.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    /// Read or write.
    pub kind: Direction,
    /// Index into the files the ring was built with.
    pub file: u32,
    /// Byte offset in the file.
    pub offset: u64,
    /// Buffer slot (0..depth); must not be in flight already.
    pub slot: u32,
    /// Length in bytes, at most the slot length.
    pub len: u32,
    /// Handed back unchanged in the [`RingCompletion`].
    pub user_data: u64,
}

/// The offset of an [`ExtOp`] on a file without a position (an eventfd, a pipe): read(2) and
/// write(2) instead of pread(2) and pwrite(2). io_uring reads -1 the same way.
pub const NO_OFFSET: u64 = u64::MAX;

/// Caller-owned memory of an [`ExtOp`].
#[derive(Debug, Clone, Copy)]
pub enum ExtMem {
    /// One buffer of `len` bytes at `ptr`.
    Buf {
        /// Start of the buffer.
        ptr: *mut u8,
        /// Its length.
        len: u32,
    },
    /// A scatter/gather list: `count` iovecs at `iov` (at most IOV_MAX, 1024).
    Iov {
        /// The first iovec.
        iov: *const libc::iovec,
        /// How many.
        count: u32,
    },
}

/// One operation on caller-owned memory and a caller-owned file descriptor; see
/// [`Ring::submit_external`] for what the caller must guarantee.
#[derive(Debug, Clone, Copy)]
pub struct ExtOp {
    /// Read or write.
    pub kind: Direction,
    /// An open file descriptor.
    pub fd: RawFd,
    /// Byte offset in the file, or [`NO_OFFSET`].
    pub offset: u64,
    /// The memory to read into or write from.
    pub mem: ExtMem,
    /// Handed back unchanged in the [`RingCompletion`].
    pub user_data: u64,
}

/// The outcome of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingCompletion {
    /// The `user_data` of the [`Op`].
    pub user_data: u64,
    /// Bytes transferred, or the errno.
    pub result: Result<u32, i32>,
}

/// How to build a [`Ring`].
#[derive(Debug, Clone, Copy)]
pub struct RingConfig {
    /// Requested back end; io_uring falls back to psync when the kernel refuses it.
    pub kind: RingKind,
    /// Maximum operations in flight, and the number of buffer slots.
    pub depth: u32,
    /// Length of each buffer slot in bytes (a multiple of 4096 is safest for O_DIRECT).
    pub slot_len: usize,
    /// io_uring: send queued operations to the kernel in groups of this many (fio's
    /// `iodepth_batch_submit`): a full group goes when the next operation is queued, and
    /// `reap` sends whatever is left together with its wait.
    pub submit_batch: u32,
}

/// Errors from building or driving a ring.
#[derive(Debug, thiserror::Error)]
pub enum RingError {
    /// The aligned buffers could not be mapped.
    #[error("cannot allocate {bytes} bytes of aligned I/O buffers: {cause}")]
    Buffers {
        /// Requested size.
        bytes: usize,
        /// The OS error.
        cause: std::io::Error,
    },
    /// io_uring could not be set up (and no fallback was allowed).
    #[error("io_uring setup failed: {0}")]
    Setup(std::io::Error),
    /// Submitting or waiting failed.
    #[error("I/O submission failed: {0}")]
    Submit(std::io::Error),
    /// Kernel AIO could not be set up for this depth (and was not refused outright).
    #[error("kernel AIO setup (io_setup) failed for a depth of {depth}: {cause}. The AIO events of all processes are capped by /proc/sys/fs/aio-max-nr (sysctl fs.aio-max-nr): raise it, lower MaxOutstandingIO or --outstanding, or use --engine uring or psync")]
    KaioSetup {
        /// The events asked for.
        depth: u32,
        /// The OS error.
        cause: std::io::Error,
    },
    /// io_uring refused the depth asked for (EINVAL above the kernel's largest ring).
    #[error("io_uring setup failed for a depth of {depth}: {cause}. The kernel's io_uring takes at most {max} entries per ring (IORING_MAX_ENTRIES): set MaxOutstandingIO or --outstanding to {max} or less, or use --engine psync", max = URING_MAX_ENTRIES)]
    TooDeep {
        /// The entries asked for.
        depth: u32,
        /// The OS error.
        cause: std::io::Error,
    },
    /// A psync helper thread could not be started.
    #[error("cannot start an I/O helper thread: {0}; raise the limit on threads (ulimit -u) or on memory (ulimit -v), or lower MaxOutstandingIO / --outstanding")]
    Thread(std::io::Error),
}

/// The most entries the kernel gives one io_uring (IORING_MAX_ENTRIES).
pub const URING_MAX_ENTRIES: u32 = 32768;

/// A per-thread I/O ring: aligned buffers plus an io_uring ring, an AIO context or a psync
/// pool.
pub enum Ring {
    /// The io_uring back end.
    Uring(Box<uring::UringRing>),
    /// The pread/pwrite back end.
    Psync(psync::PsyncRing),
    /// The kernel AIO back end.
    Kaio(Box<kaio::KaioRing>),
}

impl Ring {
    /// Builds a ring over `files`; io_uring falls back to psync when the kernel refuses it.
    pub fn new(cfg: &RingConfig, files: Arc<[FileStorage]>) -> Result<Ring, RingError> {
        assert!(cfg.depth > 0, "ring depth must be at least 1");
        let buffers = AlignedBuffers::new(cfg.depth as usize, cfg.slot_len)?;
        let batch = cfg.submit_batch.max(1) as usize;
        match cfg.kind {
            RingKind::Psync => return Ok(Ring::Psync(psync::PsyncRing::new(files, buffers)?)),
            RingKind::Kaio => return Ring::new_kaio(cfg.depth, files, buffers, batch),
            RingKind::Uring => {}
        }
        match uring::UringRing::new(files.clone(), buffers, batch) {
            Ok(ring) => Ok(Ring::Uring(Box::new(ring))),
            Err((err, buffers)) if uring::is_refusal(&err) => {
                Ok(Ring::Psync(psync::PsyncRing::new(files, buffers)?))
            }
            Err((cause, _))
                if cause.raw_os_error() == Some(libc::EINVAL) && cfg.depth > URING_MAX_ENTRIES =>
            {
                Err(RingError::TooDeep {
                    depth: cfg.depth,
                    cause,
                })
            }
            Err((err, _)) => Err(RingError::Setup(err)),
        }
    }

    /// A kernel AIO ring; psync when the kernel refuses AIO (ENOSYS without CONFIG_AIO).
    fn new_kaio(
        depth: u32,
        files: Arc<[FileStorage]>,
        buffers: AlignedBuffers,
        batch: usize,
    ) -> Result<Ring, RingError> {
        match kaio::KaioRing::new(files.clone(), buffers, batch) {
            Ok(ring) => Ok(Ring::Kaio(Box::new(ring))),
            Err((err, buffers)) if uring::is_refusal(&err) => {
                Ok(Ring::Psync(psync::PsyncRing::new(files, buffers)?))
            }
            Err((cause, _)) => Err(RingError::KaioSetup { depth, cause }),
        }
    }

    /// The back end actually in use.
    pub fn kind(&self) -> RingKind {
        match self {
            Ring::Uring(_) => RingKind::Uring,
            Ring::Psync(_) => RingKind::Psync,
            Ring::Kaio(_) => RingKind::Kaio,
        }
    }

    /// The buffer of `slot`, to read what a completed read brought in.
    pub fn buffer(&self, slot: u32) -> &[u8] {
        self.buffers().slot(slot)
    }

    /// The buffer of `slot`, to prepare a write; the slot must not be in flight.
    pub fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        match self {
            Ring::Uring(e) => e.buffers_mut().slot_mut(slot),
            Ring::Psync(e) => e.buffers_mut().slot_mut(slot),
            Ring::Kaio(e) => e.buffers_mut().slot_mut(slot),
        }
    }

    fn buffers(&self) -> &AlignedBuffers {
        match self {
            Ring::Uring(e) => e.buffers(),
            Ring::Psync(e) => e.buffers(),
            Ring::Kaio(e) => e.buffers(),
        }
    }

    /// Queues one operation; io_uring sends queued operations in groups of `submit_batch`,
    /// and whatever is left at the next `reap`.
    pub fn submit(&mut self, op: Op) -> Result<(), RingError> {
        match self {
            Ring::Uring(e) => e.submit(op),
            Ring::Psync(e) => e.submit(op),
            Ring::Kaio(e) => e.submit(op),
        }
    }

    /// Queues one operation on caller-owned memory, as `submit` does for a slot. io_uring uses
    /// the plain READ/WRITE/READV/WRITEV opcodes (the memory is not registered); psync runs
    /// pread/pwrite/preadv/pwritev (read/write for [`NO_OFFSET`]) in a helper thread, or inline
    /// at depth 1 — so at depth 1 a read that waits for data (an eventfd) blocks `submit`;
    /// kernel AIO uses PREAD/PWRITE/PREADV/PWRITEV, and for [`NO_OFFSET`] a poll followed by
    /// read/write in `reap`.
    /// Slot and external operations share the `depth` operations in flight. Like the kernel, an
    /// external operation may complete with fewer bytes than asked; the caller continues it.
    ///
    /// # Safety
    ///
    /// From this call until the completion carrying `op.user_data` has been reaped (or the
    /// ring has been dropped, which waits for every operation in flight):
    /// - the memory `op.mem` describes — for `Iov`, the iovec array as well as every buffer it
    ///   points to — must stay allocated, and nobody else may touch it (the kernel writes into
    ///   it for a read and reads it for a write);
    /// - `op.fd` must stay open and refer to the same file.
    ///
    /// When a reap fails (the ring can no longer be waited on), dropping the ring does not
    /// wait: the memory of every external operation not reaped must then be leaked by its
    /// owner, never freed or reused (`service::ring_slots::drain_or_leak`).
    pub unsafe fn submit_external(&mut self, op: ExtOp) -> Result<(), RingError> {
        match self {
            // SAFETY: the caller upholds the contract above, which is the back ends' contract.
            Ring::Uring(e) => unsafe { e.submit_external(op) },
            // SAFETY: as above.
            Ring::Psync(e) => unsafe { e.submit_external(op) },
            // SAFETY: as above.
            Ring::Kaio(e) => unsafe { e.submit_external(op) },
        }
    }

    /// Sends what is queued and waits for at least `min` completions (capped at what is in
    /// flight), appending every completion available to `out`.
    pub fn reap(&mut self, min: usize, out: &mut Vec<RingCompletion>) -> Result<(), RingError> {
        match self {
            Ring::Uring(e) => e.reap(min, out),
            Ring::Psync(e) => e.reap(min, out),
            Ring::Kaio(e) => e.reap(min, out),
        }
    }

    /// Operations submitted and not yet reaped.
    pub fn in_flight(&self) -> usize {
        match self {
            Ring::Uring(e) => e.in_flight(),
            Ring::Psync(e) => e.in_flight(),
            Ring::Kaio(e) => e.in_flight(),
        }
    }

    /// Waits for every operation in flight (used before stopping).
    pub fn drain(&mut self, out: &mut Vec<RingCompletion>) -> Result<(), RingError> {
        while self.in_flight() > 0 {
            self.reap(self.in_flight(), out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
