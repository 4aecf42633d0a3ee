//! The io_uring back end: one io_uring instance per ring, operations queued on the
//! submission ring and sent in groups of `batch` (the rest with the next wait for completions),
//! registered files and registered buffers (READ_FIXED / WRITE_FIXED) when the kernel accepts
//! them; caller-owned memory goes through the plain READ / WRITE / READV / WRITEV opcodes.
//!
//! Why the batch is small by default: an `io_uring_enter` carrying 32 operations plugs the
//! block queue and reaches the device as one batch, so a device that completes in batches
//! (a virtio disk here) sits idle while the whole refill is prepared. Sending each operation as
//! soon as it is ready keeps the device busy; on these machines 8 KB random writes at QD32 went
//! from about 67k to 84k IOPS (docs/performance.md).

use super::{AlignedBuffers, Direction, ExtMem, ExtOp, Op, RingCompletion, RingError};
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use crate::io::file::FileStorage;

/// An io_uring ring plus the buffers and files its operations use.
pub struct UringRing {
    ring: IoUring,
    /// Dropped by hand in `Drop`, only once the kernel holds none of it (else leaked).
    buffers: ManuallyDrop<AlignedBuffers>,
    files: Arc<[FileStorage]>,
    fixed_files: bool,
    fixed_buffers: bool,
    in_flight: usize,
    queued: usize,
    batch: usize,
}

/// True when `err` means io_uring is refused or missing here, so psync should take over.
pub fn is_refusal(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EPERM | libc::ENOSYS | libc::EOPNOTSUPP | libc::EACCES)
    )
}

/// Builds a ring with COOP_TASKRUN (5.19+), which spares an inter-processor interrupt per
/// completion, and TASKRUN_FLAG, which tells `reap` when completion work is pending. Older
/// kernels reject the flags with EINVAL, so retry without them. (SINGLE_ISSUER with
/// DEFER_TASKRUN was measured too: no more IOPS and about 30 % more CPU per I/O here.)
fn build_ring(entries: u32) -> io::Result<IoUring> {
    match IoUring::builder()
        .setup_coop_taskrun()
        .setup_taskrun_flag()
        .build(entries)
    {
        Ok(ring) => Ok(ring),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => IoUring::new(entries),
        Err(e) => Err(e),
    }
}

