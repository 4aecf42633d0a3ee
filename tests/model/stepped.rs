//! The model on the stepped clock (`sqliosim::clock`, `sim::control::stepping`): a run on the
//! in-memory backend's stepped clock reads the time its backend charged, never the wall's, so
//! what it measures does not depend on the machine's load, and a run in turns
//! (`FaultyBackend::stepped_in_turns`) of the same seed is the same run, event for event.

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

/// Every event of a 2 s (stepped) run of `seed` on a stepped backend, as text.
fn events_of(seed: u64) -> Vec<String> {
    let mut plan = small_plan(&PathBuf::from("/virtual"), 4, Duration::from_secs(2));
    plan.seed = seed;
    let backend = FaultyBackend::stepped_in_turns(seed);
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    sink.events().iter().map(|e| format!("{e:?}")).collect()
}

/// The run of [`run_of_a_seed_in_a_process_of_its_own`]: the seed from `STEPPED_SEED`, the
/// event log written to `STEPPED_OUT`.
#[test]
#[ignore = "run by the_same_seed_on_the_stepped_clock_gives_the_same_event_log in a process of its own"]
fn stepped_run_of_one_seed() {
    let seed = std::env::var("STEPPED_SEED").expect("STEPPED_SEED");
    let out = std::env::var_os("STEPPED_OUT").expect("STEPPED_OUT");
    let events = events_of(seed.parse().expect("a seed"));
    std::fs::write(out, events.join("\n")).expect("the event log written");
}

/// The event log of a stepped run of `seed`, made in a process of its own: a stepped run's
/// threads take turns on one CPU, but threads of other tests on the other CPU would share the
/// process's allocator and lock tables with them, and a turn taken while one of theirs held
/// such a lock would be the other CPU's doing.
fn run_of_a_seed_in_a_process_of_its_own(seed: u64) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("events.log");
    let status = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "stepped::stepped_run_of_one_seed",
            "--exact",
            "--ignored",
            "--quiet",
        ])
        .env("STEPPED_SEED", seed.to_string())
        .env("STEPPED_OUT", &out)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("the test binary runs");
    assert!(
        status.success(),
        "the stepped run of seed {seed} failed: {status}"
    );
    std::fs::read_to_string(&out).expect("the event log")
}

#[test]
fn the_same_seed_on_the_stepped_clock_gives_the_same_event_log() {
    assert!(
        sqliosim::sim::control::stepping::available(),
        "the stepped clock's turns need SCHED_FIFO (root, or RLIMIT_RTPRIO of 2 or more)"
    );
    let a = run_of_a_seed_in_a_process_of_its_own(7);
    let b = run_of_a_seed_in_a_process_of_its_own(7);
    if let Some(dir) = std::env::var_os("STEPPED_DUMP") {
        let dir = PathBuf::from(dir);
        std::fs::write(dir.join("a.log"), &a).expect("dump a");
        std::fs::write(dir.join("b.log"), &b).expect("dump b");
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        first.is_none() && a.len() == b.len(),
        "two runs of seed 7 differ at event {first:?} of {} and {}: {:?} vs {:?}",
        a.len(),
        b.len(),
        first.map(|i| a[i]),
        first.map(|i| b[i]),
    );
    assert!(a.len() > 20, "the run said something: {} events", a.len());
    // The log holds the run's figures (latencies, bytes, ticks), so a run that differed in any
    // I/O would differ here; another seed is another run.
    let other = run_of_a_seed_in_a_process_of_its_own(8);
    assert_ne!(
        a,
        other.lines().collect::<Vec<_>>(),
        "seed 8 gives another run"
    );
}
