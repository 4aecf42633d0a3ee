//! One worker thread of a capacity run: its own ring, `depth` operations kept in flight,
//! offsets and read/write choices from a seeded generator, latencies recorded only for
//! completions inside the measured window, stamps written and (with `--verify`) checked.

use super::error::BenchError;
use super::job::{DataMode, Job, Pattern};
use super::lane::Lane;
use super::latency::BenchStats;
use super::stamp;
use crate::io::aio::{Direction, Op, Ring, RingCompletion, RingConfig, RingKind};
use crate::io::file::FileStorage;
use crate::io::oserr;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After this many failed operations a worker stops issuing: the run reports them.
const MAX_ERRORS: u64 = 100;

/// Phase boundaries shared by all workers of a run.
#[derive(Debug, Clone, Copy)]
pub struct Phases {
    /// Warm-up begins.
    pub start: Instant,
    /// Measurement begins.
    pub measure_start: Instant,
    /// Measurement ends (cool-down begins).
    pub measure_end: Instant,
    /// Cool-down ends.
    pub end: Instant,
}

impl Phases {
    /// Phases of `job` starting now.
    pub fn starting_now(job: &Job) -> Phases {
        let start = Instant::now();
        let measure_start = start + Duration::from_secs_f64(job.warmup_s);
        let measure_end = measure_start + Duration::from_secs_f64(job.duration_s);
        let end = measure_end + Duration::from_secs_f64(job.cooldown_s);
        Phases {
            start,
            measure_start,
            measure_end,
            end,
        }
    }
}

/// Where one worker works.
pub struct Assignment {
    /// Index of the worker over the whole run.
    pub thread: usize,
    /// Index of its file in the ring's file list.
    pub file: u32,
    /// Index among the workers of the same file.
    pub rank: u32,
    /// The file's stamp seed.
    pub file_seed: u64,
    /// The file's size.
    pub file_size: u64,
}

/// Per-slot state of an operation in flight.
#[derive(Clone, Copy)]
struct Slot {
    kind: Direction,
    offset: u64,
    issued: Instant,
}

/// A running worker: ring, generators and statistics.
pub struct BenchWorker<'a> {
    job: &'a Job,
    at: Assignment,
    ring: Ring,
    rng: SmallRng,
    slots: Vec<Slot>,
    crcs: Vec<stamp::PayloadCrcs>,
    idle: Vec<u32>,
    base: u64,
    lane: Lane,
    writes: u64,
    interval: Option<Duration>,
    next_due: Instant,
    stats: BenchStats,
}

