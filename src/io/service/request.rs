//! One caller's request to the I/O service and the cell its answer comes back in.
//!
//! A caller's request points at memory the caller borrows for the length of its call; the
//! caller blocks on the [`Reply`] until the service answers, and the service answers only once
//! the kernel is done with that memory (or never handed it the request). A posted request owns
//! its frames and its file ([`Owned`]) and hands the frames back in its completion. A request
//! dropped unanswered (the service stopped) answers with an error as it drops, so no caller
//! waits forever; one whose memory the kernel may still hold is never dropped but leaked
//! ([`Request::leak`]).

#![expect(
    unsafe_code,
    reason = "a request holds raw pointers to its caller's buffers, so it is sent to the service thread by hand (Send), and its iovec is read through them"
)]

use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

use crate::sync::{Condvar, Mutex};

use crate::io::aio::{Direction, ExtMem, ExtOp};
use crate::io::file::FileStorage;
use crate::io::post::{Completion, Completions, Pass, PostOp};
use crate::io::Frame;

/// Where a request's answer goes: to a caller blocked on it, or to a poster's queue.
#[derive(Debug)]
pub(super) enum Answer {
    /// A caller waits on this cell.
    Caller(Arc<Reply>),
    /// A poster collects the completion, tagged with its token, when it likes.
    Posted(Arc<Completions>, u64),
}

impl Answer {
    /// Answers now; a posted completion goes into `pass` when there is one (queued when the
    /// pass ends), else to its queue at once.
    fn give(self, r: io::Result<usize>, frames: Vec<Frame>, pass: Option<&mut Pass>) {
        match self {
            Answer::Caller(reply) => reply.set(r),
            Answer::Posted(queue, token) => {
                let c = Completion {
                    token,
                    result: r,
                    done_at: crate::clock::now(),
                    frames,
                };
                match pass {
                    Some(pass) => pass.add(queue, c),
                    None => queue.push(c),
                }
            }
        }
    }
}

/// What a posted request owns while it is in flight: its frames (the memory its iovecs name)
/// and its file (so the descriptor stays open and names the same file until it completes).
#[derive(Debug, Default)]
pub(super) struct Owned {
    frames: Vec<Frame>,
    #[expect(
        dead_code,
        reason = "held, not read: keeps the descriptor open and naming the same file while in flight"
    )]
    file: Option<Arc<FileStorage>>,
}

/// Most iovecs in one operation (the kernel's IOV_MAX); longer lists continue in another.
const IOV_MAX: usize = 1024;

/// Most bytes of one buffer in one operation; a longer buffer continues in another. A multiple
/// of every direct-I/O alignment, so the continuation stays aligned.
const MAX_CHUNK: usize = 1 << 30;

/// Where the answer to one request is left for its caller.
#[derive(Debug, Default)]
pub(super) struct Reply {
    result: Mutex<Option<io::Result<usize>>>,
    cv: Condvar,
}

impl Reply {
    /// Leaves the answer and wakes the caller.
    fn set(&self, r: io::Result<usize>) {
        *self.result.lock() = Some(r);
        self.cv.notify_one();
    }

    /// Blocks until the answer is there and takes it.
    pub(super) fn wait(&self) -> io::Result<usize> {
        let mut slot = self.result.lock();
        loop {
            if let Some(r) = slot.take() {
                return r;
            }
            self.cv.wait(&mut slot);
        }
    }
}

/// The memory still to transfer.
#[derive(Debug)]
pub(super) enum Mem {
    /// One buffer: `len` bytes left at `ptr`.
    Buf { ptr: *mut u8, len: usize },
    /// A scatter/gather list; `list[first..]` is what is left (the first entry trimmed).
    Iov {
        list: Vec<libc::iovec>,
        first: usize,
    },
}

/// What the next completion of a request means.
pub(super) enum Step {
    /// Send the rest (or the same again, after EINTR/EAGAIN).
    Again,
    /// The request is over: bytes moved, or the error.
    Done(io::Result<usize>),
}

/// One read or write on behalf of a blocked caller.
#[derive(Debug)]
pub(super) struct Request {
    kind: Direction,
    fd: RawFd,
    /// Offset of the next byte to move.
    offset: u64,
    mem: Mem,
    /// Bytes moved so far.
    done: usize,
    /// Bytes asked for.
    total: usize,
    /// Present until answered.
    reply: Option<Answer>,
    /// A posted request's frames and file, handed back (the frames) with the answer.
    owned: Owned,
}

// SAFETY: the pointers name memory the request owns (a posted request's frames) or the caller
// lends for the length of its call, which lasts until the request is answered; whichever
// thread holds the request may hand it to the kernel.
unsafe impl Send for Request {}

/// The error a caller gets when the service stopped before carrying its request.
pub(super) fn stopped(why: &str) -> io::Error {
    io::Error::other(format!("the I/O service stopped: {why}"))
}

