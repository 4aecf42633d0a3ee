//! Setting a run up: opening or creating every file (only over files that are ours), the
//! oracles, logs, buffer pool and throttles, assembled into the [`Run`] context; the journal is
//! opened by [`crate::sim::actors::journaling`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::events::EventSink;
use crate::findings::Severity;
use crate::io::{Backend, FlushGate, OpenOptions};
use crate::page::{FileRole, PAGE_SIZE};
use crate::sim::actors::context::{Controls, FileSet, LogFile, Reporting, Run};
use crate::sim::actors::journaling;
use crate::sim::control::depth::DepthGauge;
use crate::sim::control::io_ages::IoAges;
use crate::sim::control::stop::Stop;
use crate::sim::control::throttle::{Gate, Throttle};
use crate::sim::engine::files::{self, Prepare, SimFile};
use crate::sim::engine::pool::BufferPool;
use crate::sim::engine::setup::SetupError;
use crate::sim::engine::wal::Wal;
use crate::sim::plan::SimPlan;

/// Where the journal of a plan's file set is, and the journal a resume would carry on (kept
/// here for the app's callers).
pub use crate::sim::actors::journaling::{journal_path, resumable};

/// Frames per MB of MaxMemoryMB.
const FRAMES_PER_MB: u64 = 128;

/// Creates the files and everything the actors share.
pub fn build<'b>(
    plan: SimPlan,
    backend: &'b dyn Backend,
    sink: Arc<dyn EventSink>,
    stop: Stop,
) -> Result<Run<'b>, SetupError> {
    let (run_id, mut all) = if plan.resume {
        super::resume::open_files(&plan, backend)?
    } else {
        create_files(&plan, backend)?
    };
    for f in &mut all {
        // Forced flush syncs after every write-through write (the log once per group commit);
        // an O_DSYNC write is its own sync except where the stack drops its flush (FUSE).
        // The flushes go through one gate per file, shared by the writes they cover unless
        // ForcedFlushPerWrite asks for one each (issue #39).
        let flush = plan.forced_flush()
            || (plan.opens_dsync(f.role) && !backend.direct_io_info(&f.path).dsync_flushed());
        f.flush_gate =
            flush.then(|| Arc::new(FlushGate::new(Arc::clone(&f.storage), plan.flush_per_write)));
    }
    // The run's clock starts here: the depth gauges' timelines share it with the statistics.
    let start = crate::clock::now();
    // The run-wide gauge alone keeps the timeline's one-second buckets.
    let depth = Arc::new(DepthGauge::with_timeline(start));
    let gauges: Vec<Arc<DepthGauge>> = plan
        .files
        .iter()
        .map(|_| Arc::new(DepthGauge::new(start)))
        .collect();
    // Every name the run owns beside its set, by its rule (the manifest's): a planted link
    // or a file not of ours stops the run here, before it starts.
    check_beside(&plan, backend)?;
    let logs = open_logs(&plan, run_id, &all)?;
    let controls = controls(&plan, backend, stop, gauges, depth)?;
    let files = FileSet {
        run_id,
        all,
        data: plan.data_files(),
        logs,
        pool: match plan.sections.general.target_recovery_time_s {
            0 => BufferPool::new(pool_frames(&plan)),
            _ => BufferPool::new(pool_frames(&plan)).keeping_ages(),
        },
        snapshots: Default::default(),
    };
    let mut run = Run {
        plan,
        files,
        controls,
        journal: None,
        reporting: Reporting::new(sink, start),
        backend,
    };
    // Resuming: read what the old journal says before the new one replaces it.
    let prior = if run.plan.resume {
        journaling::prior(&run)?
    } else {
        None
    };
    run.journal = journaling::open(&run, prior.as_ref())?;
    if run.plan.resume {
        super::resume::restore(&run, prior.as_ref())?;
    }
    warn_direct_io(&run);
    warn_dsync(&run);
    Ok(run)
}

/// Checks each name of the manifest beside the set by its rule: a backup stream is opened as
/// the Backup User opens it (a stream this opening created is removed again; one that was
/// there is left as it was),
/// a file with a header must be ours or absent. Names replaced by a rename (the journal's)
/// are refused by the app before the run.
fn check_beside(plan: &SimPlan, backend: &dyn Backend) -> Result<(), SetupError> {
    use crate::sim::engine::manifest::Rule;
    for e in crate::sim::actors::table::manifest(plan).beside_the_set() {
        match e.rule {
            Rule::Stream { log } => {
                let existed = backend.exists(&e.path);
                let magic = crate::sim::engine::backup::magic_of(log);
                let storage = crate::sim::engine::backup::open_stream_of(
                    backend,
                    &e.path,
                    plan.direct,
                    plan.force,
                    magic,
                )
                .map_err(|detail| SetupError::Stream {
                    path: e.path.clone(),
                    detail,
                })?;
                // A name this opening created stays free until a backup finishes there: an
                // empty stream left by a run whose backup never finished would be met by
                // `restore` and `verify` as a file that is not a stream.
                if !existed && storage.is_empty().unwrap_or(false) {
                    drop(storage);
                    backend.remove(&e.path)?;
                }
            }
            Rule::Header => {
                // Its errors name the file.
                files::check_ownership(backend, &e.path, plan.force)?;
            }
            Rule::Replace => {}
        }
    }
    Ok(())
}

