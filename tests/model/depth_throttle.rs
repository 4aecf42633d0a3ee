//! The throttle at depth (issue #15): with the asynchronous actors posting up to
//! MaxOutstandingIO requests, latency above TargetIODuration lowers the depth and `throttled`
//! counts it. The faulty backend carries posted requests on its helper thread while the poster
//! goes on, and its latency fault makes every request slower than the target, so the throttle
//! fires on every run: the assertions are on counts, never on times.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::io::faulty::Fault;
use sqliosim::io::FaultyBackend;
use sqliosim::sim::driver::simulate;
use sqliosim::sim::plan::SimPlan;
use sqliosim::stats::FileSummary;

/// A plan with few threads and a deep allowance, bursts off so every phase obeys the throttle.
fn plan() -> SimPlan {
    let mut plan = small_plan(&PathBuf::from("/virtual"), 2, Duration::from_millis(600));
    plan.journal = false;
    plan.max_outstanding_io = 256;
    plan.allow_io_bursts = false;
    plan.scatter_gather = false;
    plan.target_io = Duration::from_millis(20);
    plan.random.users = 1;
    plan.audit.users = 0;
    // Room for more dirty pages than the checkpoint needs to go deep.
    plan.max_memory_mb = 8;
    plan
}

/// The most requests any checkpoint had in flight, from its messages.
fn checkpoint_depth(sink: &MemorySink) -> u64 {
    sink.messages()
        .iter()
        .filter(|m| m.text.starts_with("Checkpoint wrote"))
        .filter_map(|m| {
            let at = m.text.find("at most ")? + "at most ".len();
            m.text[at..].split_whitespace().next()?.parse().ok()
        })
        .max()
        .unwrap_or(0)
}

/// The data file's summary and the deepest checkpoint of a run.
fn data_file(backend: &FaultyBackend) -> (FileSummary, u64) {
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan(), backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    assert_eq!(sink.findings(), vec![], "slowness is not corruption");
    (out.summary.files[0].clone(), checkpoint_depth(&sink))
}

#[test]
fn latency_above_the_target_lowers_the_depth_and_counts_as_throttled() {
    let (fast, fast_ckpt) = data_file(&FaultyBackend::new(7));
    assert!(
        fast.io_request_blocks >= 64,
        "without latency the asynchronous actors go deep: {}",
        fast.io_request_blocks
    );
    assert!(
        fast_ckpt >= 16,
        "the final checkpoint went deep: {fast_ckpt}"
    );

    let slow_backend = FaultyBackend::new(7);
    slow_backend.set_random(1.0, vec![Fault::Latency(Duration::from_millis(25))]);
    let (slow, slow_ckpt) = data_file(&slow_backend);
    assert!(
        slow.throttled > 0,
        "every request is slower than the 20 ms target"
    );
    // The first requests are posted before any latency is known (the throttle learns from
    // completions, as SQLIOSim's does), so compare the final checkpoint, long after.
    assert!(
        (1..=4).contains(&slow_ckpt) && slow_ckpt * 4 <= fast_ckpt,
        "the throttle keeps the checkpoint shallow: {slow_ckpt} in flight under latency, \
         {fast_ckpt} without"
    );
}
