//! JSON and CSV renderings of a sweep; rewritten after each combination so that a killed
//! run still leaves valid files.

use crate::bench::sweep::{CellResult, Saturation};
use serde::Serialize;
use std::fmt::Write;

/// The JSON document: tool, every combination with its passes, and the saturation points.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// Always "sqliosim bench".
    pub tool: &'static str,
    /// Crate version.
    pub version: &'static str,
    /// True when Ctrl-C cut the sweep short.
    pub interrupted: bool,
    /// One entry per combination.
    pub results: &'a [CellResult],
    /// One entry per (block size, pattern, rw).
    pub saturation: &'a [Saturation],
}

fn doc<'a>(cells: &'a [CellResult], sat: &'a [Saturation], interrupted: bool) -> Document<'a> {
    Document {
        tool: "sqliosim bench",
        version: env!("CARGO_PKG_VERSION"),
        interrupted,
        results: cells,
        saturation: sat,
    }
}

/// Pretty JSON of a sweep.
pub fn json(cells: &[CellResult], sat: &[Saturation], interrupted: bool) -> String {
    serde_json::to_string_pretty(&doc(cells, sat, interrupted))
        .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The same document as a JSON value (what `run --bench` keeps in the run's JSON summary).
pub fn document(cells: &[CellResult], sat: &[Saturation], interrupted: bool) -> serde_json::Value {
    serde_json::to_value(doc(cells, sat, interrupted))
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
}

/// CSV header.
pub const CSV_HEADER: &str = "block_size,pattern,rw,read_pct,threads,outstanding,queue_depth,engine,direct,direct_honoured,file_size,passes,iops,iops_min,iops_max,spread_pct,mb_per_s,lat_min_us,lat_avg_us,p50_us,p90_us,p99_us,p99_9_us,p99_99_us,lat_max_us,cpu_us_per_io,errors,verify_failures";

/// One CSV row per combination.
pub fn csv(cells: &[CellResult]) -> String {
    let mut o = format!("{CSV_HEADER}\n");
    for c in cells {
        let first = c.passes.first();
        let l = c.latency.as_ref();
        let p = |q: f64| l.and_then(|l| l.at(q)).unwrap_or(0.0);
        let honoured = first
            .map(|f| f.targets.iter().all(|t| t.direct_io.honoured))
            .unwrap_or(false);
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.3},{},{}",
            c.cell.block_size,
            c.cell.pattern.name(),
            c.rw_name(),
            c.cell.read_pct,
            c.cell.threads,
            c.cell.outstanding,
            c.queue_depth,
            first.map(|f| f.engine).unwrap_or(""),
            first.map(|f| f.direct).unwrap_or(false),
            honoured,
            first.map(|f| f.targets.iter().map(|t| t.size).sum::<u64>()).unwrap_or(0),
            c.passes.len(),
            c.iops,
            c.iops_min,
            c.iops_max,
            c.spread_pct,
            c.mb_per_s,
            l.map(|l| l.min_us).unwrap_or(0.0),
            l.map(|l| l.avg_us).unwrap_or(0.0),
            p(50.0),
            p(90.0),
            p(99.0),
            p(99.9),
            p(99.99),
            l.map(|l| l.max_us).unwrap_or(0.0),
            c.cpu_us_per_io,
            c.errors,
            c.verify_failures
        );
    }
    o
}
