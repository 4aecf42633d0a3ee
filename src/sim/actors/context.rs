//! The run context: everything the actors of a running simulation share, built by the driver
//! (`sim::driver::setup`) and lent to every thread. It is grouped by what the parts are: the
//! [`FileSet`] (the engine's files, logs and buffer pool), the [`Controls`] (stop, throttles,
//! gate, depth, the I/O ages), the durability journal, the [`Reporting`] side (event sink,
//! live counters, findings) and the `Backend`, the door through which an actor opens a file
//! that is not one of the page files.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::events::{Event, EventSink};
use crate::findings::{Finding, Message, Severity};
use crate::io::Backend;
use crate::sim::control::depth::DepthGauge;
use crate::sim::control::io_ages::IoAges;
use crate::sim::control::stop::{Stop, StopReason};
use crate::sim::control::throttle::{Gate, Throttle};
use crate::sim::engine::files::SimFile;
use crate::sim::engine::pool::BufferPool;
use crate::sim::engine::wal::Wal;
use crate::sim::plan::SimPlan;
use crate::stats::LiveCounters;

/// A running simulation, as its actors see it. `'b` is the borrow of the backend.
pub struct Run<'b> {
    /// The plan.
    pub plan: SimPlan,
    /// The files, their logs and the buffer pool.
    pub files: FileSet,
    /// The run-time controls the driver and the actors share.
    pub controls: Controls,
    /// The durability journal, if the run keeps one.
    pub journal: super::journaling::JournalSlot,
    /// Where findings, messages and live counts go.
    pub reporting: Reporting,
    /// The I/O door, for a file that is not one of the page files.
    pub backend: &'b dyn Backend,
}

/// A log file with its write-ahead log.
#[derive(Debug)]
pub struct LogFile {
    /// Index of the file in the plan.
    pub file: usize,
    /// The log.
    pub wal: Wal,
}

/// The run's files (the engine side): every file, which are data and which logs, and the
/// buffer pool that caches the data files' pages.
#[derive(Debug)]
pub struct FileSet {
    /// Run id of the file set.
    pub run_id: u64,
    /// Every file, in plan order.
    pub all: Vec<SimFile>,
    /// Indices of the data files.
    pub data: Vec<usize>,
    /// The log files.
    pub logs: Vec<LogFile>,
    /// The buffer pool.
    pub pool: BufferPool,
    /// The DBCC snapshots open: every write of a data file copies its pre-images into them.
    pub snapshots: crate::sim::engine::snapshot::Snapshots,
}

impl FileSet {
    /// Every file, in plan order.
    pub fn iter(&self) -> std::slice::Iter<'_, SimFile> {
        self.all.iter()
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    /// True for a run without files.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// The log that data file `file`'s changes go to (data files are spread over the logs).
    pub fn log_of(&self, file: usize) -> Option<&LogFile> {
        let pos = self.data.iter().position(|&d| d == file)?;
        self.logs.get(pos % self.logs.len().max(1))
    }
}

impl std::ops::Index<usize> for FileSet {
    type Output = SimFile;
    fn index(&self, i: usize) -> &SimFile {
        &self.all[i]
    }
}

impl<'a> IntoIterator for &'a FileSet {
    type Item = &'a SimFile;
    type IntoIter = std::slice::Iter<'a, SimFile>;
    fn into_iter(self) -> Self::IntoIter {
        self.all.iter()
    }
}

