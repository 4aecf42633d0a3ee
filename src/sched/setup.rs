//! Setting a run up: opening or creating every file (only over files that are ours), the
//! oracles, logs, buffer pool and throttles.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use crate::actors::shared::{LogFile, Shared};
use crate::engine::files::{self, Prepare, SimFile};
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
pub fn build(plan: SimPlan, backend: &dyn Backend, sink: Arc<dyn EventSink>) -> anyhow::Result<Shared> {
    let run_id = rand::random::<u64>() | 1;
    let open = OpenOptions { create: true, direct: plan.direct, write_through: plan.write_through };
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
        sim_files.push(SimFile::new(i, fp.path.clone(), fp.role, storage, run_id, fp.initial_pages));
    }
    let mut logs = Vec::new();
    for &i in &plan.log_files() {
        let f = &sim_files[i];
        let len = fp_len(&plan, i);
        let wal = Wal::new(Arc::clone(&f.storage), run_id, i as u32, len, plan.write_through)
            .map_err(|e| anyhow::anyhow!("{}: {e}", f.path.display()))?;
        logs.push(LogFile { file: i, wal });
    }
    let users = user_threads(&plan);
    let ceiling = if plan.max_outstanding_io == 0 { users.max(1) } else { plan.max_outstanding_io };
    let throttles = plan.files.iter().map(|_| Throttle::new(plan.target_io, ceiling)).collect();
    let frames = (plan.max_memory_mb * FRAMES_PER_MB) as usize;
    let data = plan.data_files();
    let shared = Shared {
        run_id,
        files: sim_files,
        data,
        logs,
        pool: BufferPool::new(frames),
        stop: Stop::new(),
        gate: Gate::new(plan.max_outstanding_io),
        throttles,
        inflight: Inflight::new(users * 4 + 16),
        live: Arc::new(LiveCounters::new()),
        sink,
        burst: AtomicBool::new(false),
        findings: AtomicU64::new(0),
        start: Instant::now(),
        plan,
    };
    warn_direct_io(&shared, backend);
    Ok(shared)
}

fn fp_len(plan: &SimPlan, i: usize) -> u64 {
    plan.files[i].initial_pages * PAGE_SIZE as u64
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
