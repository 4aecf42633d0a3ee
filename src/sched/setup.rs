//! Setting a run up: opening or creating every file (only over files that are ours), the
//! oracles, logs, buffer pool and throttles.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use crate::actors::shared::{LogFile, Shared};
use crate::actors::sync::Journal;
use crate::engine::files::{self, Prepare, SimFile};
use crate::engine::journal::{JournalFile, JournalWriter, JOURNAL_NAME};
use crate::engine::pool::BufferPool;
use crate::engine::wal::Wal;
use crate::findings::{EventSink, Severity};
use crate::io::{Backend, OpenOptions};
use crate::page::{FileRole, PAGE_SIZE};
use crate::sched::inflight::Inflight;
use crate::sched::plan::SimPlan;
use crate::sched::stop::Stop;
use crate::sched::throttle::{Gate, Throttle};
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
    let (run_id, sim_files) = if plan.resume {
        super::resume::open_files(&plan, backend)?
    } else {
        create_files(&plan, backend)?
    };
    let mut logs = Vec::new();
    for &i in &plan.log_files() {
        let f = &sim_files[i];
        let len = *f.pages.read() * PAGE_SIZE as u64;
        let wal = Wal::new(
            Arc::clone(&f.storage),
            run_id,
            i as u32,
            len,
            plan.write_through,
            f.sector_size,
        )
        .map_err(|e| anyhow::anyhow!("{}: {e}", f.path.display()))?;
        logs.push(LogFile { file: i, wal });
    }
    let users = user_threads(&plan);
    let ceiling = if plan.max_outstanding_io == 0 {
        users.max(1)
    } else {
        plan.max_outstanding_io
    };
    let throttles = plan
        .files
        .iter()
        .map(|_| Throttle::new(plan.target_io, ceiling))
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
        inflight: Inflight::new(users * 4 + 16),
        live: Arc::new(LiveCounters::new()),
        sink,
        burst: AtomicBool::new(false),
        findings: AtomicU64::new(0),
        start: Instant::now(),
        journal: None,
        triage: Default::default(),
        plan,
    };
    let mut shared = shared;
    // Resuming: read what the old journal says before the new one replaces it.
    let prior = if shared.plan.resume {
        super::resume::journal_of(&shared)
    } else {
        None
    };
    shared.journal = start_journal(&shared);
    if shared.plan.resume {
        super::resume::restore(&shared, prior.as_ref())?;
    }
    warn_direct_io(&shared, backend);
    Ok(shared)
}

/// Creates every file of the plan (over files that are ours, or with --force).
fn create_files(plan: &SimPlan, backend: &dyn Backend) -> anyhow::Result<(u64, Vec<SimFile>)> {
    let run_id = rand::random::<u64>() | 1;
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
        sim_files.push(SimFile::new(
            i,
            fp.path.clone(),
            fp.role,
            storage,
            run_id,
            fp.initial_pages,
        ));
    }
    Ok((run_id, sim_files))
}

/// Creates the journal beside the first data file (a warning when it cannot be written).
fn start_journal(sh: &Shared) -> crate::actors::sync::JournalSlot {
    if !sh.plan.journal {
        return None;
    }
    let first = sh.data.first().map(|&i| &sh.files[i])?;
    let path = first.path.parent()?.join(JOURNAL_NAME);
    let files = sh
        .files
        .iter()
        .map(|f| JournalFile {
            file_id: f.index as u32,
            role: f.role,
            path: f.path.clone(),
        })
        .collect();
    match JournalWriter::create(&path, sh.run_id, files) {
        Ok(w) => Some(parking_lot::Mutex::new(Journal::new(w, sh.files.len()))),
        Err(e) => {
            sh.message(
                Severity::Warning,
                "System",
                "Journal",
                format!(
                    "cannot create the journal {}: {e}; crash verification will lack it",
                    path.display()
                ),
            );
            None
        }
    }
}

/// Threads a main phase runs (users plus the system actors).
pub fn user_threads(plan: &SimPlan) -> usize {
    plan.random.users + plan.audit.users + plan.read_ahead.users + plan.bulk.users + 4
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