impl<'a> BenchWorker<'a> {
    /// Builds the worker's ring and fills its write buffers.
    pub fn new(
        job: &'a Job,
        at: Assignment,
        files: Arc<[FileStorage]>,
    ) -> Result<Self, BenchError> {
        let cfg = RingConfig {
            kind: job.ring_kind,
            depth: job.depth,
            slot_len: job.block_size as usize,
            submit_batch: job.submit_batch,
        };
        let mut ring = Ring::new(&cfg, files)?;
        let mut rng = SmallRng::seed_from_u64(
            job.seed ^ (at.thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        if job.data == DataMode::Random {
            for s in 0..job.depth {
                rng.fill(ring.buffer_mut(s));
            }
        }
        let (base, end) = job.region(at.file_size);
        let blocks = (end - base) / u64::from(job.block_size);
        // Stamped writes keep each worker to blocks of its own, none twice in flight
        // (`lane`): a read racing a write to the same sector reads a torn stamp.
        let exclusive = job.stamps_writes() && job.read_pct < 100;
        let sequential = job.pattern == Pattern::Sequential;
        let lane = Lane::new(
            blocks,
            at.rank,
            job.threads_per_target,
            sequential,
            exclusive,
            job.depth as usize,
        )
        .ok_or_else(|| {
            BenchError::Usage(format!(
                "{}: the region holds {blocks} blocks of {} bytes, fewer than the {} threads \
                 on it; stamped writes give each thread blocks of its own (two requests on \
                 one block at once can tear its stamps): use fewer threads or a larger region",
                job.targets[at.file as usize].path.display(),
                job.block_size,
                job.threads_per_target
            ))
        })?;
        let interval = job
            .rate_iops
            .filter(|r| *r > 0.0)
            .map(|r| Duration::from_secs_f64(f64::from(job.threads()) / r));
        let now = Instant::now();
        let slots = vec![
            Slot {
                kind: Direction::Read,
                offset: 0,
                issued: now
            };
            job.depth as usize
        ];
        let idle = (0..job.depth).rev().collect();
        let crcs = vec![stamp::PayloadCrcs::default(); job.depth as usize];
        let (writes, stats) = (0, BenchStats::default());
        Ok(BenchWorker {
            job,
            at,
            ring,
            rng,
            slots,
            crcs,
            idle,
            base,
            lane,
            writes,
            interval,
            next_due: now,
            stats,
        })
    }

    /// The ring kind actually used (io_uring may have fallen back to psync).
    pub fn ring_kind(&self) -> RingKind {
        self.ring.kind()
    }

    /// The offset of the next request, its block now in flight; `None` when the lane's
    /// blocks tried are all in flight (wait for a completion).
    fn next_offset(&mut self) -> Option<u64> {
        let sequential = self.job.pattern == Pattern::Sequential;
        let rng = &mut self.rng;
        let block = self.lane.take(sequential, |n| rng.random_range(0..n))?;
        Some(self.base + block * u64::from(self.job.block_size))
    }

    fn next_kind(&mut self) -> Direction {
        match self.job.read_pct {
            100 => Direction::Read,
            0 => Direction::Write,
            pct => {
                if self.rng.random_range(0..100u8) < pct {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
        }
    }

    /// Puts a request in flight on `slot`; `false` when no block was free for it.
    fn issue(&mut self, slot: u32) -> Result<bool, BenchError> {
        let Some(offset) = self.next_offset() else {
            return Ok(false);
        };
        let kind = self.next_kind();
        let cache = &mut self.crcs[slot as usize];
        if kind == Direction::Read {
            cache.invalidate();
        } else if self.job.stamps_writes() {
            self.writes += 1;
            let (seed, seq) = (self.at.file_seed, self.writes);
            stamp::stamp_cached(self.ring.buffer_mut(slot), offset, seed, seq, cache);
        }
        let issued = Instant::now();
        self.slots[slot as usize] = Slot {
            kind,
            offset,
            issued,
        };
        let op = Op {
            kind,
            file: self.at.file,
            offset,
            slot,
            len: self.job.block_size,
            user_data: u64::from(slot),
        };
        self.ring.submit(op)?;
        Ok(true)
    }

    /// Issues idle slots while the rate limit allows; returns the time to wait otherwise.
    fn issue_idle(&mut self, now: Instant) -> Result<Option<Duration>, BenchError> {
        while let Some(&slot) = self.idle.last() {
            if let Some(iv) = self.interval {
                if now < self.next_due {
                    return Ok(Some(self.next_due - now));
                }
                self.next_due = self
                    .next_due
                    .max(now.checked_sub(iv * self.job.depth).unwrap_or(now))
                    + iv;
            }
            self.idle.pop();
            if !self.issue(slot)? {
                self.idle.push(slot);
                break;
            }
        }
        Ok(None)
    }

    fn complete(&mut self, c: RingCompletion, now: Instant, phases: &Phases, cutoff: Instant) {
        let slot = c.user_data as u32;
        let s = self.slots[slot as usize];
        self.idle.push(slot);
        let len = self.job.block_size;
        self.lane.release((s.offset - self.base) / u64::from(len));
        match c.result {
            Ok(n) if n == len => {}
            Ok(n) => {
                return self.stats.record_error(format!(
                    "short {:?} at offset {}: {n} of {len} bytes",
                    s.kind, s.offset
                ))
            }
            Err(errno) if !oserr::classify_errno(errno).is_finding() => {
                if self.stats.refused.is_none() {
                    let path = self.job.targets[self.at.file as usize].path.display();
                    let e = std::io::Error::from_raw_os_error(errno);
                    self.stats.refused = Some(format!(
                        "{path}: a {:?} of {len} bytes at offset {} failed: {e}; that is the \
                         platform refusing the request (or the device or space going away), \
                         not a failed I/O of the device. What to do: {}",
                        s.kind,
                        s.offset,
                        oserr::advice(Some(errno))
                    ));
                }
                return;
            }
            Err(errno) => {
                let e = std::io::Error::from_raw_os_error(errno);
                return self
                    .stats
                    .record_error(format!("{:?} at offset {} failed: {e}", s.kind, s.offset));
            }
        }
        if s.kind == Direction::Read && self.job.verify {
            let buf = &self.ring.buffer(slot)[..len as usize];
            if let Err(m) = stamp::check(buf, s.offset, self.at.file_seed) {
                self.stats.record_mismatch(format!(
                    "{}: {m}",
                    self.job.targets[self.at.file as usize].path.display()
                ));
            }
        }
        if now >= phases.measure_start && now < phases.measure_end && now <= cutoff {
            let lat = now.saturating_duration_since(s.issued).as_nanos() as u64;
            let second = (now - phases.measure_start).as_secs() as usize;
            self.stats.record(s.kind, lat, u64::from(len), second);
        }
    }

    /// Runs until the phases end or `stop` is raised, then waits for what is in flight.
    pub fn run(mut self, phases: &Phases, stop: &AtomicBool) -> Result<BenchStats, BenchError> {
        let mut done = Vec::with_capacity(self.job.depth as usize);
        let mut cutoff = phases.end;
        let mut stopping = false;
        let mut now = Instant::now();
        loop {
            let wait = if stopping {
                None
            } else {
                self.issue_idle(now)?
            };
            if self.ring.in_flight() == 0 {
                if stopping {
                    break;
                }
                std::thread::sleep(wait.unwrap_or_default());
                now = Instant::now();
                continue;
            }
            let min = if wait.is_some() { 0 } else { 1 };
            self.ring.reap(min, &mut done)?;
            now = Instant::now();
            if done.is_empty() {
                std::thread::sleep(wait.unwrap_or_default().min(Duration::from_micros(50)));
            }
            for c in done.drain(..) {
                self.complete(c, now, phases, cutoff);
            }
            if !stopping
                && (now >= phases.end
                    || stop.load(Ordering::Relaxed)
                    || self.stats.errors >= MAX_ERRORS
                    || self.stats.refused.is_some())
            {
                stopping = true;
                cutoff = now;
            }
        }
        Ok(self.stats)
    }
}
