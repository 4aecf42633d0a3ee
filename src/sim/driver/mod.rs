//! Scheduler, the driver only: setup, test cycles, the monitor and resume.
//! The plan it runs lives in [`crate::sim::plan`], the run-time controls it shares with the actors
//! (stop, throttle, gate, in-flight table) in [`crate::sim::control`].
//!
//! [`simulate`] is the whole of a `sqliosim run` below the reporting: it sets the files up,
//! runs the cycles, and returns the merged statistics and the per-file summaries. Everything
//! else leaves through the event sink as it happens: findings and messages, each phase as it
//! begins, a tick about once a second (the progress line is a sink), and the summary at the end.

pub mod monitor;
pub mod resume;
pub mod run;
pub mod setup;

/// The run's manifest: every file a run of the plan owns (the set's, the journal's, each
/// actor's own), read by the app's previous-run guard and planted-name check.
pub use crate::sim::actors::table::manifest;

use std::sync::Arc;

use crate::events::{Event, EventSink};
use crate::findings::{Message, Severity};
use crate::io::Backend;
use crate::sim::actors::context::Run;
use crate::sim::actors::journaling;
use crate::sim::control::stop::{Stop, StopReason};
pub use crate::sim::engine::setup::SetupError;
use crate::sim::plan::SimPlan;
use crate::stats::{
    file_summary_lines, fill_depth_timeline, DepthSummary, FileMeta, Summary, SQLIOSIM_SUMMARY_FUNC,
};

/// What a simulation reports back to the app.
#[derive(Debug)]
pub struct SimOutcome {
    /// Merged statistics, summarised.
    pub summary: Summary,
    /// Integrity findings reported.
    pub findings: u64,
    /// Cycles started.
    pub cycles: u32,
    /// Why the run stopped early, if it did.
    pub stopped: StopReason,
    /// How and when it stopped: the signal, the time from the start, the planned length.
    pub stop: crate::sim::control::stop::StopWhen,
    /// A worker thread panicked: an internal failure.
    pub worker_panicked: bool,
    /// Run id of the file set.
    pub run_id: u64,
    /// The environment error (refused request, vanished device or mount) that stopped the
    /// run, if one did: not a finding, but the exit status says so.
    pub environment: Option<crate::sim::actors::failure::EnvStop>,
    /// Requests that failed for lack of space: a condition, not a finding.
    pub no_space: u64,
}

/// Runs the simulation of `plan` on `backend`, its events into `sink` (a
/// [`Tick`](crate::events::Tick) about once a second in every phase, the
/// [`Summary`](crate::events::Event::Summary) at the end). SIGINT and SIGTERM stop the run
/// cleanly.
pub fn simulate(
    plan: SimPlan,
    backend: &dyn Backend,
    sink: Arc<dyn EventSink>,
) -> Result<SimOutcome, SetupError> {
    simulate_caught(plan, backend, sink, Signals::catch())
}

/// SIGINT and SIGTERM caught into a flag from the moment this is made, so that a signal
/// that comes before the simulation starts (while `run` prints its header, its JSON already
/// saying "running") ends the run cleanly as soon as it starts, instead of killing the
/// process with the JSON left "running".
pub struct Signals {
    flag: Arc<std::sync::atomic::AtomicUsize>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    /// Catches SIGINT and SIGTERM from now on.
    pub fn catch() -> Signals {
        let flag = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let ids = register_signals(&flag);
        Signals { flag, ids }
    }
}

/// [`simulate`] with the signals caught since `signals` was made (a signal already caught
/// stops the run as it starts).
pub fn simulate_caught(
    plan: SimPlan,
    backend: &dyn Backend,
    sink: Arc<dyn EventSink>,
    signals: Signals,
) -> Result<SimOutcome, SetupError> {
    // Signals are caught from the start: a Ctrl-C while the files are being created still
    // ends the run cleanly.
    let Signals { flag, ids: signals } = signals;
    // On the in-memory backend's stepped clock, every thread of the run takes turns on one CPU
    // and the clock moves only when all wait (`sim::control::stepping`); undone on return.
    let _stepping = match crate::sim::control::stepping::Stepping::start(&backend.clock()) {
        Ok(s) => s,
        Err(e) => {
            unregister(signals);
            return Err(SetupError::At {
                path: std::path::PathBuf::from("(the stepped clock's thread)"),
                source: Box::new(e),
            });
        }
    };
    let run = match setup::build(plan, backend, sink, Stop::with_signal(flag)) {
        Ok(run) => run,
        Err(e) => {
            unregister(signals);
            return Err(e);
        }
    };
    let started = crate::clock::now();
    let result = run::run_cycles(&run);
    let clean =
        !run.controls.stop.run_stopped() || run.controls.stop.reason() == StopReason::Signal;
    journaling::shutdown(&run, clean);
    unregister(signals);
    let metas = file_metas(&run);
    let mut summary = result.stats.summary(&metas, crate::clock::since(started));
    add_depth(&run, &mut summary);
    summary.journal = journaling::summary(&run);
    for f in &summary.files {
        for line in file_summary_lines(f) {
            run.message(
                Severity::Info,
                "Display Monitor",
                SQLIOSIM_SUMMARY_FUNC,
                line,
            );
        }
    }
    for f in &run.files {
        let text = format!("Closing file {}", f.path.display());
        run.message(Severity::Info, "Display Monitor", "Files::Close", text);
    }
    let planned = (run.plan.cycles > 0).then(|| run.plan.cycle_duration * run.plan.cycles);
    let when =
        crate::sim::control::stop::StopWhen::of(&run.controls.stop, run.reporting.start, planned);
    let long = run.controls.io_ages.long_total();
    if long > 0 {
        let text =
            format!("{long} I/O requests were outstanding for more than 15 sec. during the run");
        let m = Message::new(Severity::Warning, "Display Monitor", "CheckForLongIO", text);
        run.send(m.with_errno(0));
    }
    run.reporting
        .sink
        .emit(Event::Summary(Box::new(summary.clone())));
    if run.plan.delete_at_shutdown {
        journaling::remove(&run);
        for f in &run.files {
            let _ = backend.remove(&f.path);
        }
    }
    Ok(SimOutcome {
        summary,
        findings: result.findings,
        cycles: result.cycles,
        stopped: run.controls.stop.reason(),
        stop: when,
        worker_panicked: result.worker_panicked,
        run_id: run.files.run_id,
        environment: run.reporting.env.outcome(),
        no_space: run.reporting.env.no_space(),
    })
}

