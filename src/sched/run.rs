//! The test cycles: initial update, initial checkpoint, main phase with every user, final
//! checkpoint, audit pass and summaries — each phase a scope of worker threads whose
//! statistics are merged when they end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Instant;

use parking_lot::Mutex;

use crate::actors::shared::Shared;
use crate::actors::worker::Worker;
use crate::actors::{batch, random, shrink, system};
use crate::events::Phase;
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
    sh: &'e Shared,
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
                let mut w = match Worker::new(sh, kind, id, pages) {
                    Ok(w) => w,
                    Err(e) => {
                        let bytes = pages.max(1) * PAGE_SIZE;
                        environment(sh, no_buffers_text(kind.name(), bytes, &e));
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
                    sh.stop.stop_run(crate::control::stop::StopReason::Error);
                }
            }
        });
    if let Err(e) = started {
        environment(sh, no_thread_text(&name, &e));
    }
}

/// Stops the run for an environment error of the driver itself (no file concerned).
fn environment(sh: &Shared, text: String) {
    let stop = crate::actors::failure::EnvStop {
        text,
        internal: false,
    };
    crate::actors::failure::stop(sh, stop);
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
pub fn run_cycles(sh: &Shared) -> SimResult {
    let col = Collector::new(sh.start);
    let mut cycles = 0;
    while sh.plan.cycles == 0 || cycles < sh.plan.cycles {
        if sh.stop.run_stopped() {
            break;
        }
        cycles += 1;
        one_cycle(sh, &col, cycles);
    }
    let stats = col.stats.into_inner();
    SimResult {
        stats,
        findings: sh.finding_count(),
        cycles,
        worker_panicked: col.panicked.into_inner(),
    }
}

fn one_cycle(sh: &Shared, col: &Collector, cycle: u32) {
    sh.message(
        Severity::Info,
        "System",
        "Cycle::Start",
        format!("Starting test cycle {cycle}"),
    );
    let data = data_bytes(sh);
    let tick = |phase| Some(Ticker { cycle, phase });
    phase(
        sh,
        "initial update",
        true,
        tick(Phase::InitialUpdate { total_bytes: data }),
        |scope| {
            for (i, &file) in sh.data.iter().enumerate() {
                spawn(
                    scope,
                    sh,
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
        sh,
        "initial checkpoint",
        true,
        tick(Phase::InitialCheckpoint),
        |scope| {
            spawn(scope, sh, col, ActorKind::Checkpoint, 0, SWEEP_PAGES, |w| {
                system::checkpoint(w);
            });
        },
    );
    main_phase(sh, col, cycle);
    if !sh.stop.run_stopped() {
        phase(
            sh,
            "final checkpoint",
            true,
            tick(Phase::FinalCheckpoint),
            |scope| {
                spawn(scope, sh, col, ActorKind::Checkpoint, 0, SWEEP_PAGES, |w| {
                    system::checkpoint(w);
                });
            },
        );
        // The audit reads the data files as they are now (a shrink may have cut them).
        audit_phase(
            sh,
            col,
            tick(Phase::Audit {
                total_bytes: data_bytes(sh),
            }),
        );
    }
}

/// Bytes of the data files' pages after the header page: what the initial update writes and
/// the audit pass reads.
fn data_bytes(sh: &Shared) -> u64 {
    sh.data
        .iter()
        .map(|&f| sh.files[f].pages.read().saturating_sub(1) * PAGE_SIZE as u64)
        .sum()
}

/// The phase the monitor's ticks describe, and its cycle (the main phase also ends on time).
#[derive(Clone, Copy)]
pub struct Ticker {
    /// The test cycle (1-based).
    pub cycle: u32,
    /// The phase running.
    pub phase: Phase,
}

/// Runs `body`'s threads to completion with throttling lifted when `burst` and AllowIOBursts,
/// with the Display Monitor watching for long I/O, feeding the progress line, and ending the
/// main phase on time.
fn phase<'e>(
    sh: &'e Shared,
    name: &'static str,
    burst: bool,
    timed: Option<Ticker>,
    body: impl for<'s> FnOnce(&'s thread::Scope<'s, 'e>),
) {
    if sh.stop.run_stopped() {
        return;
    }
    sh.stop.begin_phase();
    sh.stop.enter_stage(name);
    if let Some(t) = timed {
        let began = crate::events::PhaseBegan {
            phase: t.phase,
            cycle: t.cycle,
        };
        sh.sink.emit(crate::events::Event::Phase(began));
    }
    depth_phase(sh, Some(name));
    sh.burst
        .store(burst && sh.plan.allow_io_bursts, Ordering::Relaxed);
    let t = Instant::now();
    let workers_done = AtomicBool::new(false);
    thread::scope(|outer| {
        let monitor = thread::Builder::new()
            .name("monitor".into())
            .spawn_scoped(outer, || super::monitor::monitor(sh, &workers_done, timed));
        // Without the monitor nothing would end the main phase: the workers see the stop.
        if let Err(e) = monitor {
            environment(sh, no_thread_text("monitor", &e));
        }
        thread::scope(|scope| body(scope));
        workers_done.store(true, Ordering::Release);
    });
    sh.burst.store(false, Ordering::Relaxed);
    depth_phase(sh, None);
    sh.message(
        Severity::Info,
        "System",
        "Cycle::Phase",
        format!("Phase '{name}' done in {:.1} s", t.elapsed().as_secs_f64()),
    );
}

/// Opens phase `name` (or closes the open one) in every depth gauge, so the depth is also
/// reported per phase.
fn depth_phase(sh: &Shared, name: Option<&str>) {
    let gauges = sh.throttles.iter().map(|t| t.depth());
    for g in gauges.chain([&*sh.depth]) {
        match name {
            Some(n) => g.begin_phase(n),
            None => g.end_phase(),
        }
    }
}

/// Writes every page of a data file once (generation 1 of this cycle's pages), posting the
/// writes without waiting for each (with AllowIOBursts, as many as the depth allows).
fn initial_update(w: &mut Worker<'_>, file: usize) {
    let pages = *w.sh.files[file].pages.read();
    let t = Instant::now();
    let mut flight = crate::actors::flight::Flight::new(w.sh);
    let mut page = 1;
    while page < pages && !w.sh.stop.run_stopped() {
        let n = (w.max_pages() as u64).min(pages - page);
        flight.write(w, file, page, n, 0, crate::actors::flight::After::Nothing);
        page += n;
    }
    flight.drain(w);
    let name = w.sh.files[file].path.display().to_string();
    let text = format!(
        "Initial update of {name} {}",
        flight.describe_writes(t.elapsed())
    );
    w.sh.message(Severity::Info, "InitialUpdate", "InitialUpdate", text);
}

fn main_phase(sh: &Shared, col: &Collector, cycle: u32) {
    let plan = &sh.plan;
    let max_chain = plan.random.max_chain.max(1) as usize;
    let main = Phase::Main {
        length: sh.plan.cycle_duration,
    };
    phase(
        sh,
        "main",
        false,
        Some(Ticker { cycle, phase: main }),
        |scope| {
            for id in 0..plan.random.users {
                spawn(
                    scope,
                    sh,
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
                        sh,
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
            spawn(scope, sh, col, ActorKind::ShrinkUser, 0, 1, shrink::run);
            spawn(
                scope,
                sh,
                col,
                ActorKind::Checkpoint,
                0,
                SWEEP_PAGES,
                system::checkpointer,
            );
            spawn(
                scope,
                sh,
                col,
                ActorKind::LazyWriter,
                0,
                SWEEP_PAGES,
                system::lazy_writer,
            );
            spawn(
                scope,
                sh,
                col,
                ActorKind::LogWriter,
                0,
                1,
                system::log_writer,
            );
        },
    );
}

fn audit_phase(sh: &Shared, col: &Collector, ticker: Option<Ticker>) {
    phase(sh, "audit", false, ticker, |scope| {
        for (i, &file) in sh.data.iter().enumerate() {
            spawn(
                scope,
                sh,
                col,
                ActorKind::AuditUser,
                1000 + i as u16,
                SWEEP_PAGES,
                move |w| {
                    let n = system::audit_pass(w, file);
                    w.sh.message(
                        Severity::Info,
                        "Audit User",
                        "AuditPass",
                        format!(
                            "Audit pass verified {n} pages of {}",
                            w.sh.files[file].path.display()
                        ),
                    );
                },
            );
        }
        spawn(scope, sh, col, ActorKind::LogWriter, 1000, 1, |w| {
            for i in 0..w.sh.logs.len() {
                let file = w.sh.logs[i].file;
                w.flush_log_index(i);
                system::check_log_chain(w, i, file, usize::MAX);
            }
        });
    });
}