impl Request {
    /// A request for `total` bytes of `mem` at `offset` of `fd`, answered through `reply`.
    pub(super) fn new(
        kind: Direction,
        fd: RawFd,
        offset: u64,
        mem: Mem,
        total: usize,
        reply: Answer,
    ) -> Request {
        Request {
            kind,
            fd,
            offset,
            mem,
            done: 0,
            total,
            reply: Some(reply),
            owned: Owned::default(),
        }
    }

    /// A posted request: `op`'s frames on `file`, answered into `to` with `token`. The request
    /// owns both until it is answered, so the kernel's use of them needs nothing of the poster.
    pub(super) fn posted(
        op: PostOp,
        file: Arc<FileStorage>,
        to: &Arc<Completions>,
        token: u64,
    ) -> Request {
        let kind = if op.is_read() {
            Direction::Read
        } else {
            Direction::Write
        };
        let (offset, total, len, unit) = (op.offset(), op.total(), op.len(), op.iov_unit());
        let mut frames = op.into_frames();
        // Raw pointers into the frames' memory, which does not move when the frames do; each
        // frame one entry, or several of `unit` bytes (`IoVec4K`).
        let list = frames
            .iter_mut()
            .flat_map(|f| {
                let base = f.as_mut_ptr();
                crate::io::post::pieces(len, unit).map(move |r| libc::iovec {
                    iov_base: base.wrapping_add(r.start).cast(),
                    iov_len: r.len(),
                })
            })
            .collect();
        let fd = std::os::fd::AsRawFd::as_raw_fd(file.file());
        let mem = Mem::Iov { list, first: 0 };
        let mut r = Request::new(
            kind,
            fd,
            offset,
            mem,
            total,
            Answer::Posted(Arc::clone(to), token),
        );
        r.owned = Owned {
            frames,
            file: Some(file),
        };
        r
    }

    /// True for a request whose caller blocks on it with memory it only borrows (which cannot
    /// be leaked on the caller's behalf: see `ring_slots::drain_or_leak`).
    pub(super) fn borrows(&self) -> bool {
        matches!(self.reply, Some(Answer::Caller(_)))
    }

    /// The kernel may still hold this request's memory and it can no longer be waited for:
    /// its frames, iovec list and file are leaked (never reused or freed) and its poster is
    /// answered with `why` and no frames.
    pub(super) fn leak(mut self, why: io::Error) {
        std::mem::forget(std::mem::take(&mut self.owned));
        if let Mem::Iov { list, .. } = &mut self.mem {
            std::mem::forget(std::mem::take(list));
        }
        if let Some(reply) = self.reply.take() {
            reply.give(Err(why), Vec::new(), None);
        }
    }

    /// The ring operation for what is left, tagged `user_data`.
    pub(super) fn ext_op(&mut self, user_data: u64) -> ExtOp {
        let mem = match &mut self.mem {
            Mem::Buf { ptr, len } => ExtMem::Buf {
                ptr: *ptr,
                len: (*len).min(MAX_CHUNK) as u32,
            },
            Mem::Iov { list, first } => ExtMem::Iov {
                iov: list[*first..].as_ptr(),
                count: (list.len() - *first).min(IOV_MAX) as u32,
            },
        };
        ExtOp {
            kind: self.kind,
            fd: self.fd,
            offset: self.offset,
            mem,
            user_data,
        }
    }

    /// Reads a completion as `FileStorage` reads a syscall's result: short transfers continue,
    /// EINTR and EAGAIN are retried, a read stops early only at end of file, and a direct read
    /// that stopped at an unaligned end of file (EINVAL after progress) returns what it read.
    pub(super) fn step(&mut self, result: Result<u32, i32>) -> Step {
        match (result, self.kind) {
            (Ok(0), Direction::Read) => Step::Done(Ok(self.done)),
            (Ok(0), Direction::Write) => Step::Done(Err(super::super::file::write_zero())),
            (Ok(n), _) => {
                self.advance(n as usize);
                if self.done >= self.total {
                    Step::Done(Ok(self.done))
                } else {
                    Step::Again
                }
            }
            (Err(libc::EINTR | libc::EAGAIN), _) => Step::Again,
            (Err(libc::EINVAL), Direction::Read) if self.done > 0 => Step::Done(Ok(self.done)),
            (Err(errno), _) => Step::Done(Err(io::Error::from_raw_os_error(errno))),
        }
    }

    fn advance(&mut self, n: usize) {
        self.done += n;
        self.offset += n as u64;
        match &mut self.mem {
            Mem::Buf { ptr, len } => {
                // The kernel moved `n <= len` bytes, so the pointer stays inside the buffer.
                *ptr = ptr.wrapping_add(n);
                *len -= n;
            }
            Mem::Iov { list, first } => {
                let mut n = n;
                while n > 0 && *first < list.len() {
                    let iov = &mut list[*first];
                    if n < iov.iov_len {
                        iov.iov_base = iov.iov_base.cast::<u8>().wrapping_add(n).cast();
                        iov.iov_len -= n;
                        n = 0;
                    } else {
                        n -= iov.iov_len;
                        *first += 1;
                    }
                }
            }
        }
    }

