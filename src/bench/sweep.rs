//! Results of a matrix of runs: one [`CellResult`] per combination (passes merged, spread
//! between passes), and the saturation point of each (block size, pattern, rw) curve.

use super::job::{Job, Pattern};
use super::latency::{BenchStats, LatencySummary};
use super::run::RunResult;
use super::summary::BenchSummary;
use serde::Serialize;

/// One combination of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Cell {
    /// Bytes per I/O.
    pub block_size: u32,
    /// Random or sequential.
    pub pattern: Pattern,
    /// Share of reads.
    pub read_pct: u8,
    /// Threads per file.
    pub threads: u32,
    /// Outstanding I/O per thread.
    pub outstanding: u32,
}

impl Cell {
    /// The job for this cell.
    pub fn apply(&self, base: &Job) -> Job {
        Job {
            block_size: self.block_size,
            pattern: self.pattern,
            read_pct: self.read_pct,
            threads_per_target: self.threads,
            depth: self.outstanding,
            ..base.clone()
        }
    }
}

/// One combination, over all its passes.
#[derive(Debug, Clone, Serialize)]
pub struct CellResult {
    /// The combination.
    pub cell: Cell,
    /// Total queue depth (threads × outstanding × files).
    pub queue_depth: u32,
    /// Mean IOPS over the passes.
    pub iops: f64,
    /// Lowest pass.
    pub iops_min: f64,
    /// Highest pass.
    pub iops_max: f64,
    /// (max − min) / mean, percent.
    pub spread_pct: f64,
    /// Mean MB/s (10^6).
    pub mb_per_s: f64,
    /// Latency over every pass, µs.
    pub latency: Option<LatencySummary>,
    /// The same latencies as a histogram: HdrHistogram V2 serialization of nanoseconds,
    /// base64 (as `latency_hdr` in the run's JSON summary), so rows of many hosts merge
    /// exactly; null when nothing completed.
    pub latency_hdr: Option<String>,
    /// Mean process CPU µs per I/O.
    pub cpu_us_per_io: f64,
    /// Failed operations over all passes.
    pub errors: u64,
    /// Verification failures over all passes.
    pub verify_failures: u64,
    /// Each pass.
    pub passes: Vec<BenchSummary>,
}

impl CellResult {
    /// Combines the passes of `cell`.
    pub fn of(cell: Cell, runs: &[RunResult]) -> CellResult {
        let passes: Vec<BenchSummary> = runs.iter().map(BenchSummary::of).collect();
        let n = passes.len().max(1) as f64;
        let iops: Vec<f64> = passes.iter().map(|p| p.iops).collect();
        let mean = iops.iter().sum::<f64>() / n;
        let min = iops.iter().copied().fold(f64::INFINITY, f64::min);
        let max = iops.iter().copied().fold(0.0, f64::max);
        let mut merged = BenchStats::default();
        runs.iter().for_each(|r| merged.merge(&r.total));
        let total = merged.total();
        CellResult {
            cell,
            queue_depth: passes.first().map(|p| p.queue_depth).unwrap_or(0),
            iops: mean,
            iops_min: if min.is_finite() { min } else { 0.0 },
            iops_max: max,
            spread_pct: if mean > 0.0 {
                100.0 * (max - min) / mean
            } else {
                0.0
            },
            mb_per_s: passes.iter().map(|p| p.mb_per_s).sum::<f64>() / n,
            latency: LatencySummary::of(&total),
            latency_hdr: (!total.is_empty()).then(|| crate::stats::histogram_to_v2_base64(&total)),
            cpu_us_per_io: passes.iter().map(|p| p.cpu_us_per_io).sum::<f64>() / n,
            errors: merged.errors,
            verify_failures: merged.verify_failures,
            passes,
        }
    }

    /// "read", "write" or "mixNN".
    pub fn rw_name(&self) -> String {
        rw_name(self.cell.read_pct)
    }
}

/// "read", "write" or "mixNN".
pub fn rw_name(read_pct: u8) -> String {
    match read_pct {
        100 => "read".into(),
        0 => "write".into(),
        p => format!("mix{p}"),
    }
}

/// Where a curve stops paying for more queue depth.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Saturation {
    /// Bytes per I/O.
    pub block_size: u32,
    /// "random" or "sequential".
    pub pattern: &'static str,
    /// "read", "write" or "mixNN".
    pub rw: String,
    /// Smallest total queue depth within 5 % of the best IOPS.
    pub queue_depth: u32,
    /// Threads at that point.
    pub threads: u32,
    /// Outstanding per thread at that point.
    pub outstanding: u32,
    /// IOPS there.
    pub iops: f64,
    /// Best IOPS of the curve.
    pub best_iops: f64,
    /// Queue depth of the best.
    pub best_queue_depth: u32,
    /// Mean latency there, µs.
    pub avg_us: f64,
    /// 99th percentile there, µs.
    pub p99_us: f64,
}

/// The saturation point of each (block size, pattern, rw): the smallest total queue depth
/// whose IOPS is within 5 % of the best (ties: fewer threads).
pub fn saturation(cells: &[CellResult]) -> Vec<Saturation> {
    let mut keys: Vec<(u32, &'static str, u8)> = Vec::new();
    for c in cells {
        let k = (c.cell.block_size, c.cell.pattern.name(), c.cell.read_pct);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|(bs, pat, rp)| {
            let group: Vec<&CellResult> = cells
                .iter()
                .filter(|c| {
                    c.cell.block_size == bs && c.cell.pattern.name() == pat && c.cell.read_pct == rp
                })
                .collect();
            let best = group
                .iter()
                .copied()
                .max_by(|a, b| a.iops.total_cmp(&b.iops))?;
            let sat = group
                .iter()
                .copied()
                .filter(|c| c.iops >= 0.95 * best.iops)
                .min_by_key(|c| (c.queue_depth, c.cell.threads))?;
            let lat = sat.latency.as_ref();
            Some(Saturation {
                block_size: bs,
                pattern: pat,
                rw: rw_name(rp),
                queue_depth: sat.queue_depth,
                threads: sat.cell.threads,
                outstanding: sat.cell.outstanding,
                iops: sat.iops,
                best_iops: best.iops,
                best_queue_depth: best.queue_depth,
                avg_us: lat.map(|l| l.avg_us).unwrap_or(0.0),
                p99_us: lat.and_then(|l| l.at(99.0)).unwrap_or(0.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::job::Pattern;

    fn cell(qd: u32, iops: f64) -> CellResult {
        CellResult {
            cell: Cell {
                block_size: 8192,
                pattern: Pattern::Random,
                read_pct: 100,
                threads: 1,
                outstanding: qd,
            },
            queue_depth: qd,
            iops,
            iops_min: iops,
            iops_max: iops,
            spread_pct: 0.0,
            mb_per_s: 0.0,
            latency: None,
            latency_hdr: None,
            cpu_us_per_io: 0.0,
            errors: 0,
            verify_failures: 0,
            passes: vec![],
        }
    }

    #[test]
    fn saturation_is_the_smallest_depth_within_five_percent_of_the_best() {
        let cells = vec![
            cell(1, 16_000.0),
            cell(8, 60_000.0),
            cell(16, 68_000.0),
            cell(32, 70_000.0),
            cell(64, 69_000.0),
        ];
        let s = saturation(&cells);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].queue_depth, s[0].best_queue_depth), (16, 32));
        assert_eq!(s[0].rw, "read");
    }
}
