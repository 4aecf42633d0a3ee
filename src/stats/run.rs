//! Merging thread statistics and turning them into a [`Summary`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::page::ActorKind;

use super::hist::LatencyHistogram;
use super::op::OpKind;
use super::summary::{ActorSummary, FileSummary, OpTotals, Summary};
use super::thread::{Cell, FileStats, ThreadStats};

/// What the run knows about a file beyond its counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// Path of the file.
    pub path: PathBuf,
    /// The TargetIODuration setting, milliseconds (SQLIOSim's default is 100).
    pub target_io_duration_ms: u64,
    /// The damped running average kept by the throttling code; `None`: use the mean latency.
    pub running_avg_io_ms: Option<u64>,
    /// Whether the configuration asked for a sparse file: the attribute, kept once the file is
    /// filled (as NTFS keeps it).
    pub sparse: bool,
    /// Its size and allocation as the filesystem says, when it says.
    pub space: Option<super::summary::FileSpace>,
    /// The disk under it, when there is one.
    pub drive: Option<super::summary::DriveLevel>,
}

impl FileMeta {
    /// Metadata with SQLIOSim's defaults for `path`.
    pub fn new(path: impl Into<PathBuf>) -> FileMeta {
        FileMeta {
            path: path.into(),
            target_io_duration_ms: 100,
            running_avg_io_ms: None,
            sparse: false,
            space: None,
            drive: None,
        }
    }
}

/// The statistics of every thread of a run, merged.
#[derive(Debug, Clone)]
pub struct RunStats {
    merged: ThreadStats,
}

impl RunStats {
    /// Empty statistics of a run that started at `start`.
    pub fn new(start: Instant) -> RunStats {
        RunStats {
            merged: ThreadStats::new(start),
        }
    }

    /// Adds one thread's statistics.
    pub fn absorb(&mut self, thread: &ThreadStats) {
        self.merged.merge(thread);
    }

    /// The merged statistics.
    pub fn merged(&self) -> &ThreadStats {
        &self.merged
    }

    /// The summary `elapsed` after the start; `files[i]` describes file index `i`.
    pub fn summary(&self, files: &[FileMeta], elapsed: Duration) -> Summary {
        let secs = elapsed.as_secs_f64();
        let s = &self.merged;
        let n = s.files.len().max(files.len());
        let file_sums: Vec<FileSummary> = (0..n)
            .map(|i| file_summary(i, s.files.get(i), files.get(i), secs))
            .collect();
        let every = || s.files.iter().chain(std::iter::once(&s.scratch));
        let all_cells = op_cells(every().flat_map(|f| f.cells.iter()));
        let mut all_hist = LatencyHistogram::new();
        for h in every().flat_map(|f| f.hist.iter().flatten()) {
            all_hist.add(h);
        }
        let other = op_cells(s.scratch.cells.iter())
            .iter()
            .any(|(_, c)| c.ops > 0 || c.errors > 0)
            .then(|| io_totals(&s.scratch, secs));
        Summary {
            elapsed_s: secs,
            total: totals(&all_cells, &all_hist, secs),
            files: file_sums,
            other,
            actors: actor_summaries(s, secs),
            timeline: s.timeline.points(),
            depth: None,
            journal: None,
        }
    }
}

/// Totals of (op index, cell) pairs with the latency of `hist`.
fn totals(cells: &[(usize, Cell)], hist: &LatencyHistogram, secs: f64) -> OpTotals {
    let mut by_op = [Cell::default(); OpKind::COUNT];
    for (op, c) in cells {
        by_op[*op].add(c);
    }
    let c = |op: OpKind| by_op[op.index()];
    let bytes_read = c(OpKind::Read).bytes + c(OpKind::ScatterRead).bytes;
    let bytes_written = c(OpKind::Write).bytes + c(OpKind::GatherWrite).bytes;
    let data_ops: u64 = OpKind::ALL
        .iter()
        .filter(|o| **o != OpKind::Sync)
        .map(|o| c(*o).ops)
        .sum();
    let rate = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    OpTotals {
        reads: c(OpKind::Read).ops,
        scatter_reads: c(OpKind::ScatterRead).ops,
        writes: c(OpKind::Write).ops,
        gather_writes: c(OpKind::GatherWrite).ops,
        syncs: c(OpKind::Sync).ops,
        errors: by_op.iter().map(|c| c.errors).sum(),
        bytes_read,
        bytes_written,
        total_io_time_ms: by_op.iter().map(|c| c.time_ns).sum::<u64>() / 1_000_000,
        iops: rate(data_ops as f64),
        mb_per_s: rate((bytes_read + bytes_written) as f64) / 1_048_576.0,
        latency: hist.latency(),
        latency_hdr: Some(hist.to_v2_base64()),
    }
}

/// The totals of one file's statistics (or of the files outside the set), every operation's
/// latency merged.
fn io_totals(st: &FileStats, secs: f64) -> OpTotals {
    let mut hist = LatencyHistogram::new();
    for h in st.hist.iter().flatten() {
        hist.add(h);
    }
    totals(&op_cells(st.cells.iter()), &hist, secs)
}

fn file_summary(
    i: usize,
    st: Option<&FileStats>,
    meta: Option<&FileMeta>,
    secs: f64,
) -> FileSummary {
    let empty = FileStats::default();
    let st = st.unwrap_or(&empty);
    let latency_by_op: BTreeMap<_, _> = OpKind::ALL
        .iter()
        .filter_map(|op| Some((*op, st.hist[op.index()].as_ref()?.latency())))
        .collect();
    let io = io_totals(st, secs);
    let mean_ms = (io.latency.mean_us / 1000.0).round() as u64;
    FileSummary {
        index: i,
        path: meta.map_or_else(|| format!("file{i}"), |m| m.path.display().to_string()),
        sparse: meta.is_some_and(|m| m.sparse || m.space.is_some_and(|s| s.has_holes())),
        space: meta.and_then(|m| m.space),
        drive: meta.and_then(|m| m.drive.clone()),
        target_io_duration_ms: meta.map_or(100, |m| m.target_io_duration_ms),
        running_avg_io_ms: meta.and_then(|m| m.running_avg_io_ms).unwrap_or(mean_ms),
        throttled: st.throttles,
        io_request_blocks: st.max_outstanding,
        io,
        latency_by_op,
        depth: None,
    }
}

fn actor_summaries(s: &ThreadStats, secs: f64) -> Vec<ActorSummary> {
    let empty = LatencyHistogram::new();
    let mut out = Vec::new();
    for actor in ActorKind::ALL {
        let a = actor as usize;
        let cells = op_cells(
            s.files
                .iter()
                .chain(std::iter::once(&s.scratch))
                .map(|f| &f.cells[a]),
        );
        let hist = s.actor_hist[a].as_deref();
        if hist.is_none() && cells.iter().all(|(_, c)| c.errors == 0) {
            continue;
        }
        out.push(ActorSummary {
            actor,
            name: actor.name().to_string(),
            io: totals(&cells, hist.unwrap_or(&empty), secs),
        });
    }
    out
}

/// Flattens per-op cell arrays into (op index, cell) pairs.
fn op_cells<'a>(rows: impl Iterator<Item = &'a [Cell; OpKind::COUNT]>) -> Vec<(usize, Cell)> {
    rows.flat_map(|r| r.iter().copied().enumerate()).collect()
}
