//! An asynchronous actor's requests in flight (issue #15): the checkpoint, lazy writer,
//! read-ahead, bulk update and initial update post their reads and writes without waiting for
//! each, and collect the completions as they come.
//!
//! Each posted request holds, from its post until its completion is handled: the file's size
//! shared (no resize under it), its pages' latches (exclusive for a write, shared for a read —
//! so no read of a page races a write to it, at any depth), a throttle permit (the depth the
//! file's throttle and MaxOutstandingIO allow), a slot of the long-I/O monitor's table, and
//! page frames of the I/O frame pool allocated at start (no allocation per request) — those
//! the request itself owns while in flight, and its completion hands back. The oracle
//! learns a write's outcome only on its completion; a read is verified only on its completion.
//!
//! Deadlock freedom: while it has requests in flight the actor only *tries* to take a latch,
//! the size, a permit or frames; on refusal it handles one of its own completions (releasing
//! what that request held) and tries again, and waits only when it has nothing in flight —
//! the state a synchronous actor is always in when it waits. Its requests complete without
//! anyone's help, so what it holds is always released.

mod acquire;
mod complete;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::RwLockReadGuard;

use super::context::Run;
use super::journaling::acks::AckBook;
use super::poster::Poster;
use super::worker::Worker;
use super::{evidence, request_pages};
use crate::io::{Frame, PostOp};
use crate::page::PAGE_SIZE;
use crate::sim::control::io_ages::IoAgeGuard;
use crate::sim::control::throttle::Permit;
use crate::sim::engine::oracle::{ReadLatch, WriteLatch};
use crate::sim::engine::retry;

/// A page latch set held by a request in flight.
enum Latch<'a> {
    Read(
        #[expect(
            dead_code,
            reason = "held for its Drop: the latch is released when the request completes"
        )]
        ReadLatch<'a>,
    ),
    Write(
        #[expect(
            dead_code,
            reason = "held for its Drop: the latch is released when the request completes"
        )]
        WriteLatch<'a>,
    ),
}

/// What to do with a request's pages once it completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Nothing more.
    Nothing,
    /// A write of dirty pages: mark them clean up to this LSN in the buffer pool.
    Clean(u64),
    /// A read-ahead: the pages are now cached in the buffer pool.
    Cache,
    /// A backup's read: a copy of the pages as read is kept for [`Outstanding::take_kept`].
    Keep,
}

/// A completed read's pages as read (`After::Keep`), after their verification.
#[derive(Debug)]
pub struct Kept {
    /// Data file index.
    pub file: usize,
    /// First page.
    pub first: u64,
    /// The pages' bytes, `PAGE_SIZE` each (empty when the read failed).
    pub bytes: Vec<u8>,
}

/// One posted request and everything it holds until its completion is handled.
struct Posted<'a> {
    file: usize,
    first: u64,
    n: u64,
    gens: Vec<u64>,
    after: After,
    started: Instant,
    // Released in this order when the request is handled (field order): monitor slot,
    // permit, latches, size.
    _watch: IoAgeGuard<'a>,
    permit: Option<Permit<'a>>,
    _latch: Latch<'a>,
    _size: RwLockReadGuard<'a, u64>,
}

/// What one request needs before it may be posted.
struct Held<'a> {
    size: RwLockReadGuard<'a, u64>,
    latch: Latch<'a>,
    permit: Permit<'a>,
    frames: Vec<Frame>,
}

/// The requests one actor has in flight.
pub struct Outstanding<'a> {
    run: &'a Run<'a>,
    poster: Poster,
    slots: Vec<Option<Posted<'a>>>,
    free: Vec<usize>,
    live: usize,
    limit: usize,
    /// Most requests this flight had in flight at once.
    pub max_live: usize,
    /// Requests posted.
    pub posted: u64,
    /// Pages written or read successfully.
    pub pages: u64,
    /// The journal acknowledgements its writes owe, pushed as they complete.
    acks: Option<Arc<AckBook>>,
    /// Completed `After::Keep` reads not yet taken.
    kept: Vec<Kept>,
}

/// How the initial update's and the checkpoint's log lines name requests carried by the
/// actor's own io_uring.
pub const OWN_RING_NOTE: &str = "on its own io_uring";

