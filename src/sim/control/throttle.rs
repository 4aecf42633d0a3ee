//! Outstanding-I/O limits: the process-wide MaxOutstandingIO cap and SQLIOSim's per-file
//! throttle driven by a damped running average of I/O duration.
//!
//! Per file: `avg = (avg × (N − 1) + duration) / N`, starting at TargetIODuration. While the
//! average is above the target, the number of I/Os a file may have outstanding is lowered by an
//! eighth (at least one) per completion; below it, raised again one at a time. A poster that
//! has to wait counts as one "time IO throttled". Bursts (initial update, checkpoints) skip the per-file throttle but
//! never the process-wide cap.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sync::{Condvar, Mutex};

use super::depth::DepthGauge;

/// Damping factor N of the running average.
const DAMPING: u64 = 32;

/// A counting gate: at most `max` holders at once (0: unlimited).
#[derive(Debug)]
pub struct Gate {
    max: usize,
    held: Mutex<usize>,
    cv: Condvar,
}

impl Gate {
    /// A gate for `max` holders (0: unlimited).
    pub const fn new(max: usize) -> Gate {
        Gate {
            max,
            held: Mutex::new(0),
            cv: Condvar::new(),
        }
    }

    fn acquire(&self) {
        if self.max == 0 {
            return;
        }
        let mut held = self.held.lock();
        while *held >= self.max {
            crate::clock::wait_for(&self.cv, &mut held, Duration::from_millis(50));
        }
        *held += 1;
    }

    fn try_acquire(&self) -> bool {
        if self.max == 0 {
            return true;
        }
        let mut held = self.held.lock();
        if *held >= self.max {
            return false;
        }
        *held += 1;
        true
    }

    fn release(&self) {
        if self.max == 0 {
            return;
        }
        *self.held.lock() -= 1;
        self.cv.notify_one();
    }
}

/// Why [`Throttle::try_enter`] gave no permit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The file's running-average latency has lowered its allowance below what is outstanding.
    Throttled,
    /// The process-wide MaxOutstandingIO gate is full.
    Gate,
}

/// The per-file throttle.
#[derive(Debug)]
pub struct Throttle {
    target_us: u64,
    ceiling: usize,
    avg_us: AtomicU64,
    allowed: AtomicUsize,
    outstanding: AtomicUsize,
    max_outstanding: AtomicUsize,
    throttled: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
    /// Requests in flight to the file over time (the depth the device saw).
    depth: Arc<DepthGauge>,
    /// The same for every file together, when the run keeps one.
    run_depth: Option<Arc<DepthGauge>>,
}

/// Held while one I/O is outstanding; call [`Throttle::complete`] when it is done.
#[derive(Debug)]
pub struct Permit<'a> {
    throttle: &'a Throttle,
    gate: &'a Gate,
    /// Only [`Throttle::issue`] makes permits, so every request is counted in flight.
    _issued: Issued,
}

/// Proof that a permit's request was counted in the depth gauges.
#[derive(Debug)]
struct Issued;

impl Throttle {
    /// A throttle aiming at `target`, allowing up to `ceiling` outstanding I/Os.
    pub fn new(target: Duration, ceiling: usize) -> Throttle {
        let target_us = target.as_micros().max(1) as u64;
        let ceiling = ceiling.max(1);
        Throttle {
            target_us,
            ceiling,
            avg_us: AtomicU64::new(target_us),
            allowed: AtomicUsize::new(ceiling),
            outstanding: AtomicUsize::new(0),
            max_outstanding: AtomicUsize::new(0),
            throttled: AtomicU64::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
            depth: Arc::new(DepthGauge::new(crate::clock::now())),
            run_depth: None,
        }
    }

    /// Counts the requests in flight in `file` (this file's gauge) and in `run` (every file's).
    pub fn with_depth(mut self, file: Arc<DepthGauge>, run: Arc<DepthGauge>) -> Throttle {
        self.depth = file;
        self.run_depth = Some(run);
        self
    }

    /// Requests in flight to the file over time.
    pub fn depth(&self) -> &DepthGauge {
        &self.depth
    }

    /// Waits for room to post one I/O (unless `burst`), then for the process-wide gate.
    pub fn enter<'a>(&'a self, gate: &'a Gate, burst: bool) -> Permit<'a> {
        if !burst
            && self.outstanding.load(Ordering::Acquire) >= self.allowed.load(Ordering::Acquire)
        {
            self.throttled.fetch_add(1, Ordering::Relaxed);
            let mut g = self.lock.lock();
            while self.outstanding.load(Ordering::Acquire) >= self.allowed.load(Ordering::Acquire) {
                crate::clock::wait_for(&self.cv, &mut g, Duration::from_millis(10));
            }
        }
        gate.acquire();
        self.issue(gate)
    }

