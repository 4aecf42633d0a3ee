//! The I/O service handle: starts the service thread, carries a caller's read or write to it
//! and blocks until the answer, and stops the thread when the last handle drops.
//!
//! How a caller reaches the thread, which may be blocked in the ring waiting for
//! completions: it queues its request and writes the service's eventfd, which the ring
//! itself is reading (an io_uring read, a kernel AIO poll of it, or a psync helper blocked in
//! read(2)), so one wait
//! covers new requests and completions alike. A flag spares the eventfd write while a wake-up
//! is already on its way.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;

use rustix::event::{eventfd, EventfdFlags};

use super::request::{stopped, Answer, Mem, Reply, Request};
use super::serve::Service;
use super::state::ServiceState;
use crate::io::aio::{Direction, Ring, RingConfig, RingError, RingKind};

/// One I/O service: a thread owning one ring of `depth` operations in flight, shared by any
/// number of caller threads. Cheap to share behind an `Arc`; dropping the last handle drains
/// and joins the thread.
pub struct IoService {
    shared: Arc<ServiceState>,
    thread: Option<JoinHandle<()>>,
    tid: Option<rustix::thread::Pid>,
    kind: RingKind,
    depth: usize,
}

impl std::fmt::Debug for IoService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoService")
            .field("kind", &self.kind)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

impl IoService {
    /// The deepest ring a service builds: io_uring rings have at most 32768 entries, and
    /// the psync back end starts a helper thread per request in flight.
    pub const MAX_DEPTH: usize = 16384;

    /// The depth MaxOutstandingIO=0 gives an io_uring service (SQLIOSim's 0 means "up to about
    /// 140,000"; 4,096 is deeper than any device queue and keeps the ring small).
    pub const UNCAPPED_DEPTH: usize = 4096;

    /// The depth MaxOutstandingIO=0 gives a psync service, which starts one helper thread per
    /// request in flight.
    pub const UNCAPPED_PSYNC_DEPTH: usize = 256;

    /// Starts a service whose ring keeps at most `depth` (1..=`MAX_DEPTH`) requests in
    /// flight; io_uring falls back to psync when the kernel refuses it.
    pub fn start(kind: RingKind, depth: usize) -> Result<IoService, RingError> {
        let depth = depth.clamp(1, Self::MAX_DEPTH);
        let wake = eventfd(0, EventfdFlags::CLOEXEC).map_err(|e| RingError::Setup(e.into()))?;
        // One more operation than the depth: the read of the wake-up eventfd.
        let cfg = RingConfig {
            kind,
            depth: depth as u32 + 1,
            slot_len: 0,
            // Everything started in one pass goes to the kernel with the wait that follows.
            submit_batch: depth as u32 + 1,
        };
        let ring = Ring::new(&cfg, Arc::from(Vec::new()))?;
        let kind = ring.kind();
        let shared = Arc::new(ServiceState::new(wake));
        let service = Service::new(ring, Arc::clone(&shared), depth);
        let exit = ExitGuard(Arc::clone(&shared));
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("io-service".into())
            .spawn(move || {
                let _exit = exit;
                let _ = tid_tx.send(rustix::thread::gettid());
                service.run();
            })
            .map_err(RingError::Thread)?;
        Ok(IoService {
            shared,
            tid: tid_rx.recv().ok(),
            thread: Some(thread),
            kind,
            depth,
        })
    }

    /// The OS id of the service thread (for `IOAffinity`), if it reported it.
    pub fn thread_id(&self) -> Option<rustix::thread::Pid> {
        self.tid
    }

    /// The back end in use (psync when io_uring was asked for and refused).
    pub fn kind(&self) -> RingKind {
        self.kind
    }

    /// Most requests in the ring at once.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The most requests the ring has had in flight at once so far.
    pub fn high_water(&self) -> usize {
        self.shared.high_water.load(Ordering::Relaxed)
    }

    /// A handle that tells, later, whether the service thread has ended and released
    /// everything it shared.
    pub fn watch(&self) -> ServiceWatch {
        ServiceWatch(Arc::downgrade(&self.shared))
    }