impl<'a> Outstanding<'a> {
    /// An empty flight of at most the run's asynchronous depth.
    pub fn new(run: &'a Run<'a>) -> Outstanding<'a> {
        let poster = Poster::new(run.controls.async_depth.max(1));
        let acks = AckBook::for_run(run);
        poster.on_complete(acks.as_ref().map(AckBook::hook));
        Outstanding {
            run,
            poster,
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            limit: run.controls.async_depth.max(1),
            max_live: 0,
            posted: 0,
            pages: 0,
            acks,
            kept: Vec::new(),
        }
    }

    /// An empty flight of at most `depth` requests (a backup's BufferCount), and at most
    /// the run's asynchronous depth.
    pub fn with_depth(run: &'a Run<'a>, depth: usize) -> Outstanding<'a> {
        let mut f = Outstanding::new(run);
        f.limit = depth.clamp(1, f.limit);
        f
    }

    /// The `After::Keep` reads completed since the last call, in completion order.
    pub fn take_kept(&mut self) -> Vec<Kept> {
        std::mem::take(&mut self.kept)
    }

    /// Requests in flight now.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Requests carried by this actor's own io_uring rather than the shared I/O service.
    pub fn own_posted(&self) -> u64 {
        self.poster.own_posted
    }

    /// True once this flight posts on a ring of its own, whose completions arrive only when
    /// the flight reaps them (and are timed then).
    pub fn reaps_itself(&self) -> bool {
        self.poster.has_ring()
    }

    /// For the log, after a flight of writes that took `took`: `wrote N pages in R requests,
    /// at most D requests in flight, in T ms` and, when its own io_uring carried them,
    /// `, K requests on its own io_uring`.
    pub fn describe_writes(&self, took: Duration) -> String {
        let own = match self.own_posted() {
            0 => String::new(),
            n => format!(", {n} requests {OWN_RING_NOTE}"),
        };
        format!(
            "wrote {} pages in {} requests, at most {} requests in flight, in {} ms{own}",
            self.pages,
            self.posted,
            self.max_live,
            took.as_millis()
        )
    }

    /// Posts a write of `n` pages from `first` of data file `file`, changed by log records up
    /// to `lsn` (0: not logged), after making the log durable past `lsn`; without
    /// scatter/gather, one request per page. False when the log could not be made durable.
    pub fn write(
        &mut self,
        w: &mut Worker<'a>,
        file: usize,
        first: u64,
        n: u64,
        lsn: u64,
        after: After,
    ) -> bool {
        if lsn > 0 && !w.flush_log(file, lsn) {
            return false;
        }
        self.each_request(w, first, n, |fl, w, p, k| {
            fl.post(w, file, p, k, lsn, after, false)
        });
        true
    }

    /// Posts reads of `n` pages from `first` of data file `file`, each verified on completion.
    pub fn read(&mut self, w: &mut Worker<'a>, file: usize, first: u64, n: u64, after: After) {
        self.each_request(w, first, n, |fl, w, p, k| {
            fl.post(w, file, p, k, 0, after, true)
        });
    }

    /// Splits a run into requests: single pages without scatter/gather, else runs of at most
    /// the worker's buffer (which a failed request's pages are re-read into one by one).
    fn each_request(
        &mut self,
        w: &mut Worker<'a>,
        first: u64,
        n: u64,
        mut post: impl FnMut(&mut Self, &mut Worker<'a>, u64, u64),
    ) {
        let step = if self.run.plan.scatter_gather {
            (w.max_pages() as u64)
                .min(self.run.controls.io_frames.frames() as u64)
                .max(1)
        } else {
            1
        };
        let mut page = first;
        while page < first + n {
            let k = step.min(first + n - page);
            post(self, w, page, k);
            page += k;
        }
    }

    /// Posts one request (see `write` and `read`).
    #[expect(
        clippy::too_many_arguments,
        reason = "the request's parts, each from a different owner; a struct for one call would only rename them"
    )]
    fn post(
        &mut self,
        w: &mut Worker<'a>,
        file: usize,
        first: u64,
        n: u64,
        lsn: u64,
        after: After,
        read: bool,
    ) {
        let run = self.run;
        // Completions are handled as they come: the throttle learns each latency at once.
        self.reap_ready(w);
        let Some(held) = self.acquire(w, file, first, n, read) else {
            return;
        };
        let first = first.max(1);
        let n = n.min(held.size.saturating_sub(first));
        if n == 0 {
            return;
        }
        let f = &run.files[file];
        let mut frames = held.frames;
        frames.truncate(n as usize);
        let mut gens = Vec::new();
        if read {
            frames.iter_mut().for_each(|fr| retry::fill_bnr(fr));
        } else {
            // An open DBCC snapshot keeps the pages' pre-images first (under the latch held).
            super::checkdb::preserve(w, file, first, n);
            gens = (first..first + n)
                .map(|p| f.oracle.begin_write(p))
                .collect();
            if let Err(e) = f.reserve(gens.iter().copied().max().unwrap_or(0)) {
                for (i, g) in gens.iter().enumerate() {
                    f.oracle.complete_write(first + i as u64, *g, false);
                }
                evidence::report_write_error(w, file, 0, 1, &e);
                return;
            }
            request_pages::stamp(w, &mut frames, file, first, &gens, lsn);
        }
        let offset = first * PAGE_SIZE as u64;
        let op = if read {
            PostOp::read(offset, frames, PAGE_SIZE)
        } else {
            PostOp::write(offset, frames, PAGE_SIZE)
        }
        .with_iov_unit(run.plan.iovec_unit());
        let token = self.slot();
        if let (Some(book), false) = (&self.acks, read) {
            book.expect(token as u64, file, first, &gens);
        }
        self.slots[token] = Some(Posted {
            file,
            first,
            n,
            gens,
            after,
            started: crate::clock::now(),
            _watch: run.controls.io_ages.begin(),
            permit: Some(held.permit),
            _latch: held.latch,
            _size: held.size,
        });
        self.live += 1;
        self.posted += 1;
        self.max_live = self.max_live.max(self.live);
        w.stats
            .outstanding(file, run.controls.throttles[file].max_outstanding() as u64);
        // The frames go with the request; its completion hands them back (see `handle`).
        let carried = self.poster.post(f.storage.as_ref(), op, token as u64);
        if let Err(why) = carried {
            run.message(
                crate::findings::Severity::Warning,
                w.kind.name(),
                "IoEngine",
                format!("this actor's own io_uring could not be set up ({why}): its requests go through the shared I/O service"),
            );
        }
    }

    /// A free slot index (the request's token).
    fn slot(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        })
    }
}

impl Drop for Outstanding<'_> {
    /// A flight dropped with requests in flight (a panicking actor): wait for every completion,
    /// so what each request holds (latches, permit, size) is released only once it is over;
    /// its frames come back with it.
    fn drop(&mut self) {
        while self.live > 0 {
            let c = self.poster.wait();
            if let Some(slot) = self.slots.get_mut(c.token as usize) {
                slot.take();
            }
            self.live -= 1;
        }
    }
}
