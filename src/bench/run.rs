//! Runs one job: prepares and opens the files, starts one worker per thread behind a barrier,
//! times the warm-up / measured / cool-down phases, samples CPU at the window's edges, and
//! merges the per-thread statistics once every worker has drained.

use super::cpu::{CpuSample, CpuUsage};
use super::error::BenchError;
use super::exposure::{self, DirectIo};
use super::inuse::{self, Claim};
use super::job::Job;
use super::latency::BenchStats;
use super::rendezvous::Rendezvous;
use super::target::{self, OpenMode};
use super::worker::{Assignment, BenchWorker, Phases};
use crate::io::aio::{probe, RingKind};
use crate::io::file::FileStorage;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Facts about one test file, stated with every result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TargetInfo {
    /// Path as given.
    pub path: String,
    /// File size in bytes.
    pub size: u64,
    /// Direct-I/O facts.
    pub direct_io: DirectIo,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The job that ran.
    pub job: Job,
    /// The ring kind used (psync if any worker fell back).
    pub ring_kind: RingKind,
    /// Files and their direct-I/O facts.
    pub targets: Vec<TargetInfo>,
    /// Warnings (direct I/O not honoured, file smaller than RAM, interruption).
    pub warnings: Vec<String>,
    /// Seconds actually measured (shorter when interrupted).
    pub measured_s: f64,
    /// Ctrl-C (or a stop request) ended the run early.
    pub interrupted: bool,
    /// CPU used during the measured window.
    pub cpu: CpuUsage,
    /// Per-thread statistics, in thread order.
    pub threads: Vec<BenchStats>,
    /// All threads merged.
    pub total: BenchStats,
}

/// Open files (shared by every ring), their stamp seeds, their facts, and the exclusive
/// claims on the devices written, held until the run ends.
type Opened = (Arc<[FileStorage]>, Vec<u64>, Vec<TargetInfo>, Vec<Claim>);

fn open_targets(job: &Job, stop: &AtomicBool) -> Result<Opened, BenchError> {
    let mut files = Vec::new();
    let mut seeds = Vec::new();
    let mut infos = Vec::new();
    let mut claims = Vec::new();
    let write = job.read_pct < 100;
    for t in &job.targets {
        // Only a run that reads without checking stamps never writes (a --verify run may
        // fill the device first): every other run claims a device before touching it, and
        // each later open must reach the device claimed (or, for a file, no device at all).
        let claimed = write || job.verify || job.force;
        let device = if claimed {
            if let Some(device) = inuse::device_behind_link(&t.path) {
                return Err(BenchError::DeviceThroughLink {
                    link: t.path.clone(),
                    device,
                });
            }
            let claim = inuse::claim(&t.path).map_err(|what| BenchError::DeviceInUse {
                path: t.path.clone(),
                what,
            })?;
            let rdev = claim.as_ref().map(|c| c.rdev);
            claims.extend(claim);
            rdev
        } else {
            target::device_number(&t.path)
        };
        let access = target::Access {
            force: job.force,
            direct: job.direct,
            write,
            verify: job.verify,
            unstamped_writes: write && !job.stamps_writes(),
            device,
        };
        let p = target::prepare(&t.path, t.size, access, stop)?;
        let mode = OpenMode {
            direct: job.direct,
            dsync: job.write_through,
            write,
        };
        let f = target::open(&t.path, mode, device)?;
        let direct_io = exposure::probe(f.file(), job.direct);
        infos.push(TargetInfo {
            path: t.path.display().to_string(),
            size: t.size.min(p.size),
            direct_io,
        });
        seeds.push(p.seed);
        files.push(f);
    }
    Ok((Arc::from(files), seeds, infos, claims))
}

/// Sleeps until `when` or until `stop` is raised; returns false when stopped.
fn sleep_until(when: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= when {
            return true;
        }
        std::thread::sleep((when - now).min(Duration::from_millis(20)));
    }
}

/// Runs `job` to its end, or until `stop` is raised (then reports what was measured).
pub fn run(job: &Job, stop: &AtomicBool) -> Result<RunResult, BenchError> {
    job.validate()?;
    super::direct_unit::check(job)?;
    let (files, seeds, infos, _claims) = open_targets(job, stop)?;
    let job = &settle_engine(job, &files, &infos);
    let n = job.threads() as usize;
    let gate = Gate {
        ready: Rendezvous::new(n + 1),
        go: Rendezvous::new(n + 1),
        phases: OnceLock::new(),
    };
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for thread in 0..n {
            let per = job.threads_per_target as usize;
            let file = thread / per;
            let at = Assignment {
                thread,
                file: file as u32,
                rank: (thread % per) as u32,
                file_seed: seeds[file],
                file_size: infos[file].size,
            };
            let (files, gate) = (files.clone(), &gate);
            let started = std::thread::Builder::new()
                .name(format!("bench-{thread}"))
                .spawn_scoped(s, move || work(job, at, files, gate, stop));
            match started {
                Ok(h) => handles.push(h),
                Err(cause) => {
                    // The ones started wait at the start line: release them, then join them.
                    gate.ready.call_off();
                    gate.go.call_off();
                    handles.into_iter().for_each(|h| drop(h.join()));
                    return Err(BenchError::NoThread { thread, cause });
                }
            }
        }
        gate.ready.wait();
        let p = *gate.phases.get_or_init(|| Phases::starting_now(job));
        gate.go.wait();
        let (measured_s, cpu, interrupted) = time_window(&p, stop);
        let outcomes = handles
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                h.join()
                    .map_err(|_| BenchError::WorkerPanicked(i))
                    .and_then(|r| r)
            })
            .collect();
        assemble(job, infos, outcomes, measured_s, cpu, interrupted)
    })
}