    /// Reads into `buf` at `offset`; fewer bytes only at end of file.
    pub fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mem = Mem::Buf {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
        };
        self.call(Direction::Read, fd, offset, mem, buf.len())
    }

    /// Writes all of `buf` at `offset`.
    pub fn write(&self, fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<()> {
        // The kernel only reads this memory for a write.
        let mem = Mem::Buf {
            ptr: buf.as_ptr().cast_mut(),
            len: buf.len(),
        };
        self.call(Direction::Write, fd, offset, mem, buf.len())
            .map(drop)
    }

    /// Reads consecutive buffers at `offset` (preadv); fewer bytes only at end of file.
    pub fn read_vectored(
        &self,
        fd: BorrowedFd<'_>,
        bufs: &mut [&mut [u8]],
        offset: u64,
    ) -> io::Result<usize> {
        let total = bufs.iter().map(|b| b.len()).sum();
        let list = bufs
            .iter_mut()
            .map(|b| iovec(b.as_mut_ptr(), b.len()))
            .collect();
        self.call(
            Direction::Read,
            fd,
            offset,
            Mem::Iov { list, first: 0 },
            total,
        )
    }

    /// Writes consecutive buffers at `offset` (pwritev), all of them.
    pub fn write_vectored(
        &self,
        fd: BorrowedFd<'_>,
        bufs: &[&[u8]],
        offset: u64,
    ) -> io::Result<()> {
        let total = bufs.iter().map(|b| b.len()).sum();
        // The kernel only reads this memory for a write.
        let list = bufs
            .iter()
            .map(|b| iovec(b.as_ptr().cast_mut(), b.len()))
            .collect();
        self.call(
            Direction::Write,
            fd,
            offset,
            Mem::Iov { list, first: 0 },
            total,
        )
        .map(drop)
    }

    /// Queues one request, wakes the service if no wake-up is on its way, and waits for the
    /// answer. The memory `mem` names is borrowed by the caller for the whole call, and the
    /// answer comes only once the kernel is done with it, which keeps the lending sound.
    fn call(
        &self,
        kind: Direction,
        fd: BorrowedFd<'_>,
        offset: u64,
        mem: Mem,
        total: usize,
    ) -> io::Result<usize> {
        if total == 0 {
            return Ok(0);
        }
        let reply = Arc::new(Reply::default());
        let answer = Answer::Caller(Arc::clone(&reply));
        let req = Request::new(kind, fd.as_raw_fd(), offset, mem, total, answer);
        self.enqueue(req)?;
        reply.wait()
    }

    /// Posts a read or write of `op`'s frames on `file` and returns at once; the completion,
    /// tagged `token` and holding the frames, is pushed to `to` once the kernel is done with
    /// them. The request owns the frames and the file meanwhile.
    pub fn post(
        &self,
        file: &Arc<crate::io::file::FileStorage>,
        op: crate::io::PostOp,
        to: &Arc<crate::io::Completions>,
        token: u64,
    ) {
        let empty = op.total() == 0;
        let req = Request::posted(op, Arc::clone(file), to, token);
        if empty {
            req.answer(Ok(0));
            return;
        }
        // A refused request has been answered with the error as it dropped.
        let _ = self.enqueue(req);
    }

    /// Queues one request and wakes the service if no wake-up is on its way.
    fn enqueue(&self, req: Request) -> io::Result<()> {
        {
            let mut q = self.shared.queue.lock();
            if let Some(why) = q.dead.clone() {
                drop(q);
                req.answer(Err(stopped(&why)));
                return Err(stopped(&why));
            }
            q.items.push_back(req);
        }
        // SeqCst pairs with the service clearing the flag before it takes the queue: either
        // it sees this request, or this caller sees the flag clear and writes the eventfd.
        if !self.shared.wake_pending.swap(true, Ordering::SeqCst) {
            self.shared.kick();
        }
        Ok(())
    }
}

fn iovec(ptr: *mut u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: ptr.cast(),
        iov_len: len,
    }
}

impl Drop for IoService {
    /// No caller can be inside `call` (each holds a handle), so the ring has nothing of
    /// theirs in flight: ask the thread to stop, wake it, and join it.
    fn drop(&mut self) {
        self.shared.queue.lock().closing = true;
        self.shared.kick();
        if let Some(t) = self.thread.take() {
            // A panic of the service thread has already failed its requests (see `ExitGuard`).
            let _ = t.join();
        }
    }
}

/// Watches a service without keeping it alive (see [`IoService::watch`]).
#[derive(Debug, Clone)]
pub struct ServiceWatch(std::sync::Weak<ServiceState>);

impl ServiceWatch {
    /// True once every handle is gone and the service thread has ended.
    pub fn ended(&self) -> bool {
        self.0.strong_count() == 0
    }
}

/// Runs when the service thread ends, normally or by a panic: later requests fail at once
/// instead of waiting for a thread that is gone.
struct ExitGuard(Arc<ServiceState>);

impl Drop for ExitGuard {
    fn drop(&mut self) {
        let why = if std::thread::panicking() {
            "its thread panicked"
        } else {
            "it was shut down"
        };
        self.0.mark_dead(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_service_fails_requests_instead_of_leaving_them_waiting() {
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        std::fs::write(dir.path().join("f"), b"").expect("create");
        let file = std::fs::File::open(dir.path().join("f")).expect("open");
        for kind in [RingKind::Uring, RingKind::Psync, RingKind::Kaio] {
            let s = IoService::start(kind, 2).expect("start");
            let mut buf = [0u8; 16];
            use std::os::fd::AsFd;
            assert_eq!(s.read(file.as_fd(), &mut buf, 0).expect("read"), 0);
            s.shared.mark_dead("told to in a test");
            let e = s.read(file.as_fd(), &mut buf, 0).expect_err("stopped");
            assert!(e.to_string().contains("told to in a test"), "{e}");
        }
    }
}
