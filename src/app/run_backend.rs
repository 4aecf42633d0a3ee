//! Which storage backend a run uses, and what carries its I/O: the disk through the
//! `--engine` asked for (io_uring, kernel AIO, psync helper threads, or each thread's own
//! pread/pwrite), or,
//! with the hidden `--fault-injection SPEC`, files in memory that misbehave as SPEC says.
//! Split from `simrun.rs`, which wires the run together.
//!
//! When io_uring would carry a direct-I/O run, the engine probe (`io::aio::probe`, issue #24
//! §3) first reads the first data file at queue depth 1 through io_uring and psync for at
//! most 2 × 100 ms: where io_uring adds latency (a RAM-backed device), psync carries the run
//! unless `--engine` named io_uring, in which case the header only recommends psync.
//!
//! Unless `--engine` names one engine for everything, each kind of actor's I/O goes the way
//! that adds least latency (issue #39): the posted (asynchronous) requests through the service
//! on the engine the probe chose, which keeps them deep, and a synchronous actor's own reads
//! and writes (RandomUser, the audit's, the log's scans) on its own thread, which hands
//! nothing off ([`ServiceBackend::with_own_sync`]). The hand-off to the service thread and
//! back cost RandomUser's reads 10 µs at the median on ext4 over zram (17–19 against 7–8 µs)
//! and 20–30 µs on the virtio disk (docs/performance.md, "The I/O service kinds"), and no
//! engine takes it away: it is the hand-off, not the ring.

use crate::config::{IoServiceKind, RunSettings};
use crate::io::aio::{probe, RingKind};
use crate::io::{
    Backend, BufferedBackend, DirectBackend, FaultyBackend, IoService, ServiceBackend,
};
use crate::report::IoServiceInfo;
use crate::sim::plan::SimPlan;

/// The backend of a run, with what carries its I/O.
pub(super) struct Chosen {
    pub(super) backend: Box<dyn Backend>,
    /// The fault-injection backend, to ask afterwards which faults never fired.
    pub(super) faulty: Option<FaultyBackend>,
    pub(super) io_service: IoServiceInfo,
}

/// The disk (direct or buffered I/O) through the `--engine` asked for, or, with the hidden
/// `--fault-injection SPEC`, files in memory that misbehave as SPEC says (see `faults.rs`).
pub(super) fn choose_backend(settings: &RunSettings, plan: &SimPlan) -> anyhow::Result<Chosen> {
    let mut io_service = IoServiceInfo {
        requested: settings.io_service.name().into(),
        used: settings.io_service.name().into(),
        depth: None,
        max_outstanding_io: plan.max_outstanding_io as u64,
        own_rings: false,
        ..IoServiceInfo::default()
    };
    if let Some(spec) = &settings.fault_injection {
        let spec = super::faults::FaultSpec::parse(spec)?;
        let backend = FaultyBackend::new(plan.seed);
        spec.arm(&backend, plan);
        io_service.used = "memory".into();
        return Ok(Chosen {
            backend: Box::new(backend.clone()),
            faulty: Some(backend),
            io_service,
        });
    }
    let engine = choose_engine(settings, plan, &mut io_service);
    let kind = match engine {
        IoServiceKind::Uring => RingKind::Uring,
        IoServiceKind::Psync => RingKind::Psync,
        IoServiceKind::Kaio => RingKind::Kaio,
        IoServiceKind::Sync => {
            let disk: Box<dyn Backend> = if plan.direct {
                Box::new(DirectBackend::new())
            } else {
                Box::new(BufferedBackend::new())
            };
            return Ok(Chosen {
                backend: disk,
                faulty: None,
                io_service,
            });
        }
    };
    let depth = service_depth(plan, kind);
    let backend = ServiceBackend::start(kind, depth, !plan.direct)
        .map_err(|e| anyhow::anyhow!("cannot start the {} I/O engine: {e}", kind.name()))?
        .with_own_rings(own_rings_wanted())
        .with_own_sync(!settings.io_service_named);
    // IOAffinity: the I/O service thread, pinned by its id (a mask naming no usable CPU is
    // warned about in the header and pins nothing).
    if let Some(tid) = backend.service().thread_id() {
        crate::sim::control::affinity::pin(Some(tid), plan.io_affinity)
            .map_err(|e| anyhow::anyhow!("cannot apply IOAffinity to the I/O service: {e}"))?;
    }
    io_service.used = backend.service().kind().name().into();
    io_service.depth = Some(depth as u64);
    io_service.own_rings = backend.own_rings();
    io_service.own_sync = backend.own_sync();
    Ok(Chosen {
        backend: Box::new(backend),
        faulty: None,
        io_service,
    })
}

/// The engine for the run and why (in `info`): the one named by `--engine`, else the default
/// io_uring, or psync when the engine probe finds io_uring adding latency on the first data
/// file's device. The probe runs only when io_uring would carry direct I/O.
fn choose_engine(
    settings: &RunSettings,
    plan: &SimPlan,
    info: &mut IoServiceInfo,
) -> IoServiceKind {
    let first = plan.data_files().first().map(|&i| &plan.files[i].path);
    let measured = match first {
        Some(path) if settings.io_service == IoServiceKind::Uring && plan.direct => {
            Some(probe::measure_at(path))
        }
        _ => None,
    };
    // The engine carries the posted requests, which the asynchronous actors keep deep; the
    // synchronous actors' own reads and writes never reach it (`with_own_sync`).
    let d = probe::decide(
        RingKind::Uring,
        settings.io_service_named,
        probe::Queue::Deep,
        measured,
    );
    info.chosen = d.chosen.into();
    info.probe = d.probe;
    info.recommended = d.recommended.map(|k| k.name().into());
    match d.kind {
        RingKind::Psync if d.chosen == "measured" => IoServiceKind::Psync,
        _ => settings.io_service,
    }
}

/// Whether the asynchronous actors submit to io_uring rings of their own (issue #15 §3): only
/// when the environment has `SQLIOSIM_OWN_RINGS=1`. Off by default: on 2 vCPUs the checkpoint
/// flushed no faster that way (docs/performance.md, "Request hand-off"), so every
/// request stays on the shared I/O service until a machine with more cores says otherwise.
fn own_rings_wanted() -> bool {
    std::env::var_os("SQLIOSIM_OWN_RINGS").is_some_and(|v| v == "1")
}

/// The I/O service's depth: MaxOutstandingIO (at most [`IoService::MAX_DEPTH`]), or with 0 the
/// ring's ceiling: [`IoService::UNCAPPED_DEPTH`] for io_uring, the smaller
/// [`IoService::UNCAPPED_PSYNC_DEPTH`] for psync (a helper thread per request in flight).
fn service_depth(plan: &SimPlan, kind: RingKind) -> usize {
    match (plan.max_outstanding_io, kind) {
        (0, RingKind::Psync) => IoService::UNCAPPED_PSYNC_DEPTH,
        (0, _) => IoService::UNCAPPED_DEPTH,
        (n, _) => n.min(IoService::MAX_DEPTH),
    }
}
