//! Indirect checkpoint (issue #24 §2): with `TargetRecoveryTime` set, the recovery writer
//! writes pages dirty for longer than the target in the background, before the periodic
//! checkpoint (every 5 s) has run, and backs off while the data file's running average I/O
//! duration is above 50 ms. Counts are asserted, never times.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::io::faulty::Fault;
use sqliosim::io::FaultyBackend;
use sqliosim::sim::driver::simulate;
use sqliosim::sim::plan::SimPlan;

/// One random user for 2.5 s (shorter than the checkpoint's 5 s), a pool the lazy writer
/// leaves alone, and the recovery writer at 1 s.
fn plan(target_recovery_s: u32) -> SimPlan {
    let mut plan = small_plan(&PathBuf::from("/virtual"), 2, Duration::from_millis(2500));
    plan.journal = false;
    plan.max_memory_mb = 8;
    plan.random.users = 1;
    plan.audit.users = 0;
    plan.read_ahead.users = 0;
    plan.bulk.users = 0;
    plan.sections.general.target_recovery_time_s = target_recovery_s;
    plan
}

/// The recovery writer's closing line, and the pages it wrote per the run's statistics.
fn recovery_writer(backend: &FaultyBackend, target_recovery_s: u32) -> (Option<String>, u64) {
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan(target_recovery_s), backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    assert_eq!(
        sink.findings(),
        vec![],
        "no corruption in a run without faults"
    );
    let line = sink
        .messages()
        .iter()
        .find(|m| m.text.starts_with("recovery writer: "))
        .map(|m| m.text.clone());
    let writes = out
        .summary
        .actors
        .iter()
        .find(|a| a.name == "Recovery Writer")
        .map_or(0, |a| a.io.writes + a.io.gather_writes);
    (line, writes)
}

#[test]
fn the_recovery_writer_writes_pages_dirty_for_longer_than_the_target() {
    let (line, writes) = recovery_writer(&FaultyBackend::stepped(3), 1);
    let line = line.expect("the recovery writer's closing line");
    let pages: u64 = line["recovery writer: ".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a page count");
    assert!(pages > 0, "{line}");
    assert!(
        writes > 0,
        "no write of the Recovery Writer in the statistics: {line}"
    );
    // Not how often it backed off: that is the machine's. The running average counts the time
    // a request waits for a CPU, so on a loaded machine the fault-free backend averages over
    // 50 ms now and then. "backed off 0 times" was asserted and failed beside six spinners and
    // a disk writer in 5 runs of 5 (41–53 pages written in 2–5 rounds, 2–3 back-offs), and
    // once in 5 without them (198 pages in 10 rounds, 1 back-off). That it backs off on a slow
    // device is `the_recovery_writer_backs_off_while_requests_take_over_50_ms`'s.
}

#[test]
fn without_a_target_there_is_no_recovery_writer() {
    let (line, writes) = recovery_writer(&FaultyBackend::stepped(3), 0);
    assert_eq!(line, None);
    assert_eq!(writes, 0);
}

#[test]
fn the_recovery_writer_backs_off_while_requests_take_over_50_ms() {
    let slow = FaultyBackend::stepped(3);
    slow.set_random(1.0, vec![Fault::Latency(Duration::from_millis(80))]);
    let (line, _) = recovery_writer(&slow, 1);
    let line = line.expect("the recovery writer's closing line");
    let backed: u64 = line
        .split("backed off ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a back-off count");
    assert!(backed > 0, "every request takes 80 ms: {line}");
}