/// The write-ahead log of every log file.
fn open_logs(plan: &SimPlan, run_id: u64, all: &[SimFile]) -> Result<Vec<LogFile>, SetupError> {
    let mut logs = Vec::new();
    for &i in &plan.log_files() {
        let f = &all[i];
        let len = *f.pages.read() * PAGE_SIZE as u64;
        // The log's requests pass the file's throttle, whose permits count them in the file's
        // and the run's depth gauges (engine::logio).
        let wal = Wal::new(
            Arc::clone(&f.storage),
            run_id,
            i as u32,
            len,
            // A completed log write is taken as durable (no fdatasync of its own) where the
            // O_DSYNC write is the sync (FUA), and in mode None, which never syncs after a
            // write (the journal then hears of the log at sync points only); otherwise the
            // log is synced after each flush.
            plan.write_through && !f.flush_after_write(),
            f.sector_size,
        )
        .map_err(|e| SetupError::at(f.path.clone(), e))?;
        logs.push(LogFile { file: i, wal });
    }
    Ok(logs)
}

/// The run-time controls: the throttles over the files' gauges, the gate, the asynchronous
/// depth and its I/O frames, the in-flight table.
fn controls(
    plan: &SimPlan,
    backend: &dyn Backend,
    stop: Stop,
    gauges: Vec<Arc<DepthGauge>>,
    depth: Arc<DepthGauge>,
) -> Result<Controls, SetupError> {
    let users = user_threads(plan);
    let ceiling = async_depth(plan, backend);
    let io_frames = io_frames(plan, ceiling).map_err(|e| SetupError::Frames(e.to_string()))?;
    let scratch_gauge = Arc::new(DepthGauge::new(depth.started()));
    let throttles = gauges
        .into_iter()
        .map(|g| Throttle::new(plan.target_io, ceiling).with_depth(g, Arc::clone(&depth)))
        .collect();
    let scratch =
        Throttle::new(plan.target_io, ceiling).with_depth(scratch_gauge, Arc::clone(&depth));
    Ok(Controls {
        stop,
        // A service-backed backend queues what is beyond its depth (MaxOutstandingIO) itself;
        // a gate in front would only move the wait from its queue to the gate.
        gate: Gate::new(if backend.caps_outstanding_io() {
            0
        } else {
            plan.max_outstanding_io
        }),
        throttles,
        scratch,
        depth,
        // Every asynchronous request holds at least one frame; synchronous ones one each.
        io_ages: IoAges::new(users * 4 + 16 + io_frames.frames()),
        async_depth: ceiling,
        io_frames,
        burst: AtomicBool::new(false),
    })
}

/// Frames of the buffer pool: MaxMemoryMB's worth, but never more than the data files can
/// have pages.
fn pool_frames(plan: &SimPlan) -> usize {
    let data_pages: u64 = plan
        .data_files()
        .iter()
        .map(|&i| plan.files[i].max_pages)
        .sum();
    (plan.max_memory_mb * FRAMES_PER_MB).min(data_pages) as usize
}

/// Creates every file of the plan (over files that are ours, or with --force).
fn create_files(plan: &SimPlan, backend: &dyn Backend) -> Result<(u64, Vec<SimFile>), SetupError> {
    let run_id = plan.run_id.unwrap_or_else(|| rand::random::<u64>() | 1);
    let open = OpenOptions {
        create: true,
        direct: plan.direct,
        write_through: plan.open_dsync(),
    };
    let mut sim_files = Vec::with_capacity(plan.files.len());
    for (i, fp) in plan.files.iter().enumerate() {
        if plan.delete_at_startup {
            files::check_ownership(backend, &fp.path, plan.force)?;
            backend.remove(&fp.path)?;
        }
        let prep = Prepare {
            run_id,
            file_id: i as u32,
            role: fp.role,
            pages: fp.initial_pages,
            stamp: plan.stamp_files || fp.role == FileRole::Log,
            sparse: fp.sparse,
            force: plan.force,
            open: OpenOptions {
                write_through: plan.opens_dsync(fp.role),
                ..open
            },
            force_4k_log: plan.force_4k_log_io,
        };
        let storage = files::create(backend, &fp.path, &prep)?;
        let unit = files::created_unit(backend, storage.as_ref(), fp.role, prep.force_4k_log);
        let mut f = SimFile::new(
            i,
            fp.path.clone(),
            fp.role,
            storage,
            run_id,
            fp.initial_pages,
        )
        .with_max_pages(fp.max_pages)
        .with_recorded_sector(unit);
        super::attach_ceiling(&mut f)?;
        sim_files.push(f);
    }
    Ok((run_id, sim_files))
}

