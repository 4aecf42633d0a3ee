//! The depth the device saw: reads and writes in flight, counted where each request is issued
//! and where it completes (the per-file throttle's permit, which every request takes, whatever
//! actor or engine submits it).
//!
//! A [`DepthGauge`] keeps the most requests in flight at once and the time-weighted mean: the
//! integral of the in-flight count over time divided by the time (so 4 requests in flight
//! for half a second and none for the other half is a mean of 2 over that second). It keeps
//! both for the whole run, per phase of the cycle (merged over the cycles), and per time bucket
//! of the timeline (1 s, doubled like the timeline's on long runs).

use std::collections::BTreeMap;
use std::time::Instant;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::timeline::{TimelinePoint, MAX_BUCKETS};

const NS: u64 = 1_000_000_000;

/// The depth over the run and per phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DepthSummary {
    /// Most requests in flight at once.
    pub max: u64,
    /// Time-weighted mean of the requests in flight (∫ in-flight dt ÷ time).
    pub mean: f64,
    /// Per phase (`initial update`, `initial checkpoint`, `main`, `final checkpoint`,
    /// `audit`), in the order they first ran; several cycles merge into one entry per phase.
    pub phases: Vec<PhaseDepth>,
}

/// The depth during one phase of the cycle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseDepth {
    /// The scheduler's name of the phase.
    pub phase: String,
    /// Seconds spent in it (all cycles).
    pub seconds: f64,
    /// Most requests in flight at once during it.
    pub max: u64,
    /// Time-weighted mean of the requests in flight during it.
    pub mean: f64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    max: u64,
    /// ∫ in-flight dt over the bucket, request-nanoseconds.
    area: u128,
}

#[derive(Debug, Default)]
struct Phase {
    ns: u64,
    max: u64,
    area: u128,
}

#[derive(Debug)]
struct State {
    inflight: u64,
    last_ns: u64,
    max: u64,
    area: u128,
    width_s: u64,
    buckets: Vec<Bucket>,
    /// Closed phases by name, and the order they first ran in.
    phases: BTreeMap<String, Phase>,
    order: Vec<String>,
    /// The open phase: name, start, area and max since its start.
    open: Option<(String, u64, u128, u64)>,
}

/// Requests in flight to one file (or to all of them), over time.
#[derive(Debug)]
pub struct DepthGauge {
    start: Instant,
    state: Mutex<State>,
}

impl DepthGauge {
    /// A gauge whose timeline starts at `start` (the run's start).
    pub fn new(start: Instant) -> DepthGauge {
        DepthGauge {
            start,
            state: Mutex::new(State {
                inflight: 0,
                last_ns: 0,
                max: 0,
                area: 0,
                width_s: 1,
                buckets: Vec::new(),
                phases: BTreeMap::new(),
                order: Vec::new(),
                open: None,
            }),
        }
    }

    fn now_ns(&self) -> u64 {
        let d = Instant::now().saturating_duration_since(self.start);
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }

    /// One request was issued; returns how many are in flight now.
    pub fn issue(&self) -> u64 {
        let now = self.now_ns();
        let mut st = self.state.lock();
        st.advance(now);
        st.inflight += 1;
        let n = st.inflight;
        st.max = st.max.max(n);
        let i = st.bucket_index(now);
        st.buckets[i].max = st.buckets[i].max.max(n);
        if let Some(open) = &mut st.open {
            open.3 = open.3.max(n);
        }
        n
    }

    /// One request completed (or failed).
    pub fn complete(&self) {
        let now = self.now_ns();
        let mut st = self.state.lock();
        st.advance(now);
        st.inflight = st.inflight.saturating_sub(1);
    }

    /// A phase of the cycle begins (closing the one still open).
    pub fn begin_phase(&self, name: &str) {
        let now = self.now_ns();
        let mut st = self.state.lock();
        st.advance(now);
        st.close(now);
        let (area, inflight) = (st.area, st.inflight);
        st.open = Some((name.to_string(), now, area, inflight));
    }

    /// The open phase ends.
    pub fn end_phase(&self) {
        let now = self.now_ns();
        let mut st = self.state.lock();
        st.advance(now);
        st.close(now);
    }

    /// The depth so far: overall (over the time since the start) and per closed phase.
    pub fn summary(&self) -> DepthSummary {
        let now = self.now_ns();
        let mut st = self.state.lock();
        st.advance(now);
        let phases = st
            .order
            .iter()
            .filter_map(|name| {
                let p = st.phases.get(name)?;
                Some(PhaseDepth {
                    phase: name.clone(),
                    seconds: p.ns as f64 / NS as f64,
                    max: p.max,
                    mean: mean(p.area, p.ns),
                })
            })
            .collect();
        DepthSummary {
            max: st.max,
            mean: mean(st.area, now),
            phases,
        }
    }

    /// Sets `inflight_max` and `inflight_mean` of every timeline point from this gauge.
    pub fn fill_timeline(&self, points: &mut [TimelinePoint]) {
        let now = self.now_ns();
        let mut st = self.state.lock();
        st.advance(now);
        let gw = st.width_s * NS;
        for p in points.iter_mut() {
            let (from, to) = (p.t_s * NS, (p.t_s + p.width_s) * NS);
            let mut area = 0u128;
            let mut max = 0;
            let first = (from / gw) as usize;
            for (i, b) in st.buckets.iter().enumerate().skip(first) {
                let (b_from, b_to) = (i as u64 * gw, (i as u64 + 1) * gw);
                if b_from >= to {
                    break;
                }
                let overlap = b_to.min(to) - b_from.max(from);
                area += b.area * overlap as u128 / gw as u128;
                max = max.max(b.max);
            }
            p.inflight_max = max;
            p.inflight_mean = mean(area, to - from);
        }
    }
}