/// The run-time controls: when to stop, how fast and how deep to go.
#[derive(Debug)]
pub struct Controls {
    /// Stop signal.
    pub stop: Stop,
    /// Process-wide outstanding-I/O cap.
    pub gate: Gate,
    /// Per-file throttles (index = file index).
    pub throttles: Vec<Throttle>,
    /// The throttle of the files outside the set (tempdb files, DBCC snapshots), one for them
    /// all: their requests are held to TargetIODuration as a data file's are.
    pub scratch: Throttle,
    /// Requests in flight to every file together (each file's own gauge is its throttle's).
    pub depth: Arc<DepthGauge>,
    /// I/Os in flight, for the long-I/O monitor.
    pub io_ages: IoAges,
    /// Most requests one asynchronous actor keeps in flight: MaxOutstandingIO, or with 0 the
    /// I/O service's ceiling.
    pub async_depth: usize,
    /// Page frames for the asynchronous actors' requests in flight, allocated (and touched)
    /// at start so memory does not grow with the depth during the run.
    pub io_frames: Arc<crate::io::BufPool>,
    /// True while throttling is lifted (initial update, checkpoints with AllowIOBursts).
    pub burst: AtomicBool,
}

impl Controls {
    /// True while I/O bursts are allowed.
    pub fn bursting(&self) -> bool {
        self.burst.load(Ordering::Relaxed)
    }
}

/// Where what the run finds goes: the event sink, the live counters, the count of findings,
/// and the errors met while working that are not findings.
pub struct Reporting {
    /// Where findings and messages go.
    pub sink: Arc<dyn EventSink>,
    /// Live counters for the progress line.
    pub live: Arc<LiveCounters>,
    /// The run's statistics so far, flushed into by every worker (`stats::board`).
    pub board: Arc<crate::stats::StatsBoard>,
    /// Number of findings so far.
    pub findings: AtomicU64,
    /// Start of the run.
    pub start: Instant,
    /// Serialises the triage of a bad page (striped by page number), so two readers that see
    /// the same persistent problem at once report it once.
    pub triage: TriageLocks,
    /// Errors met while working that are not findings: a stop for a refused request or a
    /// vanished device, and out-of-space failures.
    pub env: super::failure::EnvErrors,
}

impl Reporting {
    /// Reporting into `sink`, for a run whose clock started at `start`.
    pub fn new(sink: Arc<dyn EventSink>, start: Instant) -> Reporting {
        Reporting {
            sink,
            live: Arc::new(LiveCounters::new()),
            board: Arc::new(crate::stats::StatsBoard::new(start)),
            findings: AtomicU64::new(0),
            start,
            triage: TriageLocks::default(),
            env: Default::default(),
        }
    }
}

impl std::fmt::Debug for Reporting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporting")
            .field("findings", &self.findings)
            .finish_non_exhaustive()
    }
}

/// Stripes of the triage lock.
const TRIAGE_STRIPES: usize = 64;

/// One mutex per stripe of pages; held while a bad page is re-read and reported.
#[derive(Debug)]
pub struct TriageLocks([crate::sync::Mutex<()>; TRIAGE_STRIPES]);

impl Default for TriageLocks {
    fn default() -> TriageLocks {
        TriageLocks(std::array::from_fn(|_| crate::sync::Mutex::new(())))
    }
}

impl TriageLocks {
    /// Locks the stripe of `page`. Held only around re-reads of that page, never while waiting
    /// for a latch, so it cannot deadlock with the page latches.
    pub fn lock(&self, page: u64) -> crate::sync::MutexGuard<'_, ()> {
        self.0[(page % TRIAGE_STRIPES as u64) as usize].lock()
    }
}

impl std::fmt::Debug for Run<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("run_id", &self.files.run_id)
            .finish_non_exhaustive()
    }
}

