//! Setting a run up: opening or creating every file (only over files that are ours), the
//! oracles, logs, buffer pool and throttles.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use crate::actors::shared::{LogFile, Shared};
use crate::actors::sync::Journal;
use crate::control::depth::DepthGauge;
use crate::control::inflight::Inflight;
use crate::control::stop::Stop;
use crate::control::throttle::{Gate, Throttle};
use crate::engine::ceiling::Ceiling;
use crate::engine::files::{self, Prepare, SimFile};
use crate::engine::journal::{
    Ack, JournalFile, JournalOptions, JournalService, JournalState, JournalWriter, JOURNAL_NAME,
};
use crate::engine::pool::BufferPool;
use crate::engine::wal::{FlushHook, Wal};
use crate::events::{Event, EventSink};
use crate::findings::{Message, Severity};
use crate::io::{Backend, OpenOptions};
use crate::page::{FileRole, PAGE_SIZE};
use crate::plan::SimPlan;
use crate::stats::LiveCounters;

/// Frames per MB of MaxMemoryMB.
const FRAMES_PER_MB: u64 = 128;

/// Creates the files and everything the actors share.
pub fn build(
    plan: SimPlan,
    backend: &dyn Backend,
    sink: Arc<dyn EventSink>,
    stop: Stop,
) -> anyhow::Result<Shared> {
    let (run_id, mut sim_files) = if plan.resume {
        super::resume::open_files(&plan, backend)?
    } else {
        create_files(&plan, backend)?
    };
    for f in &mut sim_files {
        f.flush_after_dsync =
            plan.write_through && !backend.direct_io_info(&f.path).dsync_flushed();
    }
    // The run's clock starts here: the depth gauges' timelines share it with the statistics.
    let start = Instant::now();
    // The run-wide gauge alone keeps the timeline's one-second buckets.
    let depth = Arc::new(DepthGauge::with_timeline(start));
    let gauges: Vec<Arc<DepthGauge>> = plan
        .files
        .iter()
        .map(|_| Arc::new(DepthGauge::new(start)))
        .collect();
    let mut logs = Vec::new();
    for &i in &plan.log_files() {
        let f = &sim_files[i];
        let len = *f.pages.read() * PAGE_SIZE as u64;
        // The WAL issues the log's requests itself: count them in the file's gauge.
        let counted = super::counted::Counted::new(
            Arc::clone(&f.storage),
            Arc::clone(&gauges[i]),
            Arc::clone(&depth),
        );
        let wal = Wal::new(
            Arc::new(counted),
            run_id,
            i as u32,
            len,
            // Where the O_DSYNC write is not the sync, the log is synced after each flush.
            plan.write_through && !f.flush_after_dsync,
            f.sector_size,
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", f.path.display()))?;
        logs.push(LogFile { file: i, wal });
    }
    let users = user_threads(&plan);
    let ceiling = async_depth(&plan, backend);
    let io_frames = io_frames(&plan, ceiling).map_err(|e| {
        anyhow::anyhow!("cannot allocate the I/O frames for requests in flight: {e}; raise the memory limit (ulimit -v) or lower MaxOutstandingIO and MaxMemoryMB")
    })?;
    let throttles = gauges
        .into_iter()
        .map(|g| Throttle::new(plan.target_io, ceiling).with_depth(g, Arc::clone(&depth)))
        .collect();
    // The pool never needs more frames than the data files can have pages.
    let data_pages: u64 = plan
        .data_files()
        .iter()
        .map(|&i| plan.files[i].max_pages)
        .sum();
    let frames = (plan.max_memory_mb * FRAMES_PER_MB).min(data_pages) as usize;
    let data = plan.data_files();
    let shared = Shared {
        run_id,
        files: sim_files,
        data,
        logs,
        pool: BufferPool::new(frames),
        stop,
        // An engine-backed backend queues what is beyond its depth (MaxOutstandingIO) itself;
        // a gate in front would only move the wait from its queue to the gate.
        gate: Gate::new(if backend.caps_outstanding_io() {
            0
        } else {
            plan.max_outstanding_io
        }),
        throttles,
        depth,
        // Every asynchronous request holds at least one frame; synchronous ones one each.
        inflight: Inflight::new(users * 4 + 16 + io_frames.frames()),
        async_depth: ceiling,
        io_frames,
        live: Arc::new(LiveCounters::new()),
        sink,
        burst: AtomicBool::new(false),
        findings: AtomicU64::new(0),
        start,
        journal: None,
        triage: Default::default(),
        env: Default::default(),
        plan,
    };
    let mut shared = shared;
    // Resuming: read what the old journal says before the new one replaces it.
    let prior = if shared.plan.resume {
        super::resume::journal_of(&shared, backend)
    } else {
        None
    };
    shared.journal = start_journal(&shared, backend, prior.as_ref());
    if shared.plan.resume {
        super::resume::restore(&shared, prior.as_ref())?;
    }
    warn_direct_io(&shared, backend);
    warn_dsync(&shared, backend);
    Ok(shared)
}

/// Creates every file of the plan (over files that are ours, or with --force).
fn create_files(plan: &SimPlan, backend: &dyn Backend) -> anyhow::Result<(u64, Vec<SimFile>)> {
    let run_id = plan.run_id.unwrap_or_else(|| rand::random::<u64>() | 1);
    let open = OpenOptions {
        create: true,
        direct: plan.direct,
        write_through: plan.write_through,
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
            open,
        };
        let storage = files::create(backend, &fp.path, &prep)?;
        let mut f = SimFile::new(
            i,
            fp.path.clone(),
            fp.role,
            storage,
            run_id,
            fp.initial_pages,
        )
        .with_max_pages(fp.max_pages);
        attach_ceiling(&mut f)?;
        sim_files.push(f);
    }
    Ok((run_id, sim_files))
}