/// Threads a main phase runs (users plus the system actors).
pub fn user_threads(plan: &SimPlan) -> usize {
    crate::sim::actors::table::threads_in(plan, crate::sim::actors::table::CyclePhase::Main)
}

/// Most requests one asynchronous actor keeps in flight: MaxOutstandingIO, or with 0 the depth
/// of the backend's I/O service (its ceiling), or [`UNCAPPED_DEPTH`] for a backend without one.
pub fn async_depth(plan: &SimPlan, backend: &dyn Backend) -> usize {
    match plan.max_outstanding_io {
        0 => backend.depth().unwrap_or(UNCAPPED_DEPTH),
        n => n,
    }
}

/// The depth MaxOutstandingIO=0 stands for where no I/O service sets one (`sync`, the
/// in-memory faulty backend): the io_uring service's ceiling.
pub const UNCAPPED_DEPTH: usize = crate::io::IoService::UNCAPPED_DEPTH;

/// The I/O frame pool, the memory of the pages in flight: enough for the asynchronous depth's
/// worth of the largest request (at least 64 pages, at most 1,024), within MaxMemoryMB (SQL
/// Server's bound on pages in flight is its buffer pool), at most 65,536 frames (512 MB) and
/// at least twice the largest request. So MaxOutstandingIO counts requests, as its name says:
/// with two frames per request of the depth (before issue #24 §2) a depth of 256 held only 8
/// requests of 64 pages, and a run asking for 256 saw 34–36 in flight. Every frame is touched
/// now, so the run's memory does not grow when the depth is first reached.
fn io_frames(plan: &SimPlan, depth: usize) -> std::io::Result<Arc<crate::io::BufPool>> {
    let largest = [
        64,
        plan.bulk.max_pages,
        plan.read_ahead.max_pages,
        plan.audit.max_pages,
        if plan.backup.users > 0 {
            plan.backup.transfer_pages
        } else {
            0
        },
    ]
    .into_iter()
    .max()
    .unwrap_or(64)
    .clamp(64, 1024) as usize;
    let budget = (plan.max_memory_mb.saturating_mul(FRAMES_PER_MB)) as usize;
    let frames = depth
        .saturating_mul(largest)
        .min(65_536)
        .min(budget.max(2 * largest))
        .max(2 * largest);
    let pool = crate::io::BufPool::new(frames, PAGE_SIZE).map_err(|e| {
        let bytes = frames.saturating_mul(PAGE_SIZE);
        std::io::Error::new(
            e.kind(),
            format!("{bytes} bytes ({frames} frames of {PAGE_SIZE}): {e}"),
        )
    })?;
    if let Some(mut all) = pool.take_many(frames) {
        all.iter_mut().for_each(|f| f.fill(0));
    }
    Ok(pool)
}

/// Says, once per filesystem, where FUA mode's O_DSYNC writes are followed by an fdatasync
/// because the stack drops their flush (FUSE).
fn warn_dsync(run: &Run<'_>) {
    let mut seen = Vec::new();
    let plan = &run.plan;
    for f in run
        .files
        .iter()
        .filter(|f| plan.opens_dsync(f.role) && f.flush_after_write())
    {
        let fs = run.backend.direct_io_info(&f.path).filesystem;
        if seen.contains(&fs) {
            continue;
        }
        run.message(
            Severity::Warning,
            "System",
            "CheckDsync",
            format!(
                "{}: the {fs} filesystem gets no flush for an O_DSYNC write (the kernel sends it no fsync after an io_uring or libaio write, nor after any write to a direct_io file, only the O_DSYNC flag, which its daemon may ignore): WriteThrough writes are followed by an fdatasync here before they count as durable",
                f.path.display()
            ),
        );
        seen.push(fs);
    }
}

/// Warns when the filesystem accepts O_DIRECT without honouring it (tmpfs, btrfs, FUSE).
fn warn_direct_io(run: &Run<'_>) {
    if !run.plan.direct {
        return;
    }
    let mut seen = Vec::new();
    for f in &run.files {
        let info = run.backend.direct_io_info(&f.path);
        if !info.honoured && !seen.contains(&info.filesystem) {
            run.message(
                Severity::Warning,
                "System",
                "CheckDirectIo",
                format!(
                    "{}: the {} filesystem accepts O_DIRECT without honouring it (no STATX_DIOALIGN): reads may be served from memory, so media errors can go unseen",
                    f.path.display(),
                    info.filesystem
                ),
            );
            seen.push(info.filesystem);
        }
    }
}
