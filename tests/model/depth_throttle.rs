//! The throttle at depth (issue #15): with the asynchronous actors posting up to
//! MaxOutstandingIO requests, latency above TargetIODuration lowers the depth and `throttled`
//! counts it. The faulty backend carries posted requests on its helper thread while the poster
//! goes on, and its latency fault holds every completion back, so the throttle fires on every
//! run: the assertions are on counts, never on times.
//!
//! Both runs are on the in-memory backend's stepped clock (`sqliosim::clock`): the latency the
//! throttle sees is what the backend charged (50 µs + 1 ns a byte, the fault's 25 ms), never a
//! loaded machine's queueing (on the real clock a loaded machine's completions were slower
//! than the 20 ms target, so the control was throttled too: 62 in flight, not 64). The
//! unthrottled run, the control, aims at a target no latency reaches; its depth is taken as the
//! deepest of as many runs as it takes (see `deepest`), which on the stepped clock is the first.

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

/// A plan with few threads and a deep allowance, bursts off so every phase obeys the throttle,
/// aiming at `target`.
fn plan(target: Duration) -> SimPlan {
    let mut plan = small_plan(&PathBuf::from("/virtual"), 2, Duration::from_millis(600));
    plan.journal = false;
    plan.max_outstanding_io = 256;
    plan.allow_io_bursts = false;
    plan.scatter_gather = false;
    plan.target_io = target;
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

/// The data file's summary and the deepest checkpoint of a run aiming at `target` on
/// `backend`.
fn data_file(target: Duration, backend: &FaultyBackend) -> (FileSummary, u64) {
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan(target), backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    assert_eq!(sink.findings(), vec![], "slowness is not corruption");
    (out.summary.files[0].clone(), checkpoint_depth(&sink))
}

/// A target no latency of a run reaches: the throttle never lowers the allowance.
const NEVER: Duration = Duration::from_secs(3600);

/// Most attempts of the unthrottled run (see [`deepest`]).
const ATTEMPTS: usize = 20;

/// The deepest file and checkpoint depths of unthrottled runs without latency, run until one
/// went 64 deep with a checkpoint 16 deep, or [`ATTEMPTS`] runs.
///
/// On the real clock a request without latency completed as soon as the helper thread ran it,
/// so the depth a run reached was a race between the poster and the helper (on a loaded
/// machine one run's checkpoint had 7 in flight, the next one's 41). On the stepped clock a
/// completion waits its service time, so the poster runs ahead of it whatever the machine's
/// load; which thread runs first when two can is still the machine's choice
/// (`sim::control::stepping`), so the attempts stay.
fn deepest() -> (u64, u64) {
    let (mut blocks, mut ckpt) = (0, 0);
    for _ in 0..ATTEMPTS {
        let (file, c) = data_file(NEVER, &FaultyBackend::stepped(7));
        blocks = blocks.max(file.io_request_blocks);
        ckpt = ckpt.max(c);
        if blocks >= 64 && ckpt >= 16 {
            break;
        }
    }
    (blocks, ckpt)
}

#[test]
fn latency_above_the_target_lowers_the_depth_and_counts_as_throttled() {
    let (deep, deep_ckpt) = deepest();
    assert!(
        deep >= 64,
        "unthrottled, the asynchronous actors go deep: {deep} in {ATTEMPTS} runs"
    );
    assert!(
        deep_ckpt >= 16,
        "unthrottled, the final checkpoint goes deep: {deep_ckpt} in {ATTEMPTS} runs"
    );

    let slow_backend = FaultyBackend::stepped(7);
    slow_backend.set_random(1.0, vec![Fault::Latency(Duration::from_millis(25))]);
    let (slow, slow_ckpt) = data_file(Duration::from_millis(20), &slow_backend);
    assert!(
        slow.throttled > 0,
        "every request is slower than the 20 ms target"
    );
    // The first requests are posted before any latency is known (the throttle learns from
    // completions, as SQLIOSim's does), so compare the final checkpoint, long after. Latency
    // only holds completions back, so a load makes the checkpoint no shallower on its own.
    assert!(
        (1..=4).contains(&slow_ckpt) && slow_ckpt * 4 <= deep_ckpt,
        "the throttle keeps the checkpoint shallow: {slow_ckpt} in flight under latency, \
         {deep_ckpt} unthrottled"
    );
}