/// Where the journal of a plan's file set is: in `--journal-dir`, else beside the first data
/// file.
pub fn journal_path(plan: &SimPlan) -> Option<PathBuf> {
    let first = plan.data_files().first().map(|&i| &plan.files[i])?;
    let dir = match &plan.journal_dir {
        Some(d) => d.clone(),
        None => first.path.parent()?.to_path_buf(),
    };
    Some(dir.join(JOURNAL_NAME))
}

/// Reads a data file's generation ceiling from its header (a log file has none); returns what
/// the header records (0: none).
pub fn attach_ceiling(f: &mut SimFile) -> anyhow::Result<u64> {
    if f.role != FileRole::Data {
        return Ok(0);
    }
    let (c, on_disk) = Ceiling::open(Arc::clone(&f.storage)).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot read the header page (offset 0, 8192 bytes): {e}",
            f.path.display()
        )
    })?;
    f.ceiling = Some(c);
    Ok(on_disk)
}

/// The most pages `f` can have during the run, which the journal records so that a page
/// beyond it is known as damage: its MaxSize, or its size now when larger (a resumed file or a
/// block device).
fn largest_size(sh: &Shared, f: &crate::engine::files::SimFile) -> u64 {
    let plan = &sh.plan.files[f.index];
    let now = f.storage.len().unwrap_or(0).div_ceil(PAGE_SIZE as u64);
    plan.max_pages.max(plan.initial_pages).max(now).max(1)
}

/// Creates the journal through the backend (so the faulty one reaches it too) and starts its
/// thread (a warning when it cannot be written). A resumed run's journal begins with what
/// `prior`, the old journal, held (see [`JournalState::carried_over`]).
fn start_journal(
    sh: &Shared,
    backend: &dyn Backend,
    prior: Option<&JournalState>,
) -> crate::actors::sync::JournalSlot {
    if !sh.plan.journal {
        return None;
    }
    let path = journal_path(&sh.plan)?;
    let files: Vec<JournalFile> = sh
        .files
        .iter()
        .map(|f| JournalFile {
            file_id: f.index as u32,
            role: f.role,
            path: f.path.clone(),
            max_pages: Some(largest_size(sh, f)),
        })
        .collect();
    let state = match prior {
        Some(p) => JournalState::carried_over(p, sh.run_id, files),
        None => JournalState::started(sh.run_id, files),
    };
    let sink = Arc::clone(&sh.sink);
    let warn = Box::new(move |text: &str| {
        sink.emit(Event::Message(Message::new(
            Severity::Warning,
            "System",
            "Journal",
            text,
        )));
    });
    let started = JournalWriter::create(backend, &path, &state.snapshot())
        .map_err(|e| e.to_string())
        .and_then(|w| {
            JournalService::start(w, state, journal_options(), warn)
                .map_err(|e| format!("{}: cannot start the journal thread: {e}", path.display()))
        });
    match started {
        Ok(service) => {
            for log in &sh.logs {
                let tx = service.sender();
                let file_id = log.file as u32;
                log.wal
                    .on_flush(FlushHook(Box::new(move |last_block, durable_end| {
                        let _ = tx.send(Ack::Log {
                            file_id,
                            last_block,
                            durable_end,
                        });
                    })));
            }
            say_where_the_journal_is(sh, &path);
            Some(Journal::new(service))
        }
        Err(e) => {
            sh.message(
                Severity::Warning,
                "System",
                "Journal",
                format!(
                    "cannot create the journal: {e}; the durability check is void for this run (verify can judge pages only by what they say about themselves)"
                ),
            );
            None
        }
    }
}

