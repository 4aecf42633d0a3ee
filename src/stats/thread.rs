//! Per-thread statistics: counters, latency histograms and a timeline, recorded without locks.

use std::sync::Arc;
use std::time::Instant;

use crate::page::ActorKind;

use super::board::{StatsBoard, FLUSH_EVERY};
use super::hist::LatencyHistogram;
use super::live::LiveCounters;
use super::op::OpKind;
use super::timeline::Timeline;

/// Number of actor kinds (dense index `ActorKind as usize`).
pub(crate) const ACTORS: usize = ActorKind::ALL.len();

/// Counts of one (file, actor, op) cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cell {
    /// Completed operations.
    pub ops: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Failed operations.
    pub errors: u64,
    /// Sum of latencies, nanoseconds.
    pub time_ns: u64,
}

impl Cell {
    pub(crate) fn add(&mut self, o: &Cell) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.time_ns += o.time_ns;
    }
}

type Hist = Option<Box<LatencyHistogram>>;

/// Everything kept about one file by one thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileStats {
    /// Counters per actor and op.
    pub cells: [[Cell; OpKind::COUNT]; ACTORS],
    /// Latency per op, created on first use.
    pub hist: [Hist; OpKind::COUNT],
    /// Times I/O to this file was throttled.
    pub throttles: u64,
    /// Most I/Os seen outstanding at once.
    pub max_outstanding: u64,
}

impl FileStats {
    /// Adds what `theirs` recorded.
    fn add(&mut self, theirs: &FileStats) {
        for (ma, ta) in self.cells.iter_mut().zip(&theirs.cells) {
            for (m, t) in ma.iter_mut().zip(ta) {
                m.add(t);
            }
        }
        for (m, t) in self.hist.iter_mut().zip(&theirs.hist) {
            hist_add(m, t);
        }
        self.throttles += theirs.throttles;
        self.max_outstanding = self.max_outstanding.max(theirs.max_outstanding);
    }
}

/// Statistics owned by one worker thread; merge them with [`ThreadStats::merge`].
#[derive(Debug, Clone)]
pub struct ThreadStats {
    start: Instant,
    live: Option<Arc<LiveCounters>>,
    /// Where the statistics are flushed while the thread runs (see [`super::board`]).
    board: Option<Arc<StatsBoard>>,
    /// The last flush into the board.
    flushed: Instant,
    pub(crate) files: Vec<FileStats>,
    /// The I/O to files outside the set (a Sort User's tempdb file, a DBCC snapshot): in the
    /// run's totals and its actors', in no file's line.
    pub(crate) scratch: FileStats,
    pub(crate) actor_hist: [Hist; ACTORS],
    pub(crate) timeline: Timeline,
}

fn hist_add(mine: &mut Hist, theirs: &Hist) {
    if let Some(t) = theirs {
        mine.get_or_insert_with(Default::default).add(t);
    }
}

impl ThreadStats {
    /// Empty statistics for a run that started at `start` (the timeline's origin).
    pub fn new(start: Instant) -> ThreadStats {
        ThreadStats {
            start,
            live: None,
            board: None,
            flushed: start,
            files: Vec::new(),
            scratch: FileStats::default(),
            actor_hist: Default::default(),
            timeline: Timeline::default(),
        }
    }

    /// Also adds every record to the shared live counters (for the progress line).
    pub fn with_live(mut self, live: Arc<LiveCounters>) -> ThreadStats {
        self.live = Some(live);
        self
    }

    /// Also flushes what it records into `board` about once a second (and on
    /// [`ThreadStats::flush`]), so the run's statistics so far can be read while it runs.
    pub fn with_board(mut self, board: Arc<StatsBoard>) -> ThreadStats {
        self.board = Some(board);
        self
    }

    /// Hands what was recorded since the last flush to the board (nothing without one): a
    /// worker calls it as it ends.
    pub fn flush(&mut self) {
        let Some(board) = self.board.clone() else {
            return;
        };
        board.absorb(self);
        for f in self
            .files
            .iter_mut()
            .chain(std::iter::once(&mut self.scratch))
        {
            f.cells = Default::default();
            f.hist.iter_mut().flatten().for_each(|h| h.reset());
            f.throttles = 0;
            f.max_outstanding = 0;
        }
        self.actor_hist.iter_mut().flatten().for_each(|h| h.reset());
        self.timeline.clear();
    }

    /// The run start this thread measures its timeline from.
    pub fn start(&self) -> Instant {
        self.start
    }