fn mean(area: u128, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        area as f64 / ns as f64
    }
}

impl State {
    /// Adds the in-flight count × the time since the last change, up to `now`.
    fn advance(&mut self, now: u64) {
        let now = now.max(self.last_ns);
        if self.inflight > 0 {
            let n = self.inflight as u128;
            self.area += n * u128::from(now - self.last_ns);
            let mut t = self.last_ns;
            while t < now {
                let i = self.bucket_index(t);
                let w = self.width_s * NS;
                let seg = ((t / w + 1) * w).min(now);
                let b = &mut self.buckets[i];
                b.max = b.max.max(self.inflight);
                b.area += n * u128::from(seg - t);
                t = seg;
            }
        }
        self.last_ns = now;
    }

    fn close(&mut self, now: u64) {
        let Some((name, start, area, max)) = self.open.take() else {
            return;
        };
        if !self.phases.contains_key(&name) {
            self.order.push(name.clone());
        }
        let p = self.phases.entry(name).or_default();
        p.ns += now.saturating_sub(start);
        p.area += self.area - area;
        p.max = p.max.max(max);
    }

    /// The bucket holding `ns`, created (and the buckets coarsened) as needed.
    fn bucket_index(&mut self, ns: u64) -> usize {
        while ns / NS / self.width_s >= MAX_BUCKETS as u64 {
            self.coarsen();
        }
        let i = (ns / NS / self.width_s) as usize;
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, Bucket::default());
        }
        i
    }

    fn coarsen(&mut self) {
        let merged = self
            .buckets
            .chunks(2)
            .map(|c| Bucket {
                max: c.iter().map(|b| b.max).max().unwrap_or(0),
                area: c.iter().map(|b| b.area).sum(),
            })
            .collect();
        self.buckets = merged;
        self.width_s *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gauge driven by explicit times (ns since the start), bypassing the clock.
    fn at(g: &DepthGauge, now: u64, issue: bool) {
        let mut st = g.state.lock();
        st.advance(now);
        if issue {
            st.inflight += 1;
            let n = st.inflight;
            st.max = st.max.max(n);
            let i = st.bucket_index(now);
            st.buckets[i].max = st.buckets[i].max.max(n);
        } else {
            st.inflight -= 1;
        }
    }

    fn point(t_s: u64, width_s: u64) -> TimelinePoint {
        TimelinePoint {
            t_s,
            width_s,
            iops: 0.0,
            read_mb_s: 0.0,
            write_mb_s: 0.0,
            mean_latency_us: 0.0,
            errors: 0,
            inflight_max: 0,
            inflight_mean: 0.0,
        }
    }

    #[test]
    fn mean_is_time_weighted_and_split_across_buckets() {
        let g = DepthGauge::new(Instant::now());
        // Four requests in flight from 0.5 s to 1.5 s, then one until 2 s.
        for _ in 0..4 {
            at(&g, NS / 2, true);
        }
        for _ in 0..3 {
            at(&g, 3 * NS / 2, false);
        }
        at(&g, 2 * NS, false);
        let mut pts = vec![point(0, 1), point(1, 1), point(0, 2)];
        g.fill_timeline(&mut pts);
        assert_eq!((pts[0].inflight_max, pts[0].inflight_mean), (4, 2.0));
        assert_eq!((pts[1].inflight_max, pts[1].inflight_mean), (4, 2.5));
        // A 2 s point over the same buckets: (2 + 2.5) / 2.
        assert_eq!((pts[2].inflight_max, pts[2].inflight_mean), (4, 2.25));
        let st = g.state.lock();
        assert_eq!((st.max, st.area), (4, 4_500_000_000));
    }

    #[test]
    fn phases_keep_their_own_max_and_mean_and_merge_over_cycles() {
        let g = DepthGauge::new(Instant::now());
        g.begin_phase("main");
        assert_eq!(g.issue(), 1);
        assert_eq!(g.issue(), 2);
        g.complete();
        g.complete();
        g.end_phase();
        g.begin_phase("audit");
        g.end_phase();
        g.begin_phase("main");
        g.issue();
        g.complete();
        g.end_phase();
        let s = g.summary();
        let names: Vec<&str> = s.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["main", "audit"]);
        assert_eq!((s.max, s.phases[0].max, s.phases[1].max), (2, 2, 0));
        assert!(s.phases[0].mean > 0.0 && s.phases[0].mean <= 2.0);
        assert_eq!(s.phases[1].mean, 0.0);
        assert!(s.mean <= s.max as f64);
    }

    #[test]
    fn coarsening_keeps_the_area_and_the_max() {
        let g = DepthGauge::new(Instant::now());
        at(&g, 0, true);
        at(&g, (MAX_BUCKETS as u64 + 10) * NS, false);
        let st = g.state.lock();
        assert_eq!(st.width_s, 2);
        let total: u128 = st.buckets.iter().map(|b| b.area).sum();
        assert_eq!(total, st.area);
        assert!(st.buckets.iter().all(|b| b.max == 1));
    }
}