/// Batching and compaction, with two hidden knobs for tests: SQLIOSIM_JOURNAL_BATCH_MS and
/// SQLIOSIM_JOURNAL_COMPACT_BYTES (compaction threshold, to make compactions frequent).
fn journal_options() -> JournalOptions {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut o = JournalOptions::default();
    if let Some(ms) = env("SQLIOSIM_JOURNAL_BATCH_MS") {
        o.interval = std::time::Duration::from_millis(ms.max(1));
    }
    if let Some(b) = env("SQLIOSIM_JOURNAL_COMPACT_BYTES") {
        o.compact_min_bytes = b;
    }
    o
}

/// Names the journal in the run header, and warns when it shares a device with the data.
fn say_where_the_journal_is(sh: &Shared, path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).ok().map(|m| m.dev());
    let journal_dev = path.parent().and_then(dev);
    let shared = sh
        .files
        .iter()
        .any(|f| journal_dev.is_some() && dev(&f.path) == journal_dev);
    sh.message(
        Severity::Info,
        "System",
        "Journal",
        format!("Journal: {}", path.display()),
    );
    if shared {
        sh.message(
            Severity::Warning,
            "System",
            "Journal",
            if sh.plan.journal_dir.is_some() {
                "journal on the device under test (the --journal-dir is on the same device as a test file): a device that loses it weakens the check; choose a directory on another device"
            } else {
                "journal on the device under test: a device that loses it weakens the check; use --journal-dir"
            },
        );
    }
}

/// Threads a main phase runs (users plus the system actors).
pub fn user_threads(plan: &SimPlan) -> usize {
    plan.random.users + plan.audit.users + plan.read_ahead.users + plan.bulk.users + 4
}

/// Most requests one asynchronous actor keeps in flight: MaxOutstandingIO, or with 0 the depth
/// of the backend's engine (its ceiling), or [`UNCAPPED_DEPTH`] for a backend without one.
pub fn async_depth(plan: &SimPlan, backend: &dyn Backend) -> usize {
    match plan.max_outstanding_io {
        0 => backend.depth().unwrap_or(UNCAPPED_DEPTH),
        n => n,
    }
}

/// The depth MaxOutstandingIO=0 stands for where no engine sets one (the `sync` engine, the
/// in-memory faulty backend): the io_uring engine's ceiling.
pub const UNCAPPED_DEPTH: usize = crate::io::IoService::UNCAPPED_DEPTH;

/// The I/O frame pool: two page frames per request of the asynchronous depth, at least twice
/// the largest request (1,024 pages) and at most 65,536 frames (512 MB), within MaxMemoryMB
/// where that is larger than the floor. Every frame is touched now, so the run's memory does
/// not grow when the depth is first reached.
fn io_frames(plan: &SimPlan, depth: usize) -> std::io::Result<Arc<crate::io::BufPool>> {
    let largest = [
        64,
        plan.bulk.max_pages,
        plan.read_ahead.max_pages,
        plan.audit.max_pages,
    ]
    .into_iter()
    .max()
    .unwrap_or(64)
    .clamp(64, 1024) as usize;
    let budget = (plan.max_memory_mb.saturating_mul(FRAMES_PER_MB)) as usize;
    let frames = depth
        .saturating_mul(2)
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

/// Says, once per filesystem, where WriteThrough's O_DSYNC writes are followed by an
/// fdatasync because the stack drops their flush (FUSE).
fn warn_dsync(sh: &Shared, backend: &dyn Backend) {
    let mut seen = Vec::new();
    for f in sh.files.iter().filter(|f| f.flush_after_dsync) {
        let fs = backend.direct_io_info(&f.path).filesystem;
        if seen.contains(&fs) {
            continue;
        }
        sh.message(
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
fn warn_direct_io(sh: &Shared, backend: &dyn Backend) {
    if !sh.plan.direct {
        return;
    }
    let mut seen = Vec::new();
    for f in &sh.files {
        let info = backend.direct_io_info(&f.path);
        if !info.honoured && !seen.contains(&info.filesystem) {
            sh.message(
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
