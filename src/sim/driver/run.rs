//! The test cycles: initial update, initial checkpoint, main phase with every user, final
//! checkpoint, audit pass and summaries — each phase a scope of worker threads whose
//! statistics are merged when they end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use crate::sync::Mutex;

use super::monitor::Ticker;
use crate::events::Phase;
use crate::findings::Severity;
use crate::page::{ActorKind, PAGE_SIZE};
use crate::sim::actors::context::Run;
use crate::sim::actors::table::{self, CyclePhase};
use crate::sim::actors::worker::Worker;
use crate::stats::RunStats;

/// What a finished simulation reports back.
#[derive(Debug)]
pub struct SimResult {
    /// Merged statistics.
    pub stats: RunStats,
    /// Integrity findings reported.
    pub findings: u64,
    /// Cycles completed.
    pub cycles: u32,
    /// True when a worker thread panicked (an internal failure).
    pub worker_panicked: bool,
}

/// Notes panics of the workers (their statistics go to the run's board, `stats::board`).
pub struct Collector {
    panicked: Mutex<bool>,
}

/// Spawns one worker thread in `scope`; its statistics are flushed to the board when it ends
/// (a panicking one keeps what it flushed before), and a panic is
/// recorded (and stops the run) instead of tearing the process down. A thread the system will
/// not start, or I/O buffers it cannot allocate, stop the run as an environment error (exit 2):
/// `Scope::spawn` would panic in the driver, whose scope then waited for the monitor forever.
fn spawn<'s, 'e: 's>(
    scope: &'s thread::Scope<'s, 'e>,
    run: &'e Run<'e>,
    col: &'e Collector,
    kind: ActorKind,
    id: u16,
    pages: usize,
    body: impl FnOnce(&mut Worker<'e>) + Send + 's,
) {
    let name = format!("{} {id}", kind.name());
    let clock = crate::clock::hand_on();
    let started = thread::Builder::new()
        .name(name.clone())
        .spawn_scoped(scope, move || {
            let _clock = clock.enter();
            // Affinity: every worker pins itself (a mask naming no usable CPU was warned about
            // in the header and leaves it unpinned).
            let _ = crate::sim::control::affinity::pin(None, run.plan.affinity);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut w = match Worker::new(run, kind, id, pages) {
                    Ok(w) => w,
                    Err(e) => {
                        let bytes = pages.max(1) * PAGE_SIZE;
                        environment(run, no_buffers_text(kind.name(), bytes, &e));
                        return None;
                    }
                };
                body(&mut w);
                w.stats.flush();
                Some(())
            }));
            match result {
                Ok(_) => {}
                Err(_) => {
                    *col.panicked.lock() = true;
                    run.controls
                        .stop
                        .stop_run(crate::sim::control::stop::StopReason::Error);
                }
            }
        });
    if let Err(e) = started {
        environment(run, no_thread_text(&name, &e));
    }
}

/// Stops the run for an environment error of the driver itself (no file concerned).
fn environment(run: &Run<'_>, text: String) {
    let stop = crate::sim::actors::failure::EnvStop {
        text,
        internal: false,
    };
    crate::sim::actors::failure::stop(run, stop);
}

/// The message for a thread the system would not start.
pub fn no_thread_text(name: &str, e: &std::io::Error) -> String {
    format!("cannot start thread {name}: {e}; raise the limit on processes and threads (ulimit -u) or on memory (ulimit -v), or lower the user counts")
}

/// The message for I/O buffers that could not be allocated.
fn no_buffers_text(actor: &str, bytes: usize, e: &std::io::Error) -> String {
    format!("cannot allocate {bytes} bytes of I/O buffers for {actor}: {e}; raise the memory limit (ulimit -v) or lower MaxMemoryMB and the pages per request")
}

/// Runs every cycle of the plan.
pub fn run_cycles(run: &Run<'_>) -> SimResult {
    let col = Collector {
        panicked: Mutex::new(false),
    };
    let mut cycles = 0;
    while run.plan.cycles == 0 || cycles < run.plan.cycles {
        if run.controls.stop.run_stopped() {
            break;
        }
        cycles += 1;
        one_cycle(run, &col, cycles);
    }
    SimResult {
        stats: run.reporting.board.snapshot(),
        findings: run.finding_count(),
        cycles,
        worker_panicked: col.panicked.into_inner(),
    }
}