    fn file(&mut self, file: usize) -> &mut FileStats {
        if self.files.len() <= file {
            self.files.resize_with(file + 1, FileStats::default);
        }
        &mut self.files[file]
    }

    fn secs(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.start).as_secs()
    }

    /// Records one completed I/O of `bytes` that took `latency_ns`, timestamped now.
    pub fn record(
        &mut self,
        file: usize,
        actor: ActorKind,
        op: OpKind,
        bytes: u64,
        latency_ns: u64,
    ) {
        self.record_at(file, actor, op, bytes, latency_ns, crate::clock::now());
    }

    /// Records one completed I/O that completed at `now`.
    pub fn record_at(
        &mut self,
        file: usize,
        actor: ActorKind,
        op: OpKind,
        bytes: u64,
        latency_ns: u64,
        now: Instant,
    ) {
        self.record_in(Some(file), actor, op, bytes, latency_ns, now);
    }

    /// Records one completed I/O of a file outside the set (see `scratch`).
    pub fn record_scratch(&mut self, actor: ActorKind, op: OpKind, bytes: u64, latency_ns: u64) {
        self.record_in(None, actor, op, bytes, latency_ns, crate::clock::now());
    }

    /// File `file`'s statistics, or (`None`) those of the files outside the set.
    fn target(&mut self, file: Option<usize>) -> &mut FileStats {
        match file {
            Some(i) => self.file(i),
            None => &mut self.scratch,
        }
    }

    fn record_in(
        &mut self,
        file: Option<usize>,
        actor: ActorKind,
        op: OpKind,
        bytes: u64,
        latency_ns: u64,
        now: Instant,
    ) {
        let secs = self.secs(now);
        let f = self.target(file);
        let cell = &mut f.cells[actor as usize][op.index()];
        cell.ops += 1;
        cell.bytes += bytes;
        cell.time_ns += latency_ns;
        f.hist[op.index()]
            .get_or_insert_with(Default::default)
            .record(latency_ns);
        self.actor_hist[actor as usize]
            .get_or_insert_with(Default::default)
            .record(latency_ns);
        self.timeline.record(secs, op, bytes, latency_ns);
        if let Some(live) = &self.live {
            live.add_io(op.is_read(), op.is_write(), bytes, latency_ns);
        }
        if self.board.is_some() && now.saturating_duration_since(self.flushed) >= FLUSH_EVERY {
            self.flushed = now;
            self.flush();
        }
    }

    /// Records one failed I/O (not counted as completed by [`ThreadStats::record`]).
    pub fn record_error(&mut self, file: usize, actor: ActorKind, op: OpKind) {
        self.record_error_in(Some(file), actor, op);
    }

    /// Records one failed I/O of a file outside the set.
    pub fn record_scratch_error(&mut self, actor: ActorKind, op: OpKind) {
        self.record_error_in(None, actor, op);
    }

    fn record_error_in(&mut self, file: Option<usize>, actor: ActorKind, op: OpKind) {
        let secs = self.secs(crate::clock::now());
        self.target(file).cells[actor as usize][op.index()].errors += 1;
        self.timeline.record_error(secs);
        if let Some(live) = &self.live {
            live.add_error();
        }
    }

    /// Counts one throttling of the I/O to `file` (SQLIOSim's "Number of times IO throttled").
    pub fn throttled(&mut self, file: usize) {
        self.file(file).throttles += 1;
        if let Some(live) = &self.live {
            live.add_throttle();
        }
    }

    /// Notes that `n` I/Os to `file` were outstanding at once (SQLIOSim's "IO request blocks"
    /// is the maximum).
    pub fn outstanding(&mut self, file: usize, n: u64) {
        let f = self.file(file);
        f.max_outstanding = f.max_outstanding.max(n);
    }

    /// Completed operations of one kind by one actor on one file.
    pub fn ops(&self, file: usize, actor: ActorKind, op: OpKind) -> u64 {
        self.files
            .get(file)
            .map_or(0, |f| f.cells[actor as usize][op.index()].ops)
    }

    /// The timeline recorded so far.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Adds everything `other` recorded into this one (same run start assumed).
    pub fn merge(&mut self, other: &ThreadStats) {
        for (i, theirs) in other.files.iter().enumerate() {
            self.file(i).add(theirs);
        }
        self.scratch.add(&other.scratch);
        for (m, t) in self.actor_hist.iter_mut().zip(&other.actor_hist) {
            hist_add(m, t);
        }
        self.timeline.merge(&other.timeline);
    }
}
