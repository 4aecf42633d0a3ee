//! The depth the device saw, counted: reads and writes in flight, counted where each request
//! is issued and where it completes (the per-file throttle's permit, which every request takes
//! whatever actor or engine submits it, and the log files' counted storage). `stats` turns a
//! gauge's [`DepthReading`] and [`DepthGauge::timeline`] into the run summary's figures.
//!
//! A [`DepthGauge`] keeps the most requests in flight at once and the time-weighted area (the
//! integral of the in-flight count over time, so 4 requests for half a second is 2 request-
//! seconds): for the whole run, per phase of the cycle (merged over the cycles), and, for the
//! run-wide gauge, per one-second bucket of the timeline.
//!
//! # No lock on the hot path
//!
//! Issue and completion are called by every thread for every request, and the run-wide gauge
//! is shared by all of them, so they take no lock. The area is not advanced at each change
//! (which needs the last change's time, hence a lock); it is kept exactly through
//! `∫₀ᵀ n dt = Σ (completion time) − Σ (issue time) + T × (requests still in flight)`, which
//! holds whatever order the events land in. The count and the signed sum of times share one
//! 128-bit word (`Tally`: count in the low 32 bits, the sum modulo 2⁹⁶ ns above it), changed
//! by one atomic add, so any reader, even mid-run, sees a count and a sum that agree. The
//! maximum is `fetch_max` of the count each issue returns, so it is exact: the highest count
//! the word ever held. Each timeline bucket has a tally of the events stamped in it; summed up to
//! a bucket, they give the count and the area at its start, so bucket areas and maxima are exact
//! too. The clock is read once per event (one reading serves the file's and the run's gauge).
//! The only wait left is the first event of each 4,096-second segment of buckets, which
//! allocates it through a `OnceLock` (once per 68 minutes); phases and readings take a mutex,
//! but only the scheduler and the summary call them.
//! The 128-bit add is `portable_atomic::AtomicU128`: `cmpxchg16b` on x86_64, found at run
//! time (a CPU without it would get that crate's locked fallback).
//!
//! Precision: the mean is exact to the monotonic clock's nanosecond, as the locked gauge was,
//! not sampled (sampling would miss bursts shorter than its period, such as a checkpoint's).
//! What a gauge cannot order is an event that races a phase boundary or a reading by less than
//! the time between its clock reading and its add (well under a microsecond): it counts on
//! either side. Limits: 2³¹ requests in flight at once, and one-second buckets for 48 days
//! (later events land in the last bucket; the run totals stay exact).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

use crate::sync::Mutex;
use portable_atomic::AtomicU128;

/// Width of a timeline bucket, in nanoseconds (one second).
pub const BUCKET_NS: u64 = 1_000_000_000;
/// Buckets per lazily allocated segment (4,096 s, 128 KiB).
const SEGMENT: usize = 4096;
/// Segments a timeline can have (1,024 × 4,096 s: 48 days).
const SEGMENTS: usize = 1024;
/// The 96 bits of the time sum.
const SUM_MASK: u128 = (1 << 96) - 1;

/// A count and the sum of signed event times, in one atomically added word.
#[derive(Debug, Default)]
struct Tally(AtomicU128);

/// One value of a [`Tally`], or the wrapping sum of several (the encoding is linear).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Word(u128);

impl Tally {
    /// A request issued at `t` ns: count + 1, sum − t. Returns the word before.
    fn issue(&self, t: u64) -> Word {
        Word(
            self.0
                .fetch_add(1u128.wrapping_sub(u128::from(t) << 32), Relaxed),
        )
    }

    /// A request completed at `t` ns: count − 1, sum + t.
    fn complete(&self, t: u64) {
        self.0
            .fetch_add((u128::from(t) << 32).wrapping_sub(1), Relaxed);
    }

    fn load(&self) -> Word {
        Word(self.0.load(Relaxed))
    }
}

impl Word {
    /// Issues minus completions (negative only in one bucket's tally).
    fn count(self) -> i64 {
        i64::from(self.0 as u32 as i32)
    }

    fn plus(self, o: Word) -> Word {
        Word(self.0.wrapping_add(o.0))
    }

    /// The area up to `t` ns of the events this word (a whole gauge, or the buckets before
    /// `t`) holds: Σ completion times − Σ issue times + t × still in flight.
    fn area_at(self, t: u64) -> u128 {
        let count = self.count() as i128 as u128;
        let sum = self.0.wrapping_sub(count) >> 32;
        let area = sum.wrapping_add(u128::from(t).wrapping_mul(count)) & SUM_MASK;
        // A negative area (modulo 2⁹⁶) only from an event stamped after `t`: none.
        if area >> 95 == 0 {
            area
        } else {
            0
        }
    }
}

