//! State shared by every actor of a running simulation: files, logs, buffer pool, throttles,
//! the stop signal and the event sink.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::control::inflight::Inflight;
use crate::control::stop::{Stop, StopReason};
use crate::control::throttle::{Gate, Throttle};
use crate::engine::files::SimFile;
use crate::engine::pool::BufferPool;
use crate::engine::wal::Wal;
use crate::findings::{Event, EventSink, Finding, Message, Severity};
use crate::plan::SimPlan;
use crate::stats::LiveCounters;

/// A log file with its write-ahead log.
#[derive(Debug)]
pub struct LogFile {
    /// Index of the file in the plan.
    pub file: usize,
    /// The log.
    pub wal: Wal,
}

/// Everything the actors share.
pub struct Shared {
    /// The plan.
    pub plan: SimPlan,
    /// Run id of the file set.
    pub run_id: u64,
    /// Every file, in plan order.
    pub files: Vec<SimFile>,
    /// Indices of the data files.
    pub data: Vec<usize>,
    /// The log files.
    pub logs: Vec<LogFile>,
    /// The buffer pool.
    pub pool: BufferPool,
    /// Stop signal.
    pub stop: Stop,
    /// Process-wide outstanding-I/O cap.
    pub gate: Gate,
    /// Per-file throttles (index = file index).
    pub throttles: Vec<Throttle>,
    /// Requests in flight to every file together (each file's own gauge is its throttle's).
    pub depth: Arc<crate::control::depth::DepthGauge>,
    /// I/Os in flight, for the long-I/O monitor.
    pub inflight: Inflight,
    /// Most requests one asynchronous actor keeps in flight: MaxOutstandingIO, or with 0 the
    /// I/O engine's ceiling.
    pub async_depth: usize,
    /// Page frames for the asynchronous actors' requests in flight, allocated (and touched)
    /// at start so memory does not grow with the depth during the run.
    pub io_frames: Arc<crate::io::BufPool>,
    /// Live counters for the progress line.
    pub live: Arc<LiveCounters>,
    /// Where findings and messages go.
    pub sink: Arc<dyn EventSink>,
    /// True while throttling is lifted (initial update, checkpoints with AllowIOBursts).
    pub burst: AtomicBool,
    /// Number of findings so far.
    pub findings: AtomicU64,
    /// Start of the run.
    pub start: Instant,
    /// The durability journal, if the run keeps one.
    pub journal: super::sync::JournalSlot,
    /// Serialises the triage of a bad page (striped by page number), so two readers that see
    /// the same persistent problem at once report it once.
    pub triage: TriageLocks,
    /// Errors met while working that are not findings: a stop for a refused request or a
    /// vanished device, and out-of-space failures.
    pub env: super::failure::EnvErrors,
}

/// Stripes of the triage lock.
const TRIAGE_STRIPES: usize = 64;

/// One mutex per stripe of pages; held while a bad page is re-read and reported.
#[derive(Debug)]
pub struct TriageLocks([parking_lot::Mutex<()>; TRIAGE_STRIPES]);

impl Default for TriageLocks {
    fn default() -> TriageLocks {
        TriageLocks(std::array::from_fn(|_| parking_lot::Mutex::new(())))
    }
}

impl TriageLocks {
    /// Locks the stripe of `page`. Held only around re-reads of that page, never while waiting
    /// for a latch, so it cannot deadlock with the page latches.
    pub fn lock(&self, page: u64) -> parking_lot::MutexGuard<'_, ()> {
        self.0[(page % TRIAGE_STRIPES as u64) as usize].lock()
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Sends a finding to the reporters; stops the run when StopOnError says so.
    pub fn report(&self, mut finding: Finding) {
        finding.seq = self.findings.fetch_add(1, Ordering::AcqRel) + 1;
        self.live.add_finding();
        self.sink.emit(Event::Finding(Box::new(finding)));
        if self.plan.stop_on_error {
            self.stop.stop_run(StopReason::Error);
        }
    }

    /// Sends a log message.
    pub fn message(&self, severity: Severity, user: &str, func: &str, text: impl Into<String>) {
        self.sink
            .emit(Event::Message(Message::new(severity, user, func, text)));
    }

    /// Number of findings so far.
    pub fn finding_count(&self) -> u64 {
        self.findings.load(Ordering::Acquire)
    }

    /// True while I/O bursts are allowed.
    pub fn bursting(&self) -> bool {
        self.burst.load(Ordering::Relaxed)
    }

    /// The log that data file `file`'s changes go to (data files are spread over the logs).
    pub fn log_of(&self, file: usize) -> Option<&LogFile> {
        let pos = self.data.iter().position(|&d| d == file)?;
        self.logs.get(pos % self.logs.len().max(1))
    }
}
