//! The depth gauge's figures: exact areas and maxima from explicit times, phases, and many
//! threads issuing and completing on one gauge at once.

use std::collections::VecDeque;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use super::*;

const S: u64 = BUCKET_NS;

fn at(start: Instant, ns: u64) -> Instant {
    start + Duration::from_nanos(ns)
}

#[test]
fn the_area_is_time_weighted_and_split_across_buckets() {
    let start = Instant::now();
    let g = DepthGauge::with_timeline(start);
    // Four requests in flight from 0.5 s to 1.5 s, then one until 2.5 s.
    for _ in 0..4 {
        g.issue_at(at(start, S / 2));
    }
    for _ in 0..3 {
        g.complete_at(at(start, 3 * S / 2));
    }
    g.complete_at(at(start, 5 * S / 2));
    let end = at(start, 3 * S);
    let r = g.reading_at(end);
    assert_eq!((r.max, r.inflight, r.area), (4, 0, 5 * u128::from(S)));
    let buckets = g.timeline_at(end).expect("a gauge with a timeline");
    let got: Vec<(u64, u128)> = buckets.iter().map(|b| (b.max, b.area)).collect();
    let s = u128::from(S);
    // Buckets 1 and 2 have no issue of their own: their max is what was carried into them.
    assert_eq!(got, [(4, 2 * s), (4, 5 * s / 2), (1, s / 2), (0, 0)]);
}

#[test]
fn a_gauge_without_a_timeline_has_none() {
    let g = DepthGauge::new(Instant::now());
    g.issue();
    g.complete();
    assert_eq!(g.timeline(), None);
    assert_eq!(g.reading().max, 1);
}

#[test]
fn phases_keep_their_own_max_and_area_and_merge_over_cycles() {
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
    let r = g.reading();
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["main", "audit"]);
    assert_eq!((r.max, r.phases[0].max, r.phases[1].max), (2, 2, 0));
    let main = &r.phases[0];
    assert!(main.area > 0 && main.area <= 2 * u128::from(main.ns));
    assert_eq!(r.phases[1].area, 0);
    assert!(r.area >= main.area);
}

#[test]
fn a_phase_counts_what_was_in_flight_when_it_began() {
    let g = DepthGauge::new(Instant::now());
    for _ in 0..3 {
        g.issue();
    }
    g.begin_phase("checkpoint");
    g.end_phase();
    let r = g.reading();
    let p = &r.phases[0];
    assert_eq!((p.max, p.area), (3, 3 * u128::from(p.ns)));
    assert_eq!(r.inflight, 3);
}

const THREADS: u64 = 8;
/// Requests each thread holds at the peak (more than the churn can ever reach).
const HELD: u64 = 16;

/// One thread's share: `churn` requests with 1–4 in flight, then `HELD` held across the
/// barrier. Returns the sum of the durations it measured itself (ns).
fn worker(g: &DepthGauge, start: Instant, i: u64, churn: u64, barrier: &Barrier) -> u128 {
    let ns = |t: Instant| t.duration_since(start).as_nanos();
    let mut area = 0;
    let mut open = VecDeque::new();
    let mut finish = |open: &mut VecDeque<Instant>| {
        let t0 = open.pop_front().expect("a request in flight");
        let t1 = Instant::now();
        g.complete_at(t1);
        area += ns(t1) - ns(t0);
    };
    for j in 0..churn {
        let t = Instant::now();
        g.issue_at(t);
        open.push_back(t);
        if open.len() as u64 > 1 + (i + j) % 4 {
            finish(&mut open);
        }
    }
    while !open.is_empty() {
        finish(&mut open);
    }
    for _ in 0..HELD {
        let t = Instant::now();
        g.issue_at(t);
        open.push_back(t);
    }
    barrier.wait(); // every thread holds HELD: the peak
    barrier.wait(); // the main thread has read it
    while !open.is_empty() {
        finish(&mut open);
    }
    area
}

/// The gauge would fail this if an issue or a completion were lost or counted twice under
/// contention, if the maximum missed the peak, or if the area drifted from the durations.
#[test]
fn many_threads_at_once_are_counted_exactly() {
    let start = Instant::now();
    let g = Arc::new(DepthGauge::with_timeline(start));
    let barrier = Arc::new(Barrier::new(THREADS as usize + 1));
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let (g, barrier) = (Arc::clone(&g), Arc::clone(&barrier));
            thread::spawn(move || worker(&g, start, i, 20_000, &barrier))
        })
        .collect();
    barrier.wait();
    let peak = g.reading();
    barrier.wait();
    let areas: u128 = handles
        .into_iter()
        .map(|h| h.join().expect("worker thread"))
        .sum();
    assert_eq!(peak.inflight, THREADS * HELD);
    let end = Instant::now();
    let r = g.reading_at(end);
    assert_eq!(r.inflight, 0, "every completion counted");
    assert_eq!(r.max, THREADS * HELD, "the peak, and no higher");
    assert_eq!(
        r.area, areas,
        "the area is the sum of the requests' durations"
    );
    let mean = r.area as f64 / r.ns as f64;
    assert!(mean > 0.0 && mean <= r.max as f64, "mean {mean}");
    let buckets = g.timeline_at(end).expect("a timeline");
    assert_eq!(buckets.iter().map(|b| b.area).sum::<u128>(), areas);
    assert_eq!(buckets.iter().map(|b| b.max).max(), Some(r.max));
}