/// The bucket of time `t` ns (events after 48 days land in the last one).
fn bucket_index(t: u64) -> usize {
    let k = usize::try_from(t / BUCKET_NS).unwrap_or(usize::MAX);
    k.min(SEGMENT * SEGMENTS - 1)
}

/// Raises `cell` to `n`; a load first, so the common case writes nothing to a shared line.
fn raise(cell: &AtomicU64, n: u64) {
    if n > cell.load(Relaxed) {
        cell.fetch_max(n, Relaxed);
    }
}

#[derive(Debug, Default)]
struct Bucket {
    tally: Tally,
    /// Most in flight after an issue stamped in this bucket.
    max: AtomicU64,
}

/// One-second buckets since the gauge's start, allocated a segment at a time.
#[derive(Debug)]
struct Buckets(Box<[OnceLock<Box<[Bucket]>>]>);

impl Buckets {
    fn new() -> Buckets {
        Buckets((0..SEGMENTS).map(|_| OnceLock::new()).collect())
    }

    /// The bucket of time `t` ns (allocating its segment the first time: once per 68 min).
    fn at(&self, t: u64) -> &Bucket {
        let k = bucket_index(t);
        let seg =
            self.0[k / SEGMENT].get_or_init(|| (0..SEGMENT).map(|_| Bucket::default()).collect());
        &seg[k % SEGMENT]
    }

    /// Tally and max of every bucket up to the one of time `t` ns.
    fn read_to(&self, t: u64) -> Vec<(Word, u64)> {
        (0..=bucket_index(t)).map(|k| self.read(k)).collect()
    }

    /// Tally and max of bucket `k`, zero if its segment was never allocated.
    fn read(&self, k: usize) -> (Word, u64) {
        self.0[k / SEGMENT].get().map_or((Word::default(), 0), |s| {
            (
                s[k % SEGMENT].tally.load(),
                s[k % SEGMENT].max.load(Relaxed),
            )
        })
    }
}

/// The depth of one phase of the cycle, summed over the cycles that ran it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseReading {
    /// The scheduler's name of the phase.
    pub name: String,
    /// Nanoseconds spent in it.
    pub ns: u64,
    /// Most requests in flight at once during it.
    pub max: u64,
    /// ∫ in-flight dt over it, request-nanoseconds.
    pub area: u128,
}

/// A gauge's figures at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepthReading {
    /// Nanoseconds since the gauge's start.
    pub ns: u64,
    /// Requests in flight now.
    pub inflight: u64,
    /// Most requests in flight at once.
    pub max: u64,
    /// ∫ in-flight dt since the start, request-nanoseconds.
    pub area: u128,
    /// The closed phases, in the order they first ran.
    pub phases: Vec<PhaseReading>,
}

/// One timeline bucket's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BucketReading {
    /// Most requests in flight at once during the bucket.
    pub max: u64,
    /// ∫ in-flight dt over the bucket, request-nanoseconds.
    pub area: u128,
}

#[derive(Debug, Default)]
struct Phases {
    closed: Vec<PhaseReading>,
    /// The open phase: name, start (ns) and the area at its start.
    open: Option<(String, u64, u128)>,
}

/// Requests in flight to one file (or to all of them), over time.
#[derive(Debug)]
pub struct DepthGauge {
    start: Instant,
    tally: Tally,
    max: AtomicU64,
    /// Most in flight since the open phase began.
    phase_max: AtomicU64,
    buckets: Option<Buckets>,
    phases: Mutex<Phases>,
}

impl DepthGauge {
    /// A gauge whose time starts at `start` (the run's start), without a timeline.
    pub fn new(start: Instant) -> DepthGauge {
        DepthGauge {
            start,
            tally: Tally::default(),
            max: AtomicU64::new(0),
            phase_max: AtomicU64::new(0),
            buckets: None,
            phases: Mutex::new(Phases::default()),
        }
    }

    /// When the gauge's time starts (the run's start).
    pub fn started(&self) -> Instant {
        self.start
    }

    /// A gauge that also keeps one-second buckets for the run's timeline.
    pub fn with_timeline(start: Instant) -> DepthGauge {
        DepthGauge {
            buckets: Some(Buckets::new()),
            ..DepthGauge::new(start)
        }
    }

    fn ns(&self, at: Instant) -> u64 {
        let d = at.saturating_duration_since(self.start);
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }

    /// One request was issued now; returns how many are in flight.
    pub fn issue(&self) -> u64 {
        self.issue_at(crate::clock::now())
    }

