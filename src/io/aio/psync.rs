//! The pread/pwrite fallback: at depth 1 each operation runs inline in `submit` (no thread
//! hand-off, like fio's psync); at higher depths a pool of helper threads, one blocking call
//! each, keeps up to `depth` operations in flight — at most [`MAX_HELPERS`] of them in the
//! kernel at once, the rest waiting in the pool's queue (a thread per request at depth 16,384
//! or 100,000 exhausted the process and aborted it). Caller-owned scatter/gather lists go
//! through preadv/pwritev.

use super::{AlignedBuffers, Direction, ExtMem, ExtOp, Op, RingCompletion, RingError, NO_OFFSET};
use crossbeam::channel::{self, Receiver, Sender};
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use crate::io::file::FileStorage;
use std::thread::JoinHandle;

/// One blocking call for a helper thread; the memory is a slot of the ring's buffers or
/// caller-owned memory under the contract of `Ring::submit_external`.
struct Job {
    kind: Direction,
    fd: i32,
    mem: JobMem,
    offset: u64,
    user_data: u64,
}

/// Where a job's bytes are (addresses as integers, so a job can cross to a helper thread).
#[derive(Clone, Copy)]
enum JobMem {
    /// One buffer.
    Buf { ptr: usize, len: u32 },
    /// `count` iovecs at `iov`.
    Iov { iov: usize, count: u32 },
}

impl Job {
    /// Performs the job: bytes moved, or the errno.
    fn run(&self) -> Result<u32, i32> {
        match self.mem {
            JobMem::Buf { ptr, len } => self.run_buf(ptr, len as usize),
            JobMem::Iov { iov, count } => self.run_iov(iov, count),
        }
    }

    /// pread/pwrite (read/write without an offset), retrying on EINTR and continuing after
    /// short transfers until `len` bytes moved or the end of the file.
    fn run_buf(&self, ptr: usize, len: usize) -> Result<u32, i32> {
        let mut done = 0usize;
        while done < len {
            let p = (ptr + done) as *mut libc::c_void;
            let off = self.offset.wrapping_add(done as u64) as libc::off_t;
            // SAFETY: `p..p+len-done` lies in memory the ring or the caller keeps valid and
            // untouched while the job is in flight; `fd` stays open for as long.
            let n = unsafe {
                match (self.kind, self.offset == NO_OFFSET) {
                    (Direction::Read, false) => libc::pread(self.fd, p, len - done, off),
                    (Direction::Write, false) => libc::pwrite(self.fd, p, len - done, off),
                    (Direction::Read, true) => libc::read(self.fd, p, len - done),
                    (Direction::Write, true) => libc::write(self.fd, p, len - done),
                }
            };
            match n {
                n if n < 0 => match last_errno() {
                    libc::EINTR => continue,
                    errno => return Err(errno),
                },
                0 => break, // end of file: report the short transfer
                n => done += n as usize,
            }
        }
        Ok(done as u32)
    }

