//! The model on the stepped clock (`sqliosim::clock`, `sim::control::stepping`): a run on the
//! in-memory backend's stepped clock reads the time its backend charged, never the wall's, so
//! what it measures does not depend on the machine's load.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::io::faulty::{Fault, Trigger};
use sqliosim::io::FaultyBackend;
use sqliosim::sim::driver::simulate;
use sqliosim::stats::OpKind;

/// Ten minutes: a wall clock would make the test wait them out.
const LONG: Duration = Duration::from_secs(600);

#[test]
fn a_ten_minute_latency_on_the_stepped_clock_is_waited_in_stepped_time_not_on_the_wall() {
    let dir = PathBuf::from("/virtual");
    let mut plan = small_plan(&dir, 4, Duration::from_secs(2));
    plan.journal = false;
    let backend = FaultyBackend::stepped(7);
    // The first write of the data file (the initial update's) completes ten minutes late.
    backend.inject(Fault::Latency(LONG), Trigger::File(dir.join("t.mdx")));
    let sink = Arc::new(MemorySink::default());
    let wall = std::time::Instant::now();
    let out = simulate(plan, &backend, sink.clone()).expect("simulate");
    let wall = wall.elapsed();
    assert!(!out.worker_panicked, "a worker thread panicked");
    assert_eq!(sink.findings(), vec![], "slowness is not corruption");
    // The latency fault stamps its record when its wait is over: ten minutes into the run's
    // stepped time (the clock's wall time starts at 2025-01-01T00:00:00Z).
    let fired = backend.fired();
    assert_eq!(fired.len(), 1, "the one latency fault fired: {fired:?}");
    let stepped_start_us = 1_735_689_600u64 * 1_000_000;
    let at_s = fired[0].time_us.saturating_sub(stepped_start_us) as f64 / 1e6;
    assert!(
        (LONG.as_secs_f64()..LONG.as_secs_f64() + 1.0).contains(&at_s),
        "the late write ended ten minutes into stepped time: {at_s} s"
    );
    assert!(
        out.summary.elapsed_s >= 2.0,
        "the main phase ran its 2 s of stepped time after it: {} s",
        out.summary.elapsed_s
    );
    // Not a duration asserted: the ten minutes must not have been waited for on the wall.
    assert!(
        wall < LONG / 2,
        "the stepped clock stepped over the wait: {wall:?} of wall time"
    );
}

#[test]
fn every_page_on_the_stepped_clock_takes_at_least_its_service_time() {
    let dir = PathBuf::from("/virtual");
    let mut plan = small_plan(&dir, 4, Duration::from_secs(1));
    plan.journal = false;
    let backend = FaultyBackend::stepped(7);
    let out = simulate(plan, &backend, Arc::new(MemorySink::default())).expect("simulate");
    // The device answers an 8 KB page in 50 µs + 8,192 ns: whatever else the machine runs, no
    // read or write of the data file takes less in stepped time (memory answers in about a
    // microsecond on the real clock); more is queueing behind the helper's other requests.
    let data = &out.summary.files[0];
    for op in [OpKind::Read, OpKind::Write] {
        let l = &data.latency_by_op[&op];
        assert!(l.count > 0, "{op:?}s were done");
        assert!(
            l.min_us >= 58.0,
            "every {op:?} took at least a page's service time: {l:?}"
        );
    }
}
