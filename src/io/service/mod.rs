//! The service-backed backend: files opened exactly as the direct and buffered backends open
//! them, whose reads and writes go through one shared [`IoService`] — one thread owning one
//! [`Ring`](crate::io::aio::Ring) (io_uring, kernel AIO, or psync helpers) with at most
//! MaxOutstandingIO
//! requests in flight. Callers block until their own request completes; requests beyond the
//! depth wait in the service's queue, which is how MaxOutstandingIO is enforced.
//!
//! Syncs, allocation, truncation and the length go straight to the file, as they are rare and
//! the service has nothing to add to them.
//!
//! On io_uring, and when asked ([`ServiceBackend::with_own_rings`]), an asynchronous actor
//! carries its posted requests on a [`PostRing`] of its own instead ([`Storage::ring_file`],
//! issue #15 §3): no thread hand-off per request. The synchronous callers, the log and the
//! psync ring keep the shared service.
//!
//! When asked ([`ServiceBackend::with_own_sync`]: a run whose engine `--engine` did not
//! name), the synchronous reads and writes — a caller that waits for its own request:
//! RandomUser, the audit's reads, the log's scans — are made on the
//! caller's own thread (`pread`/`pwrite`), as a SQL Server worker submits its own I/O, instead
//! of being handed to the service thread and a helper and back: two thread hand-offs, tens of
//! microseconds on a device that answers in a few. Posted (asynchronous) requests keep the
//! service and its depth. MaxOutstandingIO then holds both by the simulation's gate.

mod handle;
mod own;
mod request;
mod ring_slots;
mod serve;
mod state;

pub use handle::{IoService, ServiceWatch};
pub use own::{PostRing, RingFile};

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;

use super::direct;
use super::file::FileStorage;
use super::{Backend, IoError, OpenOptions, Storage};
use crate::io::aio::{RingError, RingKind};

/// Opens files like the direct backend (or, when `buffered`, like the buffered backend) and
/// routes their reads and writes through one [`IoService`]; removes and describes them as both
/// do (the `Backend` defaults).
#[derive(Debug, Clone)]
pub struct ServiceBackend {
    service: Arc<IoService>,
    buffered: bool,
    own_rings: bool,
    own_sync: bool,
}

impl ServiceBackend {
    /// Starts the service (`depth` requests in flight at most) for a backend that opens files
    /// with O_DIRECT on request, or never when `buffered`.
    pub fn start(kind: RingKind, depth: usize, buffered: bool) -> Result<Self, RingError> {
        let service = IoService::start(kind, depth)?;
        Ok(ServiceBackend {
            own_rings: false,
            own_sync: false,
            service: Arc::new(service),
            buffered,
        })
    }

    /// With `on`, posters may carry their posted requests on a [`PostRing`] of their own when
    /// the service runs io_uring; without (the default), every request goes through the
    /// shared service, the asynchronous actors' posted ones too.
    pub fn with_own_rings(mut self, on: bool) -> Self {
        self.own_rings = on && self.service.kind() == RingKind::Uring;
        self
    }

    /// True when posters carry their requests on rings of their own ([`Storage::ring_file`]).
    pub fn own_rings(&self) -> bool {
        self.own_rings
    }

    /// With `on`, synchronous reads and writes are made on the caller's own thread, not
    /// through the service (posted requests keep it).
    pub fn with_own_sync(mut self, on: bool) -> Self {
        self.own_sync = on;
        self
    }

    /// True when synchronous reads and writes are made on the caller's own thread.
    pub fn own_sync(&self) -> bool {
        self.own_sync
    }

    /// The service carrying the I/O (for its kind, depth and high-water mark).
    pub fn service(&self) -> &IoService {
        &self.service
    }
}

impl Backend for ServiceBackend {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError> {
        let opts = OpenOptions {
            direct: opts.direct && !self.buffered,
            ..opts
        };
        Ok(Arc::new(ServiceStorage {
            file: Arc::new(direct::open_storage(path, opts)?),
            service: Arc::clone(&self.service),
            own_rings: self.own_rings,
            own_sync: self.own_sync,
        }))
    }

    /// Not when posters have rings of their own, nor when synchronous requests are made on
    /// their callers' threads: those requests never reach the service's queue, so
    /// MaxOutstandingIO needs the simulation's gate again.
    fn caps_outstanding_io(&self) -> bool {
        !self.own_rings && !self.own_sync
    }

    fn depth(&self) -> Option<usize> {
        Some(self.service.depth())
    }
}

/// One open file whose reads and writes go through the I/O service.
#[derive(Debug)]
pub struct ServiceStorage {
    /// Shared with the posted requests in flight on it, which keep it open.
    file: Arc<FileStorage>,
    service: Arc<IoService>,
    own_rings: bool,
    /// Synchronous reads and writes on the caller's thread ([`ServiceBackend::with_own_sync`]).
    own_sync: bool,
}

impl Storage for ServiceStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        if self.own_sync {
            return self.file.read_at(buf, offset);
        }
        self.service.read(self.file.file().as_fd(), buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        if self.own_sync {
            return self.file.write_at(buf, offset);
        }
        self.service.write(self.file.file().as_fd(), buf, offset)
    }

    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> std::io::Result<usize> {
        if self.own_sync {
            return self.file.read_vectored_at(bufs, offset);
        }
        self.service
            .read_vectored(self.file.file().as_fd(), bufs, offset)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> std::io::Result<()> {
        if self.own_sync {
            return self.file.write_vectored_at(bufs, offset);
        }
        self.service
            .write_vectored(self.file.file().as_fd(), bufs, offset)
    }

    fn post(&self, op: crate::io::PostOp, to: &Arc<crate::io::Completions>, token: u64) {
        self.service.post(&self.file, op, to, token);
    }

    fn posts_async(&self) -> bool {
        true
    }

    fn ring_file(&self) -> Option<RingFile> {
        self.own_rings.then(|| RingFile(Arc::clone(&self.file)))
    }

    fn sync_data(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    fn allocate(&self, len: u64) -> std::io::Result<()> {
        self.file.allocate(len)
    }

    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.file.set_len(len)
    }

    fn len(&self) -> std::io::Result<u64> {
        self.file.len()
    }

    fn allocated(&self) -> Option<u64> {
        self.file.allocated()
    }

    fn path(&self) -> &Path {
        self.file.path()
    }

    fn dio_align(&self) -> u32 {
        self.file.dio_align()
    }
}
