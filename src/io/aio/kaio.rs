//! The kernel AIO back end (`--engine libaio`, as fio names it): one AIO context per ring,
//! requests sent with `io_submit` (in groups of `batch`, the rest with the next wait, as the
//! io_uring back end does) and collected with `io_getevents`. SQL Server on Linux submits this
//! way (issue #24 §3). The system calls and the kernel's structures are in `kaio_sys`.
//!
//! Kernel AIO is asynchronous only on files opened with O_DIRECT. On a buffered file
//! `io_submit` does the read or write itself and returns once it is done, so the ring stays
//! correct but carries one request at a time, in the submitting thread. The kernel reads each
//! iocb and its iovec array during `io_submit`; only the data buffers stay in use until the
//! completion.
//!
//! A request without an offset ([`NO_OFFSET`], the I/O service's wake-up read of an eventfd)
//! cannot be a kernel AIO read: on an eventfd or a pipe it would block `io_submit` until data
//! came. It goes to the kernel as an `IOCB_CMD_POLL` instead, and once the poll completes
//! the read (or write) runs inline in `reap`; if another reader took the data first
//! (EAGAIN), the poll is sent again. A request the kernel refuses at `io_submit` (EBADF for a
//! write on a read-only file) completes with that errno, as it would on the other back ends.

use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use super::kaio_sys::{self as sys, AioContext, IoEvent, Iocb};
use super::{AlignedBuffers, Direction, ExtMem, ExtOp, Op, RingCompletion, RingError, NO_OFFSET};
use crate::io::file::FileStorage;

/// What the completion of one control block means.
#[derive(Debug, Clone, Copy)]
enum Then {
    /// The read or write itself: its result is the operation's.
    Done,
    /// A poll before a read or write without an offset, which then runs inline on `mem`
    /// (an address and a length, or an iovec array and its count).
    Stream {
        kind: Direction,
        iov: bool,
        addr: usize,
        len: u32,
    },
}

/// A kernel AIO ring plus the buffers and files its operations use.
pub struct KaioRing {
    ctx: AioContext,
    /// Dropped by hand in `Drop`, only once the kernel holds none of it (else leaked).
    buffers: ManuallyDrop<AlignedBuffers>,
    files: Arc<[FileStorage]>,
    /// One control block per operation in flight; its index is its `aio_data`.
    iocbs: Box<[Iocb]>,
    tags: Box<[(u64, Then)]>,
    free: Vec<u32>,
    /// Control blocks waiting for `io_submit`, in order.
    queued: VecDeque<u32>,
    /// Their addresses for one `io_submit`, kept to spare an allocation per call.
    ptrs: Vec<usize>,
    events: Vec<IoEvent>,
    /// Completions made without the kernel (refused at submission), not yet reaped.
    done: VecDeque<RingCompletion>,
    in_flight: usize,
    in_kernel: usize,
    batch: usize,
}

impl KaioRing {
    /// Builds the ring with an AIO context of one event per slot; on failure the buffers are
    /// handed back for the fallback.
    pub fn new(
        files: Arc<[FileStorage]>,
        buffers: AlignedBuffers,
        batch: usize,
    ) -> Result<Self, (std::io::Error, AlignedBuffers)> {
        let slots = buffers.slots();
        let ctx = match sys::setup(slots as u32) {
            Ok(ctx) => ctx,
            Err(e) => return Err((e, buffers)),
        };
        Ok(KaioRing {
            ctx,
            buffers: ManuallyDrop::new(buffers),
            files,
            iocbs: vec![Iocb::default(); slots].into_boxed_slice(),
            tags: vec![(0, Then::Done); slots].into_boxed_slice(),
            free: (0..slots as u32).rev().collect(),
            queued: VecDeque::with_capacity(slots),
            ptrs: Vec::with_capacity(slots),
            events: vec![IoEvent::default(); slots],
            done: VecDeque::new(),
            in_flight: 0,
            in_kernel: 0,
            batch: batch.max(1),
        })
    }

    /// The buffer slots.
    pub fn buffers(&self) -> &AlignedBuffers {
        &self.buffers
    }

    /// The buffer slots, writable.
    pub fn buffers_mut(&mut self) -> &mut AlignedBuffers {
        &mut self.buffers
    }

