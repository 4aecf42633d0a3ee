//! The pread/pwrite fallback: at depth 1 each operation runs inline in `submit` (no thread
//! hand-off, like fio's psync); at higher depths a pool of `depth` helper threads, one blocking
//! call each, keeps up to `depth` operations in flight.

use super::{AlignedBuffers, Completion, EngineError, Op, OpKind};
use crossbeam::channel::{self, Receiver, Sender};
use std::collections::VecDeque;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::thread::JoinHandle;

/// One blocking call for a helper thread; the pointer targets a slot of the engine's buffers.
struct Job {
    kind: OpKind,
    fd: i32,
    ptr: usize,
    len: u32,
    offset: u64,
    user_data: u64,
}

/// A pread/pwrite engine, inline or with a helper pool.
pub struct PsyncEngine {
    buffers: AlignedBuffers,
    files: Arc<[File]>,
    pool: Option<Pool>,
    done: VecDeque<Completion>,
    in_flight: usize,
}

struct Pool {
    jobs: Option<Sender<Job>>,
    results: Receiver<Completion>,
    threads: Vec<JoinHandle<()>>,
}

/// Performs one pread/pwrite, retrying on EINTR and continuing after short transfers.
fn run_job(job: &Job) -> Result<u32, i32> {
    let mut done = 0usize;
    let len = job.len as usize;
    while done < len {
        let ptr = (job.ptr + done) as *mut libc::c_void;
        let off = (job.offset + done as u64) as libc::off_t;
        // SAFETY: `ptr..ptr+len` lies inside a buffer slot that the engine keeps mapped and
        // does not hand out while the operation is in flight; `fd` stays open via `files`.
        let n = unsafe {
            match job.kind {
                OpKind::Read => libc::pread(job.fd, ptr, len - done, off),
                OpKind::Write => libc::pwrite(job.fd, ptr, len - done, off),
            }
        };
        if n < 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if errno == libc::EINTR {
                continue;
            }
            return Err(errno);
        }
        if n == 0 {
            break; // end of file: report the short transfer
        }
        done += n as usize;
    }
    Ok(done as u32)
}

fn spawn_pool(depth: usize) -> Result<Pool, EngineError> {
    let (job_tx, job_rx) = channel::bounded::<Job>(depth);
    let (res_tx, res_rx) = channel::bounded::<Completion>(depth);
    let mut threads = Vec::with_capacity(depth);
    for i in 0..depth {
        let (rx, tx) = (job_rx.clone(), res_tx.clone());
        let handle = std::thread::Builder::new()
            .name(format!("psync-{i}"))
            .spawn(move || {
                for job in rx.iter() {
                    let result = run_job(&job);
                    if tx
                        .send(Completion {
                            user_data: job.user_data,
                            result,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
            })
            .map_err(EngineError::Thread)?;
        threads.push(handle);
    }
    Ok(Pool {
        jobs: Some(job_tx),
        results: res_rx,
        threads,
    })
}

impl PsyncEngine {
    /// Builds the engine; a pool of helper threads only when more than one slot exists.
    pub fn new(files: Arc<[File]>, buffers: AlignedBuffers) -> Result<Self, EngineError> {
        let pool = if buffers.slots() > 1 {
            Some(spawn_pool(buffers.slots())?)
        } else {
            None
        };
        Ok(PsyncEngine {
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
    pub fn submit(&mut self, op: Op) -> Result<(), EngineError> {
        assert!(
            self.in_flight < self.buffers.slots(),
            "more operations than buffer slots"
        );
        assert!(
            (op.len as usize) <= self.buffers.slot_len(),
            "op longer than its buffer slot"
        );
        let job = Job {
            kind: op.kind,
            fd: self.files[op.file as usize].as_raw_fd(),
            ptr: self.buffers.slot_ptr(op.slot) as usize,
            len: op.len,
            offset: op.offset,
            user_data: op.user_data,
        };
        self.in_flight += 1;
        match self.pool.as_ref().and_then(|p| p.jobs.as_ref()) {
            Some(jobs) => jobs.send(job).map_err(|_| pool_gone()),
            None => {
                self.done.push_back(Completion {
                    user_data: job.user_data,
                    result: run_job(&job),
                });
                Ok(())
            }
        }
    }

    /// Waits for at least `min` completions and returns every one available.
    pub fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
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

fn pool_gone() -> EngineError {
    EngineError::Submit(std::io::Error::other("psync helper threads stopped"))
}

impl Drop for PsyncEngine {
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