    /// One preadv/pwritev, retried on EINTR; a short transfer is reported as such (the caller
    /// continues it, as with io_uring's READV/WRITEV).
    fn run_iov(&self, iov: usize, count: u32) -> Result<u32, i32> {
        let iov = iov as *const libc::iovec;
        loop {
            // SAFETY: the iovec array and the buffers it names are kept valid and untouched
            // by the caller while the job is in flight; `fd` stays open for as long.
            let n = unsafe {
                match self.kind {
                    Direction::Read => {
                        libc::preadv(self.fd, iov, count as i32, self.offset as libc::off_t)
                    }
                    Direction::Write => {
                        libc::pwritev(self.fd, iov, count as i32, self.offset as libc::off_t)
                    }
                }
            };
            if n >= 0 {
                return Ok(n as u32);
            }
            match last_errno() {
                libc::EINTR => continue,
                errno => return Err(errno),
            }
        }
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A pread/pwrite ring, inline or with a helper pool.
pub struct PsyncRing {
    buffers: AlignedBuffers,
    files: Arc<[FileStorage]>,
    pool: Option<Pool>,
    done: VecDeque<RingCompletion>,
    in_flight: usize,
}

struct Pool {
    jobs: Option<Sender<Job>>,
    results: Receiver<RingCompletion>,
    threads: Vec<JoinHandle<()>>,
}

/// The most helper threads one psync ring starts (docs/configuration.md: the psync depth
/// MaxOutstandingIO=0 gives); deeper rings queue the requests beyond it.
pub const MAX_HELPERS: usize = 256;

fn spawn_pool(depth: usize) -> Result<Pool, RingError> {
    let (job_tx, job_rx) = channel::bounded::<Job>(depth);
    let (res_tx, res_rx) = channel::bounded::<RingCompletion>(depth);
    let helpers = depth.min(MAX_HELPERS);
    let mut threads = Vec::with_capacity(helpers);
    for i in 0..helpers {
        let (rx, tx) = (job_rx.clone(), res_tx.clone());
        let handle = std::thread::Builder::new()
            .name(format!("psync-{i}"))
            .spawn(move || {
                for job in rx.iter() {
                    let result = job.run();
                    if tx
                        .send(RingCompletion {
                            user_data: job.user_data,
                            result,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
            })
            .map_err(RingError::Thread)?;
        threads.push(handle);
    }
    Ok(Pool {
        jobs: Some(job_tx),
        results: res_rx,
        threads,
    })
}

impl PsyncRing {
    /// Builds the ring; a pool of helper threads only when more than one slot exists.
    pub fn new(files: Arc<[FileStorage]>, buffers: AlignedBuffers) -> Result<Self, RingError> {
        let pool = if buffers.slots() > 1 {
            Some(spawn_pool(buffers.slots())?)
        } else {
            None
        };
        Ok(PsyncRing {
            buffers,
            files,
            pool,
            done: VecDeque::new(),
            in_flight: 0,
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

    /// Runs `op` inline, or hands it to a helper thread.
    pub fn submit(&mut self, op: Op) -> Result<(), RingError> {
        assert!(
            (op.len as usize) <= self.buffers.slot_len(),
            "op longer than its buffer slot"
        );
        let job = Job {
            kind: op.kind,
            fd: self.files[op.file as usize].as_raw_fd(),
            mem: JobMem::Buf {
                ptr: self.buffers.slot_ptr(op.slot) as usize,
                len: op.len,
            },
            offset: op.offset,
            user_data: op.user_data,
        };
        self.start(job)
    }

    /// Runs an operation on caller-owned memory inline, or hands it to a helper thread.
    ///
    /// # Safety
    ///
    /// As [`super::Ring::submit_external`]: the memory and fd of `op` stay valid until its
    /// completion is reaped.
    pub unsafe fn submit_external(&mut self, op: ExtOp) -> Result<(), RingError> {
        let mem = match op.mem {
            ExtMem::Buf { ptr, len } => JobMem::Buf {
                ptr: ptr as usize,
                len,
            },
            ExtMem::Iov { iov, count } => JobMem::Iov {
                iov: iov as usize,
                count,
            },
        };
        self.start(Job {
            kind: op.kind,
            fd: op.fd,
            mem,
            offset: op.offset,
            user_data: op.user_data,
        })
    }

    fn start(&mut self, job: Job) -> Result<(), RingError> {
        assert!(
            self.in_flight < self.buffers.slots(),
            "more operations than the ring's depth"
        );
        self.in_flight += 1;
        match self.pool.as_ref().and_then(|p| p.jobs.as_ref()) {
            Some(jobs) => jobs.send(job).map_err(|_| pool_gone()),
            None => {
                self.done.push_back(RingCompletion {
                    user_data: job.user_data,
                    result: job.run(),
                });
                Ok(())
            }
        }
    }

    /// Waits for at least `min` completions and returns every one available.
    pub fn reap(&mut self, min: usize, out: &mut Vec<RingCompletion>) -> Result<(), RingError> {
        let want = min.min(self.in_flight);
        let mut got = 0;
        while let Some(c) = self.done.pop_front() {
            out.push(c);
            got += 1;
        }
        if let Some(pool) = &self.pool {
            while got < want {
                out.push(pool.results.recv().map_err(|_| pool_gone())?);
                got += 1;
            }
            while let Ok(c) = pool.results.try_recv() {
                out.push(c);
                got += 1;
            }
        }
        self.in_flight -= got;
        Ok(())
    }
}

fn pool_gone() -> RingError {
    RingError::Submit(std::io::Error::other("psync helper threads stopped"))
}

impl Drop for PsyncRing {
    fn drop(&mut self) {
        if let Some(pool) = &mut self.pool {
            // Closing the job channel lets each helper finish its current call and exit; the
            // buffers are freed only after every helper has been joined.
            pool.jobs.take();
            while let Ok(_c) = pool.results.try_recv() {}
            for t in pool.threads.drain(..) {
                // Helpers may block on a full result channel: keep draining while joining.
                while !t.is_finished() {
                    while pool.results.try_recv().is_ok() {}
                    std::thread::yield_now();
                }
                let _ = t.join();
            }
        }
    }
}