    /// Operations submitted and not yet reaped.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Queues a read or write of a buffer slot.
    pub fn submit(&mut self, op: Op) -> Result<(), RingError> {
        assert!(
            (op.len as usize) <= self.buffers.slot_len(),
            "op longer than its buffer slot"
        );
        let iocb = Iocb {
            aio_lio_opcode: rw_opcode(op.kind, false),
            aio_fildes: self.files[op.file as usize].as_raw_fd() as u32,
            aio_buf: self.buffers.slot_ptr(op.slot) as u64,
            aio_nbytes: u64::from(op.len),
            aio_offset: op.offset as i64,
            ..Iocb::default()
        };
        self.queue(iocb, op.user_data, Then::Done)
    }

    /// Queues an operation on caller-owned memory.
    ///
    /// # Safety
    ///
    /// As [`super::Ring::submit_external`]: the memory and fd of `op` stay valid until its
    /// completion is reaped.
    pub unsafe fn submit_external(&mut self, op: ExtOp) -> Result<(), RingError> {
        let (iov, addr, len) = match op.mem {
            ExtMem::Buf { ptr, len } => (false, ptr as usize, len),
            ExtMem::Iov { iov, count } => (true, iov as usize, count),
        };
        let mut iocb = Iocb {
            aio_fildes: op.fd as u32,
            ..Iocb::default()
        };
        let then = if op.offset == NO_OFFSET {
            iocb.aio_lio_opcode = sys::IOCB_CMD_POLL;
            iocb.aio_buf = match op.kind {
                Direction::Read => libc::POLLIN,
                Direction::Write => libc::POLLOUT,
            } as u64;
            Then::Stream {
                kind: op.kind,
                iov,
                addr,
                len,
            }
        } else {
            iocb.aio_lio_opcode = rw_opcode(op.kind, iov);
            iocb.aio_buf = addr as u64;
            iocb.aio_nbytes = u64::from(len);
            iocb.aio_offset = op.offset as i64;
            Then::Done
        };
        self.queue(iocb, op.user_data, then)
    }

    /// Takes a free control block for `iocb` and queues it; a full batch goes to the kernel
    /// first, so the last operation before a wait travels with it.
    fn queue(&mut self, mut iocb: Iocb, user_data: u64, then: Then) -> Result<(), RingError> {
        assert!(
            self.in_flight < self.iocbs.len(),
            "more operations than the ring's depth"
        );
        if self.queued.len() >= self.batch {
            self.flush()?;
        }
        let id = self
            .free
            .pop()
            .expect("a free control block below the depth");
        iocb.aio_data = u64::from(id);
        self.iocbs[id as usize] = iocb;
        self.tags[id as usize] = (user_data, then);
        self.queued.push_back(id);
        self.in_flight += 1;
        Ok(())
    }

    /// Sends every queued control block. One the kernel refuses completes with the errno;
    /// EAGAIN (the kernel is short of resources) leaves the rest for after a completion.
    fn flush(&mut self) -> Result<(), RingError> {
        while !self.queued.is_empty() {
            self.ptrs.clear();
            let base = self.iocbs.as_ptr() as usize;
            let size = std::mem::size_of::<Iocb>();
            self.ptrs
                .extend(self.queued.iter().map(|&id| base + id as usize * size));
            // SAFETY: the addresses name this ring's control blocks; their memory is a slot
            // of `self.buffers` (kept until every completion is collected, see `Drop`) or the
            // caller's, kept valid under the contract of `submit_external`.
            match unsafe { sys::submit(self.ctx, &mut self.ptrs) } {
                Ok(n) => {
                    self.in_kernel += n;
                    self.queued.drain(..n);
                }
                Err(e) => match e.raw_os_error().unwrap_or(libc::EIO) {
                    libc::EINTR => {}
                    libc::EAGAIN if self.in_kernel > 0 => return Ok(()),
                    libc::EAGAIN => return Err(RingError::Submit(e)),
                    errno => {
                        let id = self.queued.pop_front().expect("not empty");
                        self.finish(id, Err(errno));
                    }
                },
            }
        }
        Ok(())
    }

    /// Records the outcome of control block `id` and frees it.
    fn finish(&mut self, id: u32, result: Result<u32, i32>) {
        let (user_data, _) = self.tags[id as usize];
        self.done.push_back(RingCompletion { user_data, result });
        self.free.push(id);
    }