    /// Hands the answer to the caller.
    pub(super) fn answer(mut self, r: io::Result<usize>) {
        if let Some(reply) = self.reply.take() {
            reply.give(r, std::mem::take(&mut self.owned.frames), None);
        }
    }

    /// Hands the answer to the caller, a posted one through `pass` (queued when the reap pass
    /// ends, with the pass's other completions).
    pub(super) fn answer_in(mut self, r: io::Result<usize>, pass: &mut Pass) {
        if let Some(reply) = self.reply.take() {
            reply.give(r, std::mem::take(&mut self.owned.frames), Some(pass));
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if let Some(reply) = self.reply.take() {
            let frames = std::mem::take(&mut self.owned.frames);
            reply.give(Err(stopped("the request was abandoned")), frames, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iov_request(lens: &[usize], bufs: &mut [Vec<u8>]) -> Request {
        let list = bufs
            .iter_mut()
            .zip(lens)
            .map(|(b, &len)| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: len,
            })
            .collect();
        let total = lens.iter().sum();
        let mem = Mem::Iov { list, first: 0 };
        Request::new(
            Direction::Read,
            0,
            100,
            mem,
            total,
            Answer::Caller(Arc::default()),
        )
    }

    #[test]
    fn a_short_vectored_transfer_continues_inside_the_right_buffer() {
        let mut bufs = vec![vec![0u8; 4], vec![0u8; 4]];
        let mut r = iov_request(&[4, 4], &mut bufs);
        assert!(matches!(r.step(Ok(6)), Step::Again));
        let op = r.ext_op(9);
        assert_eq!(op.offset, 106);
        let ExtMem::Iov { iov, count } = op.mem else {
            panic!("vectored")
        };
        assert_eq!(count, 1);
        // SAFETY: `iov` points into the request's list, alive here.
        let rest = unsafe { *iov };
        assert_eq!(rest.iov_len, 2);
        assert_eq!(rest.iov_base.cast::<u8>(), bufs[1][2..].as_mut_ptr());
        assert!(matches!(r.step(Ok(2)), Step::Done(Ok(8))));
    }

    #[test]
    fn reads_stop_at_eof_and_writes_of_nothing_are_errors() {
        let mut bufs = vec![vec![0u8; 8]];
        let mut r = iov_request(&[8], &mut bufs);
        assert!(matches!(r.step(Ok(3)), Step::Again));
        assert!(matches!(r.step(Err(libc::EINTR)), Step::Again));
        assert!(matches!(r.step(Err(libc::EINVAL)), Step::Done(Ok(3))));
        let mut w = iov_request(&[8], &mut bufs);
        w.kind = Direction::Write;
        match w.step(Ok(0)) {
            Step::Done(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::WriteZero),
            _ => panic!("a write of nothing is an error"),
        }
        match w.step(Err(libc::EINVAL)) {
            Step::Done(Err(e)) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL)),
            _ => panic!("EINVAL on a write is an error"),
        }
    }

    /// What replaced the abort (issue #22 §5): a posted request the kernel may still hold is
    /// leaked — its poster hears the error, gets no frames, and the frames never return to
    /// the pool — while one answered normally hands its frames back.
    #[test]
    fn a_leaked_posted_request_answers_without_its_frames_and_keeps_them_from_the_pool() {
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        let path = dir.path().join("f");
        let file = std::fs::File::create(&path).expect("create");
        let file = Arc::new(FileStorage::new(file, path));
        let pool = crate::io::BufPool::new(4, 4096).expect("pool");
        let to = Arc::new(Completions::default());
        let op = PostOp::write(0, pool.take_many(2).expect("frames"), 4096);
        Request::posted(op, Arc::clone(&file), &to, 1).leak(stopped("a test's ring"));
        let c = to.try_take().expect("the leaked request is answered");
        assert_eq!(c.token, 1);
        assert!(c.result.is_err() && c.frames.is_empty(), "{c:?}");
        assert_eq!(pool.available(), 2, "the two frames stay out of the pool");
        let op = PostOp::read(0, pool.take_many(2).expect("frames"), 4096);
        Request::posted(op, file, &to, 2).answer(Ok(0));
        let c = to.try_take().expect("answered");
        assert_eq!((c.token, c.frames.len()), (2, 2), "its frames come back");
        drop(c);
        assert_eq!(pool.available(), 2);
    }

    #[test]
    fn a_dropped_request_answers_with_an_error() {
        let reply = Arc::new(Reply::default());
        let mem = Mem::Buf {
            ptr: std::ptr::null_mut(),
            len: 1,
        };
        drop(Request::new(
            Direction::Read,
            0,
            0,
            mem,
            1,
            Answer::Caller(reply.clone()),
        ));
        let e = reply.wait().expect_err("abandoned");
        assert!(e.to_string().contains("I/O service stopped"), "{e}");
    }
}
