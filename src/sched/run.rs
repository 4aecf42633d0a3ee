//! The test cycles: initial update, initial checkpoint, main phase with every user, final
//! checkpoint, audit pass and summaries — each phase a scope of worker threads whose
//! statistics are merged when they end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Instant;

use parking_lot::Mutex;

use super::progress::Phase;
use crate::actors::context::Run;
use crate::actors::worker::Worker;
use crate::actors::{batch, random, shrink, system};
use crate::findings::Severity;
use crate::page::{ActorKind, PAGE_SIZE};
use crate::stats::{RunStats, ThreadStats};

/// Pages per request for the initial update and the audit pass.
const SWEEP_PAGES: usize = 64;

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

/// Collects the statistics of finished workers and notes panics.
pub struct Collector {
    stats: Mutex<RunStats>,
    panicked: Mutex<bool>,
}

impl Collector {
    fn new(start: Instant) -> Collector {
        Collector {
            stats: Mutex::new(RunStats::new(start)),
            panicked: Mutex::new(false),
        }
    }

    fn absorb(&self, s: &ThreadStats) {
        self.stats.lock().absorb(s);
    }
}

/// Spawns one worker thread in `scope`; its statistics go to `col` when it ends, and a panic is
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
    let started = thread::Builder::new()
        .name(name.clone())
        .spawn_scoped(scope, move || {
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
                Some(w.stats)
            }));
            match result {
                Ok(Some(stats)) => col.absorb(&stats),
                Ok(None) => {}
                Err(_) => {
                    *col.panicked.lock() = true;
                    run.controls
                        .stop
                        .stop_run(crate::control::stop::StopReason::Error);
                }
            }
        });
    if let Err(e) = started {
        environment(run, no_thread_text(&name, &e));
    }
}