/// Reads a data file's generation ceiling from its header (a log file has none); returns what
/// the header records (0: none).
/// Both a new set (`setup`) and a resumed one (`resume`) need it.
fn attach_ceiling(f: &mut crate::sim::engine::files::SimFile) -> Result<u64, SetupError> {
    if f.role != crate::page::FileRole::Data {
        return Ok(0);
    }
    let (c, on_disk) =
        crate::sim::engine::ceiling::Ceiling::open(Arc::clone(&f.storage)).map_err(|source| {
            SetupError::os(
                f.path.clone(),
                "cannot read the header page (offset 0, 8192 bytes)",
                source,
            )
        })?;
    f.ceiling = Some(c);
    Ok(on_disk)
}

/// What the summary says of each file beyond its counters: the throttle's target and running
/// average now, whether it was asked for as sparse (the attribute), and its size and what the
/// filesystem holds for it now.
fn file_metas(run: &Run<'_>) -> Vec<FileMeta> {
    run.files
        .iter()
        .enumerate()
        .map(|(i, f)| FileMeta {
            path: f.path.clone(),
            target_io_duration_ms: run.controls.throttles[i].target_ms(),
            running_avg_io_ms: Some(run.controls.throttles[i].running_average_ms()),
            sparse: run.plan.files[i].sparse,
            space: f.storage.allocated().and_then(|allocated_bytes| {
                Some(crate::stats::FileSpace {
                    size_bytes: f.storage.len().ok()?,
                    allocated_bytes,
                })
            }),
            // A file in memory (the faulty backend) has no disk under it.
            drive: f
                .storage
                .allocated()
                .and_then(|_| crate::io::sysfs::drive_of(&f.path))
                .map(drive_level),
        })
        .collect()
}

/// SQLIOSim's DRIVE LEVEL figures out of what sysfs says of the disk.
fn drive_level(d: crate::io::sysfs::Drive) -> crate::stats::DriveLevel {
    let field = |i: usize| d.stat.get(i).copied();
    let counters = (d.stat.len() >= 11).then(|| crate::stats::DriveCounters {
        reads: field(0).unwrap_or(0),
        read_ms: field(3).unwrap_or(0),
        writes: field(4).unwrap_or(0),
        write_ms: field(7).unwrap_or(0),
        bytes_read: field(2).unwrap_or(0).saturating_mul(512),
        bytes_written: field(6).unwrap_or(0).saturating_mul(512),
        busy_ms: field(9).unwrap_or(0),
    });
    crate::stats::DriveLevel {
        device: d.name,
        sector_size: d.logical,
        physical_sector_size: d.physical,
        write_cache: d.write_back,
        counters,
    }
}

/// The statistics of the run so far, from the workers' last flushes (`stats::board`), timed
/// from the run's start; no journal figures (those come at the end).
fn running_summary(run: &Run<'_>) -> Summary {
    let stats = run.reporting.board.snapshot();
    let mut summary = stats.summary(&file_metas(run), crate::clock::since(run.reporting.start));
    add_depth(run, &mut summary);
    summary
}

/// The depth the device saw: per file and for the run, over the run and per phase, and in the
/// timeline. "IO request blocks" is the per-file maximum.
fn add_depth(run: &Run<'_>, summary: &mut Summary) {
    for (f, t) in summary.files.iter_mut().zip(&run.controls.throttles) {
        let d = DepthSummary::of(t.depth());
        f.io_request_blocks = f.io_request_blocks.max(d.max);
        f.depth = Some(d);
    }
    summary.depth = Some(DepthSummary::of(&run.controls.depth));
    fill_depth_timeline(&run.controls.depth, &mut summary.timeline);
}

/// SIGINT and SIGTERM store their number in `flag`.
fn register_signals(flag: &Arc<std::sync::atomic::AtomicUsize>) -> Vec<signal_hook::SigId> {
    [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
        .into_iter()
        .filter_map(|sig| {
            signal_hook::flag::register_usize(sig, Arc::clone(flag), sig as usize).ok()
        })
        .collect()
}

fn unregister(ids: Vec<signal_hook::SigId>) {
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
}
