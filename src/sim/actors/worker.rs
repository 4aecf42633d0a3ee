//! One actor thread's machinery: its buffers, random generator and statistics, and the two
//! page operations every actor is built from — read-and-verify a run of pages, and write a
//! run of pages after the log is durable.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::context::Run;
use super::evidence;
use crate::io::AlignedBuf;
use crate::page::{layout, verify, ActorKind, PageStamp, Verdict, PAGE_SIZE};
use crate::sim::engine::retry;
use crate::stats::{OpKind, ThreadStats};

/// One actor thread.
pub struct Worker<'a> {
    /// The run.
    pub run: &'a Run<'a>,
    /// Kind of actor.
    pub kind: ActorKind,
    /// Which actor of that kind.
    pub id: u16,
    /// This thread's random generator (derived from the run seed).
    pub rng: SmallRng,
    /// This thread's statistics.
    pub stats: ThreadStats,
    buf: AlignedBuf,
    max_pages: usize,
}

/// The transfer problem of a read request, if any: an error, fewer bytes than asked, or a
/// sector the read left untouched (still holding the bytes-not-read pattern).
fn request_problem(res: &std::io::Result<usize>, buf: &[u8]) -> Option<Verdict> {
    match res {
        Err(e) => Some(Verdict::IoError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        }),
        Ok(got) if *got < buf.len() => Some(Verdict::ShortRead { bytes: *got as u32 }),
        Ok(_) => buf
            .chunks(PAGE_SIZE)
            .enumerate()
            .find_map(|(i, p)| retry::bytes_not_read(p).map(|at| i * PAGE_SIZE + at))
            .map(|at| Verdict::ShortRead { bytes: at as u32 }),
    }
}

/// What a read of a run of pages found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadTally {
    /// Pages read and verified.
    pub pages: u64,
    /// Pages with a finding.
    pub bad: u64,
}

impl<'a> Worker<'a> {
    /// A finding about `page` of the file at `path` (file id `file_id`) by this worker, under
    /// the run's seed: the set's files, a restore's copies, a Sort User's tempdb file.
    pub fn page_finding(
        &self,
        path: &std::path::Path,
        file_id: u32,
        page: u64,
        verdict: Verdict,
    ) -> crate::findings::Finding {
        crate::findings::Finding::page(
            self.run.plan.seed,
            path.to_path_buf(),
            file_id,
            page,
            self.kind,
            self.id,
            verdict,
        )
    }

