//! The depth the device saw, as the run summary reports it: the most requests in flight at
//! once and the time-weighted mean (∫ in-flight dt ÷ time, so 4 requests in flight for half a
//! second and none for the other half is a mean of 2 over that second), for the whole run, per
//! phase of the cycle (merged over the cycles), and per point of the timeline.
//!
//! The counting is `control::depth`'s: its gauges sit at the throttle's permit, below this
//! layer, and count without locks; this module only turns their readings into the summary's
//! figures ([`DepthSummary::from_reading`], [`timeline_depth`]), as pure functions.

use serde::{Deserialize, Serialize};

use super::timeline::TimelinePoint;
use crate::sim::control::depth::{BucketReading, DepthGauge, DepthReading, BUCKET_NS};

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

impl DepthSummary {
    /// The depth `gauge` counted so far: overall (over the time since its start) and per
    /// closed phase.
    pub fn of(gauge: &DepthGauge) -> DepthSummary {
        DepthSummary::from_reading(&gauge.reading())
    }

    /// The summary of one reading of a gauge.
    pub fn from_reading(r: &DepthReading) -> DepthSummary {
        let phases = r
            .phases
            .iter()
            .map(|p| PhaseDepth {
                phase: p.name.clone(),
                seconds: p.ns as f64 / BUCKET_NS as f64,
                max: p.max,
                mean: mean(p.area, p.ns),
            })
            .collect();
        DepthSummary {
            max: r.max,
            mean: mean(r.area, r.ns),
            phases,
        }
    }
}

/// Sets `inflight_max` and `inflight_mean` of every timeline point from `gauge`'s one-second
/// buckets (nothing for a gauge without a timeline).
pub fn fill_depth_timeline(gauge: &DepthGauge, points: &mut [TimelinePoint]) {
    if let Some(buckets) = gauge.timeline() {
        timeline_depth(&buckets, points);
    }
}

/// Sets each point's depth from the one-second buckets it spans (a point is whole seconds).
pub fn timeline_depth(buckets: &[BucketReading], points: &mut [TimelinePoint]) {
    for p in points.iter_mut() {
        let from = usize::try_from(p.t_s).unwrap_or(usize::MAX);
        let to = usize::try_from(p.t_s + p.width_s).unwrap_or(usize::MAX);
        let span = buckets.get(from.min(buckets.len())..to.min(buckets.len()));
        let span = span.unwrap_or_default();
        p.inflight_max = span.iter().map(|b| b.max).max().unwrap_or(0);
        let area = span.iter().map(|b| b.area).sum();
        p.inflight_mean = mean(area, p.width_s * BUCKET_NS);
    }
}

fn mean(area: u128, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        area as f64 / ns as f64
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    const S: u64 = BUCKET_NS;

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
    fn timeline_points_take_the_mean_and_max_of_the_seconds_they_span() {
        let start = Instant::now();
        let g = DepthGauge::with_timeline(start);
        let at = |ns: u64| start + Duration::from_nanos(ns);
        // Four requests in flight from 0.5 s to 1.5 s, then one until 2 s.
        for _ in 0..4 {
            g.issue_at(at(S / 2));
        }
        for _ in 0..3 {
            g.complete_at(at(3 * S / 2));
        }
        g.complete_at(at(2 * S - 1));
        let buckets = g.timeline_at(at(2 * S)).expect("a timeline");
        let mut pts = vec![point(0, 1), point(1, 1), point(0, 2), point(4, 2)];
        timeline_depth(&buckets, &mut pts);
        assert_eq!((pts[0].inflight_max, pts[0].inflight_mean), (4, 2.0));
        assert_eq!(pts[1].inflight_max, 4);
        assert!((pts[1].inflight_mean - 2.5).abs() < 1e-8);
        // A 2 s point over the same seconds: (2 + 2.5) / 2.
        assert_eq!(pts[2].inflight_max, 4);
        assert!((pts[2].inflight_mean - 2.25).abs() < 1e-8);
        // A point past the gauge's time: nothing in flight.
        assert_eq!((pts[3].inflight_max, pts[3].inflight_mean), (0, 0.0));
    }

    #[test]
    fn the_summary_keeps_the_figures_of_the_reading() {
        let g = DepthGauge::new(Instant::now());
        g.begin_phase("main");
        g.issue();
        g.issue();
        g.complete();
        g.complete();
        g.end_phase();
        g.begin_phase("audit");
        g.end_phase();
        let s = DepthSummary::of(&g);
        let names: Vec<&str> = s.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["main", "audit"]);
        assert_eq!((s.max, s.phases[0].max, s.phases[1].max), (2, 2, 0));
        assert!(s.phases[0].mean > 0.0 && s.phases[0].mean <= 2.0);
        assert!(s.phases[0].seconds > 0.0);
        assert_eq!(s.phases[1].mean, 0.0);
        assert!(s.mean > 0.0 && s.mean <= s.max as f64);
    }
}