    /// One request was issued at `at` (a clock reading shared by several gauges).
    pub fn issue_at(&self, at: Instant) -> u64 {
        let t = self.ns(at);
        let n = (self.tally.issue(t).count() + 1).max(0) as u64;
        raise(&self.max, n);
        raise(&self.phase_max, n);
        if let Some(b) = &self.buckets {
            let b = b.at(t);
            b.tally.issue(t);
            raise(&b.max, n);
        }
        n
    }

    /// One request completed (or failed) now.
    pub fn complete(&self) {
        self.complete_at(crate::clock::now());
    }

    /// One request completed at `at`.
    pub fn complete_at(&self, at: Instant) {
        let t = self.ns(at);
        self.tally.complete(t);
        if let Some(b) = &self.buckets {
            b.at(t).tally.complete(t);
        }
    }

    /// A phase of the cycle begins (closing the one still open).
    pub fn begin_phase(&self, name: &str) {
        let mut ph = self.phases.lock();
        let (now, area) = self.close(&mut ph);
        ph.open = Some((name.to_string(), now, area));
    }

    /// The open phase ends.
    pub fn end_phase(&self) {
        let mut ph = self.phases.lock();
        self.close(&mut ph);
    }

    /// The tally, then the time: every event the tally holds was stamped before that time.
    fn now(&self) -> (Word, u64) {
        let w = self.tally.load();
        (w, self.ns(crate::clock::now()))
    }

    /// Closes the open phase now, merging it into its name's entry; the next phase's maximum
    /// starts from the count in flight now. Returns the time and the area up to it.
    fn close(&self, ph: &mut Phases) -> (u64, u128) {
        let (w, now) = self.now();
        let area = w.area_at(now);
        let max = self.phase_max.swap(w.count().max(0) as u64, Relaxed);
        let Some((name, start, start_area)) = ph.open.take() else {
            return (now, area);
        };
        let at = match ph.closed.iter().position(|p| p.name == name) {
            Some(i) => i,
            None => {
                ph.closed.push(PhaseReading {
                    name,
                    ..PhaseReading::default()
                });
                ph.closed.len() - 1
            }
        };
        let p = &mut ph.closed[at];
        p.ns += now.saturating_sub(start);
        p.area += area.saturating_sub(start_area);
        p.max = p.max.max(max);
        (now, area)
    }

    /// The figures so far: overall (up to now) and per closed phase.
    pub fn reading(&self) -> DepthReading {
        let (w, now) = self.now();
        self.reading_of(w, now)
    }

    /// The figures up to `at`, which is not before any event counted so far.
    pub fn reading_at(&self, at: Instant) -> DepthReading {
        self.reading_of(self.tally.load(), self.ns(at))
    }

    fn reading_of(&self, w: Word, now: u64) -> DepthReading {
        DepthReading {
            ns: now,
            inflight: w.count().max(0) as u64,
            max: self.max.load(Relaxed),
            area: w.area_at(now),
            phases: self.phases.lock().closed.clone(),
        }
    }

    /// The one-second buckets from the start up to now (the last one partial), or `None` for
    /// a gauge made without a timeline.
    pub fn timeline(&self) -> Option<Vec<BucketReading>> {
        let buckets = self.buckets.as_ref()?;
        let read = buckets.read_to(self.ns(crate::clock::now()));
        // The time after the tallies, so no event they hold is later than it.
        Some(bucket_readings(read, self.ns(crate::clock::now())))
    }

    /// The buckets up to `at`, which is not before any event counted so far.
    pub fn timeline_at(&self, at: Instant) -> Option<Vec<BucketReading>> {
        let now = self.ns(at);
        Some(bucket_readings(self.buckets.as_ref()?.read_to(now), now))
    }
}

/// Each bucket's area and maximum from the tallies of the buckets up to `now`.
fn bucket_readings(read: Vec<(Word, u64)>, now: u64) -> Vec<BucketReading> {
    let mut before = Word::default();
    let mut out = Vec::with_capacity(read.len());
    for (k, (w, max)) in read.into_iter().enumerate() {
        let from = k as u64 * BUCKET_NS;
        let to = (from + BUCKET_NS).min(now).max(from);
        let after = before.plus(w);
        let area = after.area_at(to).saturating_sub(before.area_at(from));
        // Requests still in flight from earlier buckets count here even if none was issued.
        let carried = before.count().max(0) as u64;
        out.push(BucketReading {
            max: max.max(carried),
            area,
        });
        before = after;
    }
    out
}

#[cfg(test)]
mod tests;