/// Stops the run for an environment error of the driver itself (no file concerned).
fn environment(run: &Run<'_>, text: String) {
    let stop = crate::actors::failure::EnvStop {
        text,
        internal: false,
    };
    crate::actors::failure::stop(run, stop);
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
pub fn run_cycles(run: &Run<'_>, on_tick: &(dyn Fn(&str) + Sync)) -> SimResult {
    let col = Collector::new(run.reporting.start);
    let mut cycles = 0;
    while run.plan.cycles == 0 || cycles < run.plan.cycles {
        if run.controls.stop.run_stopped() {
            break;
        }
        cycles += 1;
        one_cycle(run, &col, cycles, on_tick);
    }
    let stats = col.stats.into_inner();
    SimResult {
        stats,
        findings: run.finding_count(),
        cycles,
        worker_panicked: col.panicked.into_inner(),
    }
}

fn one_cycle(run: &Run<'_>, col: &Collector, cycle: u32, on_tick: &(dyn Fn(&str) + Sync)) {
    run.message(
        Severity::Info,
        "System",
        "Cycle::Start",
        format!("Starting test cycle {cycle}"),
    );
    let data = data_bytes(run);
    let tick = |phase| Some(Ticker { on_tick, phase });
    phase(
        run,
        "initial update",
        true,
        tick(Phase::InitialUpdate { total_bytes: data }),
        |scope| {
            for (i, &file) in run.files.data.iter().enumerate() {
                spawn(
                    scope,
                    run,
                    col,
                    ActorKind::Init,
                    i as u16,
                    SWEEP_PAGES,
                    move |w| initial_update(w, file),
                );
            }
        },
    );
    phase(
        run,
        "initial checkpoint",
        true,
        tick(Phase::InitialCheckpoint),
        |scope| {
            spawn(
                scope,
                run,
                col,
                ActorKind::Checkpoint,
                0,
                SWEEP_PAGES,
                |w| {
                    system::checkpoint(w);
                },
            );
        },
    );
    main_phase(run, col, on_tick);
    if !run.controls.stop.run_stopped() {
        phase(
            run,
            "final checkpoint",
            true,
            tick(Phase::FinalCheckpoint),
            |scope| {
                spawn(
                    scope,
                    run,
                    col,
                    ActorKind::Checkpoint,
                    0,
                    SWEEP_PAGES,
                    |w| {
                        system::checkpoint(w);
                    },
                );
            },
        );
        // The audit reads the data files as they are now (a shrink may have cut them).
        audit_phase(
            run,
            col,
            tick(Phase::Audit {
                total_bytes: data_bytes(run),
            }),
        );
    }
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

/// The progress callback and the phase its lines describe (the main phase also ends on time).
#[derive(Clone, Copy)]
pub struct Ticker<'a> {
    /// Receives a progress line about once a second.
    pub on_tick: &'a (dyn Fn(&str) + Sync),
    /// The phase running.
    pub phase: Phase,
}

/// Runs `body`'s threads to completion with throttling lifted when `burst` and AllowIOBursts,
/// with the Display Monitor watching for long I/O, feeding the progress line, and ending the
/// main phase on time.
fn phase<'e>(
    run: &'e Run<'e>,
    name: &'static str,
    burst: bool,
    timed: Option<Ticker<'_>>,
    body: impl for<'s> FnOnce(&'s thread::Scope<'s, 'e>),
) {
    if run.controls.stop.run_stopped() {
        return;
    }
    run.controls.stop.begin_phase();
    run.controls.stop.enter_stage(name);
    depth_phase(run, Some(name));
    run.controls
        .burst
        .store(burst && run.plan.allow_io_bursts, Ordering::Relaxed);
    let t = Instant::now();
    let workers_done = AtomicBool::new(false);
    thread::scope(|outer| {
        let monitor = thread::Builder::new()
            .name("monitor".into())
            .spawn_scoped(outer, || super::monitor::monitor(run, &workers_done, timed));
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
        format!("Phase '{name}' done in {:.1} s", t.elapsed().as_secs_f64()),
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

/// Writes every page of a data file once (generation 1 of this cycle's pages), posting the
/// writes without waiting for each (with AllowIOBursts, as many as the depth allows).
fn initial_update(w: &mut Worker<'_>, file: usize) {
    let pages = *w.run.files[file].pages.read();
    let t = Instant::now();
    let mut flight = crate::actors::flight::Flight::new(w.run);
    let mut page = 1;
    while page < pages && !w.run.controls.stop.run_stopped() {
        let n = (w.max_pages() as u64).min(pages - page);
        flight.write(w, file, page, n, 0, crate::actors::flight::After::Nothing);
        page += n;
    }
    flight.drain(w);
    let name = w.run.files[file].path.display().to_string();
    let text = format!(
        "Initial update of {name} {}",
        flight.describe_writes(t.elapsed())
    );
    w.run
        .message(Severity::Info, "InitialUpdate", "InitialUpdate", text);
}

fn main_phase(run: &Run<'_>, col: &Collector, on_tick: &(dyn Fn(&str) + Sync)) {
    let plan = &run.plan;
    let max_chain = plan.random.max_chain.max(1) as usize;
    let main = Phase::Main {
        length: run.plan.cycle_duration,
    };
    phase(
        run,
        "main",
        false,
        Some(Ticker {
            on_tick,
            phase: main,
        }),
        |scope| {
            for id in 0..plan.random.users {
                spawn(
                    scope,
                    run,
                    col,
                    ActorKind::RandomUser,
                    id as u16,
                    max_chain,
                    random::run,
                );
            }
            let specs = [
                (ActorKind::AuditUser, &plan.audit),
                (ActorKind::ReadAheadUser, &plan.read_ahead),
                (ActorKind::BulkUpdateUser, &plan.bulk),
            ];
            for (kind, bp) in specs {
                for id in 0..bp.users {
                    let pages = bp.max_pages.clamp(1, 1024) as usize;
                    spawn(
                        scope,
                        run,
                        col,
                        kind,
                        id as u16,
                        pages,
                        move |w| match kind {
                            ActorKind::AuditUser => batch::audit(w, bp),
                            ActorKind::ReadAheadUser => batch::read_ahead(w, bp),
                            _ => batch::bulk_update(w, bp),
                        },
                    );
                }
            }
            spawn(scope, run, col, ActorKind::ShrinkUser, 0, 1, shrink::run);
            spawn(
                scope,
                run,
                col,
                ActorKind::Checkpoint,
                0,
                SWEEP_PAGES,
                system::checkpointer,
            );
            spawn(
                scope,
                run,
                col,
                ActorKind::LazyWriter,
                0,
                SWEEP_PAGES,
                system::lazy_writer,
            );
            spawn(
                scope,
                run,
                col,
                ActorKind::LogWriter,
                0,
                1,
                system::log_writer,
            );
        },
    );
}

fn audit_phase(run: &Run<'_>, col: &Collector, ticker: Option<Ticker<'_>>) {
    phase(run, "audit", false, ticker, |scope| {
        for (i, &file) in run.files.data.iter().enumerate() {
            spawn(
                scope,
                run,
                col,
                ActorKind::AuditUser,
                1000 + i as u16,
                SWEEP_PAGES,
                move |w| {
                    let n = system::audit_pass(w, file);
                    w.run.message(
                        Severity::Info,
                        "Audit User",
                        "AuditPass",
                        format!(
                            "Audit pass verified {n} pages of {}",
                            w.run.files[file].path.display()
                        ),
                    );
                },
            );
        }
        spawn(scope, run, col, ActorKind::LogWriter, 1000, 1, |w| {
            for i in 0..w.run.files.logs.len() {
                let file = w.run.files.logs[i].file;
                w.flush_log_index(i);
                system::check_log_chain(w, i, file, usize::MAX);
            }
        });
    });
}