    /// A worker with room for runs of `max_pages` pages; its seed is derived from the run seed
    /// and its identity, so every thread's choices are reproducible.
    pub fn new(
        run: &'a Run<'a>,
        kind: ActorKind,
        id: u16,
        max_pages: usize,
    ) -> std::io::Result<Worker<'a>> {
        let max_pages = max_pages.max(1);
        let seed =
            crate::page::fill::splitmix64(run.plan.seed ^ ((kind as u64) << 32) ^ u64::from(id));
        Ok(Worker {
            run,
            kind,
            id,
            rng: SmallRng::seed_from_u64(seed),
            stats: ThreadStats::new(run.reporting.start)
                .with_live(run.reporting.live.clone())
                .with_board(run.reporting.board.clone()),
            buf: AlignedBuf::new(max_pages * PAGE_SIZE)?,
            max_pages,
        })
    }

    /// Largest run this worker can do in one request.
    pub fn max_pages(&self) -> usize {
        self.max_pages
    }

    /// Random number in `lo..=hi` (`lo` when the range is empty).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        between(&mut self.rng, lo, hi)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        chance(&mut self.rng, p)
    }

    /// Reads `n` pages from `first` of data file `file` and verifies each; findings are reported.
    pub fn read_run(&mut self, file: usize, first: u64, n: u64) -> ReadTally {
        let run = self.run;
        if n > 1 && !run.plan.scatter_gather {
            // Without scatter/gather every page is a request of its own (SQLIOSim's rule),
            // so a failure is the failure of that page alone.
            return (first..first + n).fold(ReadTally::default(), |acc, p| {
                let o = self.read_run(file, p, 1);
                ReadTally {
                    pages: acc.pages + o.pages,
                    bad: acc.bad + o.bad,
                }
            });
        }
        let f = &run.files[file];
        let size = f.pages.read();
        let first = first.max(1);
        let n = n.min(self.max_pages as u64).min(size.saturating_sub(first));
        if n == 0 {
            return ReadTally::default();
        }
        let _latch = f.oracle.read_latch_range(first, n);
        retry::fill_bnr(&mut self.buf[..n as usize * PAGE_SIZE]);
        let bytes = n as usize * PAGE_SIZE;
        let res = self.run_io(file, first, n, true);
        let transfer = request_problem(&res, &self.buf[..bytes]);
        if let (Some(v), true) = (&transfer, n > 1) {
            // The request as a whole failed: say so once, then judge each page on its own read.
            let out = self.reread_singly(file, first, n);
            evidence::report_request(self, file, first, n, v.clone(), out.bad > 0);
            return out;
        }
        let mut out = ReadTally { pages: n, bad: 0 };
        for i in 0..n {
            let page = first + i;
            let at = i as usize * PAGE_SIZE;
            let verdict = match &transfer {
                Some(v) => v.clone(),
                None => self.check_page(file, at, page),
            };
            if !verdict.is_ok() {
                out.bad += 1;
                let received = self.buf[at..at + PAGE_SIZE].to_vec();
                evidence::triage_and_report(self, file, page, verdict, received);
            }
        }
        out
    }

    /// Reads each page of a run alone and verifies it (after a failed multi-page request).
    pub(super) fn reread_singly(&mut self, file: usize, first: u64, n: u64) -> ReadTally {
        let mut out = ReadTally { pages: n, bad: 0 };
        let f = &self.run.files[file];
        for i in 0..n {
            let page = first + i;
            let exp = f.oracle.expect_page(page);
            let slot = &mut self.buf[i as usize * PAGE_SIZE..(i as usize + 1) * PAGE_SIZE];
            let verdict = retry::read_once(f.storage.as_ref(), slot, page * PAGE_SIZE as u64, &exp);
            if !verdict.is_ok() {
                out.bad += 1;
                let received = slot.to_vec();
                evidence::triage_and_report(self, file, page, verdict, received);
            }
        }
        out
    }

    /// Writes `n` pages from `first` of data file `file`, changed by log records up to `lsn`
    /// (0: not logged), after making the log durable past `lsn`. Returns the pages written.
    pub fn write_run(&mut self, file: usize, first: u64, n: u64, lsn: u64) -> u64 {
        let run = self.run;
        if lsn > 0 && !self.flush_log(file, lsn) {
            return 0;
        }
        if n > 1 && !run.plan.scatter_gather {
            // One request per page: the log is already durable past `lsn`.
            return (first..first + n)
                .map(|p| self.write_run(file, p, 1, lsn))
                .sum();
        }
        let f = &run.files[file];
        let size = f.pages.read();
        let first = first.max(1);
        let n = n.min(self.max_pages as u64).min(size.saturating_sub(first));
        if n == 0 {
            return 0;
        }
        let _latch = f.oracle.write_latch_range(first, n);
        // An open DBCC snapshot keeps the pages' pre-images first.
        super::checkdb::preserve(self, file, first, n);
        let now = layout::now_us();
        let gens: Vec<u64> = (first..first + n)
            .map(|p| f.oracle.begin_write(p))
            .collect();
        // No page may carry a generation the header's ceiling does not cover (a restart
        // starts above the ceiling): the page is not written if the header cannot be.
        if let Err(e) = f.reserve(gens.iter().copied().max().unwrap_or(0)) {
            for (i, g) in gens.iter().enumerate() {
                f.oracle.complete_write(first + i as u64, *g, false);
            }
            evidence::report_write_error(self, file, 0, 1, &e);
            return 0;
        }
        for (i, g) in gens.iter().enumerate() {
            let st = PageStamp {
                run_id: run.files.run_id,
                file_id: file as u32,
                page_id: first + i as u64,
                generation: *g,
                lsn,
                writer_kind: self.kind,
                writer_id: self.id,
                write_time_us: now,
            };
            layout::stamp_page(&mut self.buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE], &st);
        }
        let res = self.run_io(file, first, n, false);
        let ok = res.is_ok();
        for (i, g) in gens.iter().enumerate() {
            f.oracle.complete_write(first + i as u64, *g, ok);
            f.remember(
                first + i as u64,
                evidence::history(self.kind, "write", *g, ok),
            );
        }
        if let Err(e) = res {
            evidence::report_write_error(self, file, first, n, &e);
            return 0;
        }
        // Still under the size guard: a resize is journaled after this acknowledgement.
        super::journaling::acknowledged(run, file, first, gens);
        n
    }

    /// Makes `io`, one request of `bytes` to data file `file` or (`None`) to a file outside the
    /// set (a tempdb file, a DBCC snapshot), and records it in this thread's statistics as `op`
    /// by this actor. It is in the in-flight table (a request outstanding for 15 s is reported,
    /// whatever its file), and under a throttle: a data file's own, as every request to it
    /// is, or the one the files outside the set share (`Controls::scratch`).
    pub fn timed_outside<T>(
        &mut self,
        file: Option<usize>,
        op: OpKind,
        bytes: u64,
        io: impl FnOnce() -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let run = self.run;
        let throttle = file.map_or(&run.controls.scratch, |f| &run.controls.throttles[f]);
        let waited_before = throttle.throttled();
        let permit = throttle.enter(&run.controls.gate, run.controls.bursting());
        if let (Some(f), true) = (file, throttle.throttled() > waited_before) {
            self.stats.throttled(f);
        }
        let watch = run.controls.io_ages.begin();
        let t = crate::clock::now();
        let res = io();
        let took = crate::clock::since(t);
        drop(watch);
        throttle.complete(permit, took);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        match (&res, file) {
            (Ok(_), Some(f)) => self.stats.record(f, self.kind, op, bytes, ns),
            (Ok(_), None) => self.stats.record_scratch(self.kind, op, bytes, ns),
            (Err(_), Some(f)) => self.stats.record_error(f, self.kind, op),
            (Err(_), None) => self.stats.record_scratch_error(self.kind, op),
        }
        res
    }

    /// Verifies the page in buffer slot at byte `at`, and checks the write-ahead rule: a page
    /// on disk must never carry an LSN the log has not made durable.
    fn check_page(&self, file: usize, at: usize, page: u64) -> Verdict {
        self.check_bytes(file, &self.buf[at..at + PAGE_SIZE], page)
    }

    /// Verifies `bytes`, read from `page`, as [`Worker::check_page`] does.
    pub(super) fn check_bytes(&self, file: usize, bytes: &[u8], page: u64) -> Verdict {
        let verdict = verify(bytes, &self.run.files[file].oracle.expect_page(page));
        if verdict.is_ok() {
            if let (Some(st), Some(log)) = (layout::read_stamp(bytes), self.run.files.log_of(file))
            {
                let durable = log.wal.durable_end();
                if st.lsn > 0 && st.lsn >= durable {
                    let what = format!(
                        "write-ahead rule broken: page {page} carries LSN {} but the log is durable only up to {durable}",
                        st.lsn
                    );
                    let f = evidence::log_finding(
                        self,
                        file,
                        crate::findings::FindingClass::WalViolation,
                        page * PAGE_SIZE as u64,
                        what,
                    );
                    self.run.report(f);
                }
            }
        }
        verdict
    }

    /// Makes the WAL of data file `file` durable past `lsn`; false (and a finding) on failure.
    pub fn flush_log(&mut self, file: usize, lsn: u64) -> bool {
        let Some(log) = self.run.files.log_of(file) else {
            return true;
        };
        match log.wal.flush_to(lsn, &self.log_gate(log.file)) {
            Ok(ios) => {
                self.record_log_ios(log.file, ActorKind::LogWriter, &ios);
                true
            }
            Err(e) => {
                evidence::report_write_error(self, log.file, 0, 0, &e);
                false
            }
        }
    }

    /// Does the I/O for a run of pages held in the buffer: one request, vectored when it covers
    /// several pages (without scatter/gather the callers split runs into single pages).
    /// Returns the bytes moved.
    fn run_io(&mut self, file: usize, first: u64, n: u64, read: bool) -> std::io::Result<usize> {
        self.timed_io(file, first, 0, n as usize, read, n > 1)
    }

    /// One request of `count` pages (buffer slots from `slot`) at `page`, under the throttle
    /// and the in-flight table, with its statistics recorded.
    fn timed_io(
        &mut self,
        file: usize,
        page: u64,
        slot: usize,
        count: usize,
        read: bool,
        vectored: bool,
    ) -> std::io::Result<usize> {
        let run = self.run;
        let throttle = &run.controls.throttles[file];
        let waited_before = throttle.throttled();
        let permit = throttle.enter(&run.controls.gate, run.controls.bursting());
        if throttle.throttled() > waited_before {
            self.stats.throttled(file);
        }
        self.stats
            .outstanding(file, throttle.max_outstanding() as u64);
        let buf = &mut self.buf[slot * PAGE_SIZE..(slot + count) * PAGE_SIZE];
        let storage = run.files[file].storage.as_ref();
        let off = page * PAGE_SIZE as u64;
        let guard = run.controls.io_ages.begin();
        let t = crate::clock::now();
        let res = match (read, vectored) {
            (true, true) => {
                let mut slices: Vec<&mut [u8]> = buf.chunks_mut(run.plan.iovec_unit()).collect();
                storage.read_vectored_at(&mut slices, off)
            }
            (true, false) => storage.read_at(buf, off),
            (false, true) => {
                let slices: Vec<&[u8]> = buf.chunks(run.plan.iovec_unit()).collect();
                storage
                    .write_vectored_at(&slices, off)
                    .map(|_| count * PAGE_SIZE)
            }
            (false, false) => storage.write_at(buf, off).map(|_| count * PAGE_SIZE),
        };
        let took = crate::clock::since(t);
        drop(guard);
        throttle.complete(permit, took);
        let op = match (read, vectored) {
            (true, false) => OpKind::Read,
            (true, true) => OpKind::ScatterRead,
            (false, false) => OpKind::Write,
            (false, true) => OpKind::GatherWrite,
        };
        match &res {
            Ok(_) => self.stats.record(
                file,
                self.kind,
                op,
                (count * PAGE_SIZE) as u64,
                took.as_nanos() as u64,
            ),
            Err(_) => self.stats.record_error(file, self.kind, op),
        }
        res
    }

    /// Sleeps unless the phase ends; false when it ended.
    pub fn pause(&self, d: Duration) -> bool {
        d.is_zero() || self.run.controls.stop.sleep(d)
    }
}

/// Random number in `lo..=hi` (`lo` when the range is empty): what an actor's decisions draw.
pub fn between(rng: &mut SmallRng, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        lo
    } else {
        rng.random_range(lo..=hi)
    }
}

/// True with probability `p`.
pub fn chance(rng: &mut SmallRng, p: f64) -> bool {
    p > 0.0 && rng.random::<f64>() < p
}