impl Run<'_> {
    /// Creates (or recreates, over a file of ours) a scratch data file of `pages` pages at
    /// `path` through the door, the way the run creates its own: header page, then the size
    /// allocated (zeros written under `StampFiles`). A restore's copies and the Sort Users'
    /// tempdb files are such files: not of the set, never journaled.
    pub fn create_scratch(
        &self,
        path: &std::path::Path,
        file_id: u32,
        pages: u64,
    ) -> Result<std::sync::Arc<dyn crate::io::Storage>, crate::sim::engine::files::FileError> {
        let prepare = self.scratch_prepare(file_id, pages);
        crate::sim::engine::files::create(self.backend, path, &prepare)
    }

    /// Creates a restore's copy of `pages` pages at `path`: its header page, then its space
    /// allocated without writing (fallocate; only sized where `StampFiles` says the
    /// filesystem cannot preallocate), as instant file initialization leaves a file; refused
    /// as [`Run::create_scratch`] refuses. Called with 1 page, the copy is its header only.
    pub fn create_copy(
        &self,
        path: &std::path::Path,
        file_id: u32,
        pages: u64,
    ) -> Result<std::sync::Arc<dyn crate::io::Storage>, crate::sim::engine::files::FileError> {
        self.create_unwritten(path, file_id, pages, self.plan.stamp_files)
    }

    /// How a file of the run's own beside the set is made (not one of the page files).
    fn scratch_prepare(&self, file_id: u32, pages: u64) -> crate::sim::engine::files::Prepare {
        crate::sim::engine::files::Prepare {
            run_id: self.files.run_id,
            file_id,
            role: crate::page::FileRole::Data,
            pages,
            stamp: self.plan.stamp_files,
            sparse: false,
            force: self.plan.force,
            open: crate::io::OpenOptions {
                create: true,
                direct: self.plan.direct,
                write_through: false,
            },
            force_4k_log: false,
        }
    }

    /// Creates a sparse file of `pages` pages at `path` for the run (a DBCC snapshot's): its
    /// header page, then a hole; refused as [`Run::create_scratch`] refuses.
    pub fn create_sparse(
        &self,
        path: &std::path::Path,
        file_id: u32,
        pages: u64,
    ) -> Result<std::sync::Arc<dyn crate::io::Storage>, crate::sim::engine::files::FileError> {
        self.create_unwritten(path, file_id, pages, true)
    }

    /// A file of the run's own beside the set whose pages past the header are not written at
    /// its creation: left a hole (`sparse`) or allocated.
    fn create_unwritten(
        &self,
        path: &std::path::Path,
        file_id: u32,
        pages: u64,
        sparse: bool,
    ) -> Result<std::sync::Arc<dyn crate::io::Storage>, crate::sim::engine::files::FileError> {
        let prepare = crate::sim::engine::files::Prepare {
            stamp: false,
            sparse,
            ..self.scratch_prepare(file_id, pages)
        };
        crate::sim::engine::files::create(self.backend, path, &prepare)
    }

    /// Sends a finding to the reporters; stops the run when StopOnError says so.
    pub fn report(&self, mut finding: Finding) {
        finding.seq = self.reporting.findings.fetch_add(1, Ordering::AcqRel) + 1;
        self.reporting.live.add_finding();
        self.reporting.sink.emit(Event::Finding(Box::new(finding)));
        if self.plan.stop_on_error {
            self.controls.stop.stop_run(StopReason::Error);
        }
    }

    /// Sends a log message.
    pub fn message(&self, severity: Severity, user: &str, func: &str, text: impl Into<String>) {
        self.send(Message::new(severity, user, func, text));
    }

    /// Sends a log message that says what a finding stopped (a backup WITH CHECKSUM at the
    /// page found bad): logged at its severity, but not counted among the errors that keep a
    /// run from a clean pass. The finding already does, and it is no error of the environment.
    pub fn message_of_finding(&self, severity: Severity, user: &str, func: &str, text: String) {
        let m = Message::new(severity, user, func, text);
        self.reporting.sink.emit(Event::Message(m));
    }

    /// Sends a log message built by the caller (one with an errno, say).
    pub fn send(&self, m: Message) {
        if m.severity == Severity::Error {
            self.reporting.env.note_error(&m.text);
        }
        self.reporting.sink.emit(Event::Message(m));
    }

    /// Number of findings so far.
    pub fn finding_count(&self) -> u64 {
        self.reporting.findings.load(Ordering::Acquire)
    }
}