fn one_cycle(run: &Run<'_>, col: &Collector, cycle: u32) {
    run.message(
        Severity::Info,
        "System",
        "Cycle::Start",
        format!("Starting test cycle {cycle}"),
    );
    let tick = |phase| Some(Ticker { cycle, phase });
    let data = data_bytes(run);
    let initial = tick(Phase::InitialUpdate { total_bytes: data });
    run_phase(run, col, CyclePhase::InitialUpdate, initial);
    let checkpoint = tick(Phase::InitialCheckpoint);
    run_phase(run, col, CyclePhase::InitialCheckpoint, checkpoint);
    let main = Phase::Main {
        length: run.plan.cycle_duration,
    };
    run_phase(run, col, CyclePhase::Main, tick(main));
    if !run.controls.stop.run_stopped() {
        let checkpoint = tick(Phase::FinalCheckpoint);
        run_phase(run, col, CyclePhase::FinalCheckpoint, checkpoint);
        // The audit reads the data files as they are now (a shrink may have cut them).
        let audit = tick(Phase::Audit {
            total_bytes: data_bytes(run),
        });
        run_phase(run, col, CyclePhase::Audit, audit);
    }
}

/// Runs the actors of `which` from the table, each with its threads.
fn run_phase<'e>(run: &'e Run<'e>, col: &'e Collector, which: CyclePhase, timed: Option<Ticker>) {
    let burst = which.bursts();
    phase(run, which.name(), burst, timed, |scope| {
        for spec in table::of_phase(which) {
            let pages = (spec.pages)(&run.plan);
            let body = spec.body;
            for i in 0..(spec.threads)(&run.plan) {
                let id = spec.first_id + i as u16;
                spawn(scope, run, col, spec.kind, id, pages, move |w| body(w, i));
            }
        }
    });
}

/// Bytes of the data files' pages after the header page: what the initial update writes and
/// the audit pass reads.
fn data_bytes(run: &Run<'_>) -> u64 {
    run.files
        .data
        .iter()
        .map(|&f| run.files[f].pages.read().saturating_sub(1) * PAGE_SIZE as u64)
        .sum()
}

/// Runs `body`'s threads to completion with throttling lifted when `burst` and AllowIOBursts,
/// with the Display Monitor watching for long I/O, feeding the progress line, and ending the
/// main phase on time.
fn phase<'e>(
    run: &'e Run<'e>,
    name: &'static str,
    burst: bool,
    timed: Option<Ticker>,
    body: impl for<'s> FnOnce(&'s thread::Scope<'s, 'e>),
) {
    if run.controls.stop.run_stopped() {
        return;
    }
    run.controls.stop.begin_phase();
    run.controls.stop.enter_stage(name);
    if let Some(t) = timed {
        let began = crate::events::PhaseBegan {
            phase: t.phase,
            cycle: t.cycle,
        };
        run.reporting.sink.emit(crate::events::Event::Phase(began));
    }
    depth_phase(run, Some(name));
    run.controls
        .burst
        .store(burst && run.plan.allow_io_bursts, Ordering::Relaxed);
    let t = crate::clock::now();
    let workers_done = AtomicBool::new(false);
    let clock = crate::clock::hand_on();
    thread::scope(|outer| {
        let monitor = thread::Builder::new()
            .name("monitor".into())
            .spawn_scoped(outer, || {
                let _clock = clock.enter();
                super::monitor::monitor(run, &workers_done, timed)
            });
        // Without the monitor nothing would end the main phase: the workers see the stop.
        if let Err(e) = monitor {
            environment(run, no_thread_text("monitor", &e));
        }
        thread::scope(|scope| body(scope));
        workers_done.store(true, Ordering::Release);
    });
    run.controls.burst.store(false, Ordering::Relaxed);
    depth_phase(run, None);
    run.message(
        Severity::Info,
        "System",
        "Cycle::Phase",
        format!(
            "Phase '{name}' done in {:.1} s",
            crate::clock::since(t).as_secs_f64()
        ),
    );
}

/// Opens phase `name` (or closes the open one) in every depth gauge, so the depth is also
/// reported per phase.
fn depth_phase(run: &Run<'_>, name: Option<&str>) {
    let gauges = run.controls.throttles.iter().map(|t| t.depth());
    for g in gauges.chain([&*run.controls.depth]) {
        match name {
            Some(n) => g.begin_phase(n),
            None => g.end_phase(),
        }
    }
}