    /// The permit of one request issued now (the gate already held): counts it outstanding and
    /// in flight in the depth gauges until the permit is dropped. Every permit comes from here.
    fn issue<'a>(&'a self, gate: &'a Gate) -> Permit<'a> {
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        // One clock reading for both gauges. The gauge's count is one atomic word, so the
        // count it returns is exact and its maximum too; "IO request blocks" is it.
        let at = crate::clock::now();
        let now = self.depth.issue_at(at);
        let now = usize::try_from(now).unwrap_or(usize::MAX);
        self.max_outstanding.fetch_max(now, Ordering::Relaxed);
        if let Some(run) = &self.run_depth {
            run.issue_at(at);
        }
        Permit {
            throttle: self,
            gate,
            _issued: Issued,
        }
    }

    /// A permit for one more I/O if the per-file allowance (unless `burst`) and the gate have
    /// room, without waiting; otherwise why not. The asynchronous actors post this way: they
    /// hold permits of their own, so instead of waiting they collect their completions.
    pub fn try_enter<'a>(&'a self, gate: &'a Gate, burst: bool) -> Result<Permit<'a>, Refusal> {
        if !burst
            && self.outstanding.load(Ordering::Acquire) >= self.allowed.load(Ordering::Acquire)
        {
            return Err(Refusal::Throttled);
        }
        if !gate.try_acquire() {
            return Err(Refusal::Gate);
        }
        Ok(self.issue(gate))
    }

    /// Counts one poster that had to wait for the per-file allowance.
    pub fn count_throttled(&self) {
        self.throttled.fetch_add(1, Ordering::Relaxed);
    }

    /// I/Os the per-file throttle allows outstanding now.
    pub fn allowed(&self) -> usize {
        self.allowed.load(Ordering::Relaxed)
    }

    /// Records the duration of a completed I/O and releases its permit.
    pub fn complete(&self, permit: Permit<'_>, duration: Duration) {
        let d = duration.as_micros() as u64;
        let old = self.avg_us.load(Ordering::Relaxed);
        let avg = (old * (DAMPING - 1) + d) / DAMPING;
        self.avg_us.store(avg, Ordering::Relaxed);
        let allowed = self.allowed.load(Ordering::Relaxed);
        if avg > self.target_us {
            // An eighth of the allowance per slow completion (at least one): from thousands
            // allowed (MaxOutstandingIO=0) the depth falls within a hundred or so completions,
            // not thousands; it climbs back one step per fast completion.
            let step = (allowed / 8).max(1);
            self.allowed
                .store(allowed.saturating_sub(step).max(1), Ordering::Relaxed);
        } else if allowed < self.ceiling {
            self.allowed.store(allowed + 1, Ordering::Relaxed);
        }
        drop(permit);
    }

    /// Running average I/O duration in ms.
    pub fn running_average_ms(&self) -> u64 {
        self.avg_us.load(Ordering::Relaxed) / 1000
    }

    /// How many times a poster had to wait.
    pub fn throttled(&self) -> u64 {
        self.throttled.load(Ordering::Relaxed)
    }

    /// Most I/Os outstanding at once ("IO request blocks").
    pub fn max_outstanding(&self) -> usize {
        self.max_outstanding.load(Ordering::Relaxed)
    }

    /// Target I/O duration in ms.
    pub fn target_ms(&self) -> u64 {
        self.target_us / 1000
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let at = crate::clock::now();
        self.throttle.depth.complete_at(at);
        if let Some(run) = &self.throttle.run_depth {
            run.complete_at(at);
        }
        self.throttle.outstanding.fetch_sub(1, Ordering::AcqRel);
        self.gate.release();
        self.throttle.cv.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_ios_lower_the_allowance_and_fast_ones_raise_it() {
        let gate = Gate::new(0);
        let t = Throttle::new(Duration::from_millis(1), 4);
        for _ in 0..200 {
            let p = t.enter(&gate, false);
            t.complete(p, Duration::from_millis(50));
        }
        assert!(t.running_average_ms() > 1);
        assert_eq!(t.allowed.load(Ordering::Relaxed), 1);
        let p1 = t.enter(&gate, false);
        assert_eq!(t.max_outstanding(), 1);
        // A burst ignores the per-file allowance.
        let p2 = t.enter(&gate, true);
        assert_eq!(t.max_outstanding(), 2);
        t.complete(p2, Duration::ZERO);
        t.complete(p1, Duration::ZERO);
        for _ in 0..400 {
            let p = t.enter(&gate, false);
            t.complete(p, Duration::ZERO);
        }
        assert_eq!(t.allowed.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_waiting_poster_is_counted_as_throttled() {
        let gate = Gate::new(0);
        let t = std::sync::Arc::new(Throttle::new(Duration::from_millis(1), 1));
        let p = t.enter(&gate, false);
        let t2 = std::sync::Arc::clone(&t);
        let h = std::thread::spawn(move || {
            let g = Gate::new(0);
            let p = t2.enter(&g, false);
            t2.complete(p, Duration::ZERO);
        });
        while t.throttled() == 0 {
            std::thread::yield_now();
        }
        t.complete(p, Duration::ZERO);
        h.join().expect("poster thread");
        assert_eq!(t.throttled(), 1);
    }
}