/// The engine of this run and why (issue #24 §3, #39): as already settled (by an earlier run
/// of the sweep at the same kind of queue, or by a front end that states nothing), else the
/// engine probe's measurement on the first target when io_uring would carry direct I/O. An
/// io_uring left to the default gives way to psync by `probe::pick`'s rule for the run's
/// queue: at one request per thread whenever io_uring is not measurably faster (psync is then
/// a pread on the worker's own thread, as fio's psync; on zram 1–1.4 µs against io_uring's
/// 3–9 µs), deeper only where io_uring adds latency grossly (a read going to the kernel's
/// worker pool, 50–60 µs against 1–3 µs). A named one is kept and psync recommended. (The bench once
/// only recommended: a verifying sweep the probe had switched to psync failed now and then
/// with a torn stamp. The cause was two of a worker's requests in flight on one block, which
/// psync's helpers run at once; `lane` keeps them apart.)
fn settle_engine(job: &Job, files: &Arc<[FileStorage]>, infos: &[TargetInfo]) -> Job {
    if !job.engine_probe || job.engine_why.is_some() {
        return job.clone();
    }
    let measured = (job.ring_kind == RingKind::Uring && job.direct && !infos.is_empty())
        .then(|| probe::measure_files(files, infos[0].size));
    let queue = probe::Queue::of(job.depth);
    let d = probe::decide(job.ring_kind, job.engine_named, queue, measured);
    let why = crate::report::facts::io_service::engine_reason(
        d.chosen,
        d.probe.as_deref(),
        d.recommended.map(RingKind::name),
    );
    Job {
        ring_kind: d.kind,
        engine_why: Some(why),
        ..job.clone()
    }
}

/// Start line of a run: every worker builds its ring, then all start together.
struct Gate {
    ready: Rendezvous,
    go: Rendezvous,
    phases: OnceLock<Phases>,
}

/// One worker thread: build the ring, pass both barriers whatever happens (so a failed
/// ring cannot leave the others waiting), then run; or return when the start is called off.
fn work(
    job: &Job,
    at: Assignment,
    files: Arc<[FileStorage]>,
    gate: &Gate,
    stop: &AtomicBool,
) -> Result<(BenchStats, RingKind), BenchError> {
    let thread = at.thread;
    let worker = BenchWorker::new(job, at, files);
    if !gate.ready.wait() || !gate.go.wait() {
        return Err(BenchError::Refused(
            "called off: a worker thread could not start".into(),
        ));
    }
    let w = worker?;
    let kind = w.ring_kind();
    let p = gate
        .phases
        .get()
        .copied()
        .ok_or(BenchError::WorkerPanicked(thread))?;
    w.run(&p, stop).map(|st| (st, kind))
}

/// Samples CPU at the edges of the measured window; returns (seconds measured, CPU, stopped).
fn time_window(p: &Phases, stop: &AtomicBool) -> (f64, CpuUsage, bool) {
    if !sleep_until(p.measure_start, stop) {
        return (0.0, CpuUsage::default(), true);
    }
    let before = CpuSample::now();
    let completed = sleep_until(p.measure_end, stop);
    let after = CpuSample::now();
    let end = if completed {
        p.measure_end
    } else {
        Instant::now().min(p.measure_end)
    };
    let measured = end.saturating_duration_since(p.measure_start).as_secs_f64();
    let interrupted = !completed || !sleep_until(p.end, stop);
    (measured, before.usage_until(&after), interrupted)
}

fn assemble(
    job: &Job,
    targets: Vec<TargetInfo>,
    outcomes: Vec<Result<(BenchStats, RingKind), BenchError>>,
    measured_s: f64,
    cpu: CpuUsage,
    interrupted: bool,
) -> Result<RunResult, BenchError> {
    let mut threads = Vec::with_capacity(outcomes.len());
    let mut used = job.ring_kind;
    for o in outcomes {
        let (st, kind) = o?;
        if kind == RingKind::Psync {
            used = RingKind::Psync;
        }
        threads.push(st);
    }
    let mut total = BenchStats::default();
    threads.iter().for_each(|t| total.merge(t));
    if let Some(text) = total.refused.take() {
        return Err(BenchError::Refused(text));
    }
    let ram = target::ram_bytes();
    let mut warnings: Vec<String> = targets
        .iter()
        .flat_map(|t| exposure::warnings(&t.path, &t.direct_io, t.size, ram))
        .collect();
    if job.ring_kind != RingKind::Psync && used == RingKind::Psync {
        let asked = match job.ring_kind {
            RingKind::Kaio => "kernel AIO",
            _ => "io_uring",
        };
        warnings.push(format!(
            "{asked} was refused by the kernel; the psync engine ran instead"
        ));
    }
    if interrupted {
        warnings.push(format!(
            "interrupted: results cover the first {measured_s:.2} s measured"
        ));
    }
    Ok(RunResult {
        job: job.clone(),
        ring_kind: used,
        targets,
        warnings,
        measured_s,
        interrupted,
        cpu,
        threads,
        total,
    })
}