impl UringRing {
    /// Builds the ring; queued operations are sent `batch` at a time (at least 1). On failure
    /// the buffers are handed back for the fallback.
    pub fn new(
        files: Arc<[FileStorage]>,
        mut buffers: AlignedBuffers,
        batch: usize,
    ) -> Result<Self, (io::Error, AlignedBuffers)> {
        let entries = (buffers.slots() as u32).next_power_of_two().max(2);
        let ring = match build_ring(entries) {
            Ok(ring) => ring,
            Err(e) => return Err((e, buffers)),
        };
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_files = !fds.is_empty() && ring.submitter().register_files(&fds).is_ok();
        let iovecs = buffers.iovecs();
        // SAFETY: the iovecs point into `buffers`, which the ring owns and keeps mapped until
        // after the ring is dropped (fields drop after `Drop::drop` has drained the ring).
        let fixed_buffers =
            buffers.slot_len() > 0 && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        // Registering the ring fd saves an fd lookup per enter; harmless if refused.
        let _ = ring.submitter().register_ring_fd();
        Ok(UringRing {
            ring,
            buffers: ManuallyDrop::new(buffers),
            files,
            fixed_files,
            fixed_buffers,
            in_flight: 0,
            queued: 0,
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

    fn entry(&mut self, op: &Op) -> squeue::Entry {
        assert!(
            (op.len as usize) <= self.buffers.slot_len(),
            "op longer than its buffer slot"
        );
        let buf = self.buffers.slot_ptr(op.slot);
        let (idx, raw) = (op.file, self.files[op.file as usize].as_raw_fd());
        let slot = op.slot as u16;
        macro_rules! rw {
            ($fd:expr) => {
                match (op.kind, self.fixed_buffers) {
                    (Direction::Read, true) => opcode::ReadFixed::new($fd, buf, op.len, slot)
                        .offset(op.offset)
                        .build(),
                    (Direction::Write, true) => opcode::WriteFixed::new($fd, buf, op.len, slot)
                        .offset(op.offset)
                        .build(),
                    (Direction::Read, false) => opcode::Read::new($fd, buf, op.len)
                        .offset(op.offset)
                        .build(),
                    (Direction::Write, false) => opcode::Write::new($fd, buf, op.len)
                        .offset(op.offset)
                        .build(),
                }
            };
        }
        let entry = if self.fixed_files {
            rw!(types::Fixed(idx))
        } else {
            rw!(types::Fd(raw))
        };
        entry.user_data(op.user_data)
    }

    /// Queues `op` on the submission ring; what is queued goes to the kernel when `batch`
    /// operations are waiting and another arrives, else at the next `reap`.
    pub fn submit(&mut self, op: Op) -> Result<(), RingError> {
        assert!(
            self.in_flight < self.buffers.slots(),
            "more operations than buffer slots"
        );
        let entry = self.entry(&op);
        // SAFETY: the entry's buffer is a slot of `self.buffers` and its fd belongs to
        // `self.files`; both outlive the operation because `Drop` waits for every completion.
        unsafe { self.push(&entry) }
    }

    /// Queues an operation on caller-owned memory with the plain (unregistered) opcodes.
    ///
    /// # Safety
    ///
    /// As [`super::Ring::submit_external`]: the memory and fd of `op` stay valid until its
    /// completion is reaped.
    pub unsafe fn submit_external(&mut self, op: ExtOp) -> Result<(), RingError> {
        assert!(
            self.in_flight < self.buffers.slots(),
            "more operations than the ring's depth"
        );
        let fd = types::Fd(op.fd);
        let entry = match (op.kind, op.mem) {
            (Direction::Read, ExtMem::Buf { ptr, len }) => {
                opcode::Read::new(fd, ptr, len).offset(op.offset).build()
            }
            (Direction::Write, ExtMem::Buf { ptr, len }) => {
                opcode::Write::new(fd, ptr, len).offset(op.offset).build()
            }
            (Direction::Read, ExtMem::Iov { iov, count }) => {
                opcode::Readv::new(fd, iov, count).offset(op.offset).build()
            }
            (Direction::Write, ExtMem::Iov { iov, count }) => opcode::Writev::new(fd, iov, count)
                .offset(op.offset)
                .build(),
        };
        // SAFETY: the caller keeps the memory and the fd valid until the completion is reaped.
        unsafe { self.push(&entry.user_data(op.user_data)) }
    }

    /// Puts `entry` on the submission ring and sends the queue once `batch` are waiting.
    ///
    /// # Safety
    ///
    /// The memory and file the entry names stay valid until its completion is reaped.
    #[inline]
    unsafe fn push(&mut self, entry: &squeue::Entry) -> Result<(), RingError> {
        // The ring has at least `slots` entries and at most `slots` operations are in flight,
        // so the queue has room; flush defensively if it does not.
        // A full batch goes out when the next operation arrives, not when it fills: the last
        // operation before a wait then travels with the wait in a single `io_uring_enter`
        // (one system call per I/O at queue depth 1).
        if self.queued >= self.batch || self.ring.submission().is_full() {
            self.flush()?;
        }
        // SAFETY: passed on from the caller.
        unsafe { self.ring.submission().push(entry) }
            .map_err(|_| RingError::Submit(io::Error::other("submission queue full")))?;
        self.in_flight += 1;
        self.queued += 1;
        Ok(())
    }

    /// Sends every queued operation without waiting.
    fn flush(&mut self) -> Result<(), RingError> {
        loop {
            match self.ring.submit() {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                // EAGAIN/EBUSY: the kernel is short of resources or completions; the next
                // `reap` sends what is still queued while it waits.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY | libc::EAGAIN)) => {
                    return Ok(())
                }
                Err(e) => return Err(RingError::Submit(e)),
            }
        }
        self.queued = self.ring.submission().len();
        Ok(())
    }

    /// Sends queued operations and waits for at least `min` completions.
    pub fn reap(&mut self, min: usize, out: &mut Vec<RingCompletion>) -> Result<(), RingError> {
        let want = min.min(self.in_flight);
        let mut got = self.drain_cq(out);
        loop {
            let need = want.saturating_sub(got);
            // With COOP_TASKRUN, completion work waits for the next enter that asks for
            // events; the TASKRUN flag says such work is pending.
            let queued = !self.ring.submission().is_empty() || self.ring.submission().taskrun();
            if need == 0 && !queued {
                return Ok(());
            }
            let sent = self.ring.submit_and_wait(need);
            self.queued = self.ring.submission().len();
            match sent {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR | libc::EBUSY | libc::EAGAIN)
                    ) => {}
                Err(e) => return Err(RingError::Submit(e)),
            }
            got += self.drain_cq(out);
            if got >= want && self.ring.submission().is_empty() {
                return Ok(());
            }
        }
    }

    fn drain_cq(&mut self, out: &mut Vec<RingCompletion>) -> usize {
        let before = out.len();
        for cqe in self.ring.completion() {
            let res = cqe.result();
            let result = if res < 0 { Err(-res) } else { Ok(res as u32) };
            out.push(RingCompletion {
                user_data: cqe.user_data(),
                result,
            });
        }
        let got = out.len() - before;
        self.in_flight -= got;
        got
    }
}

impl Drop for UringRing {
    /// Waits for every operation in flight. If the ring can no longer be waited on, the
    /// kernel may still use the ring's buffers: they are leaked rather than freed. The
    /// caller-owned memory of external operations is its owners' to leak (the contract of
    /// [`super::Ring::submit_external`]; the I/O service and `PostRing` do, see
    /// `service::ring_slots::drain_or_leak`).
    fn drop(&mut self) {
        let mut sink = Vec::new();
        while self.in_flight > 0 {
            sink.clear();
            if self.reap(self.in_flight, &mut sink).is_err() {
                return;
            }
        }
        // SAFETY: nothing is in flight, so the kernel holds none of the buffers; they are
        // dropped once, here, and `self` is never used after.
        unsafe { ManuallyDrop::drop(&mut self.buffers) };
        // Registered files are released now, in this system call, rather than by the kernel's
        // ring teardown after the process exits: otherwise the filesystem stays busy for a
        // moment after sqliosim ends, and an `umount` right after it fails.
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
    }
}