    /// Sends queued operations and waits for at least `min` completions.
    pub fn reap(&mut self, min: usize, out: &mut Vec<RingCompletion>) -> Result<(), RingError> {
        let want = min.min(self.in_flight);
        let mut got = 0;
        loop {
            self.flush()?;
            got += self.done.len();
            out.extend(self.done.drain(..));
            let need = want.saturating_sub(got);
            if need == 0 || self.in_kernel == 0 {
                self.collect(0, false)?;
                got += self.done.len();
                out.extend(self.done.drain(..));
                break;
            }
            self.collect(need.min(self.in_kernel), true)?;
        }
        self.in_flight -= got;
        Ok(())
    }

    /// Collects at least `min` events from the kernel (none and no wait with `wait` false)
    /// into `done`; a completed poll runs its read or write, or is queued again.
    fn collect(&mut self, min: usize, wait: bool) -> Result<(), RingError> {
        if self.in_kernel == 0 {
            return Ok(());
        }
        let n = match sys::get_events(self.ctx, min, &mut self.events, wait) {
            Ok(n) => n,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => 0,
            Err(e) => return Err(RingError::Submit(e)),
        };
        self.in_kernel -= n;
        for i in 0..n {
            let ev = self.events[i];
            let id = ev.data as u32;
            let result = if ev.res < 0 {
                Err(-ev.res as i32)
            } else {
                Ok(ev.res as u32)
            };
            match (self.tags[id as usize].1, result) {
                (
                    Then::Stream {
                        kind,
                        iov,
                        addr,
                        len,
                    },
                    Ok(_),
                ) => {
                    let fd = self.iocbs[id as usize].aio_fildes as i32;
                    match stream_io(fd, kind, iov, addr, len) {
                        Err(libc::EAGAIN) => self.queued.push_back(id),
                        r => self.finish(id, r),
                    }
                }
                (_, r) => self.finish(id, r),
            }
        }
        Ok(())
    }
}

/// The opcode of a read or write, of one buffer or of an iovec array.
fn rw_opcode(kind: Direction, iov: bool) -> u16 {
    match (kind, iov) {
        (Direction::Read, false) => sys::IOCB_CMD_PREAD,
        (Direction::Write, false) => sys::IOCB_CMD_PWRITE,
        (Direction::Read, true) => sys::IOCB_CMD_PREADV,
        (Direction::Write, true) => sys::IOCB_CMD_PWRITEV,
    }
}

/// One read(2)/write(2) (readv/writev for an iovec array) on a file the poll found ready,
/// retried on EINTR: bytes moved, or the errno.
fn stream_io(fd: i32, kind: Direction, iov: bool, addr: usize, len: u32) -> Result<u32, i32> {
    loop {
        // SAFETY: `addr` names caller memory of `len` bytes (or `len` iovecs), valid and
        // untouched by anyone else until this operation is reaped (`submit_external`).
        let n = unsafe {
            match (kind, iov) {
                (Direction::Read, false) => libc::read(fd, addr as *mut _, len as usize),
                (Direction::Write, false) => libc::write(fd, addr as *const _, len as usize),
                (Direction::Read, true) => libc::readv(fd, addr as *const _, len as i32),
                (Direction::Write, true) => libc::writev(fd, addr as *const _, len as i32),
            }
        };
        if n >= 0 {
            return Ok(n as u32);
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            errno => return Err(errno.unwrap_or(libc::EIO)),
        }
    }
}

impl Drop for KaioRing {
    /// Waits for every operation in flight, then destroys the context. If the ring can no
    /// longer be waited on, the buffers are leaked rather than freed, as the io_uring back
    /// end does (`io_destroy` waits for the kernel's requests, but a failing context is
    /// not trusted with that).
    fn drop(&mut self) {
        let mut sink = Vec::new();
        let mut drained = true;
        while self.in_flight > 0 {
            sink.clear();
            if self.reap(self.in_flight, &mut sink).is_err() {
                drained = false;
                break;
            }
        }
        let destroyed = sys::destroy(self.ctx).is_ok();
        if drained && destroyed {
            // SAFETY: nothing is in flight and the context is gone, so the kernel holds none
            // of the buffers; they are dropped once, here, and `self` is never used after.
            unsafe { ManuallyDrop::drop(&mut self.buffers) };
        }
    }
}
