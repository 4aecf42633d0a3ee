//! Merging runs into fleet rows — one per (host, device) — and fleet totals.
//!
//! Counts add up. Rates of several runs of one row are weighted by each run's duration (they
//! ran one after the other); the fleet's rates are the sum of its rows' (the hosts ran side by
//! side). Percentiles come only from merged HdrHistograms, never from averaged percentiles: a
//! run without a histogram (schema /1, an XML log) is counted everywhere else, and its own
//! percentiles are shown as it recorded them, marked as not merged.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::stats::{Latency, LatencyHistogram};

use super::device::{DeviceKey, DevicePart};
use super::identity;
use super::loader::{FleetInputs, LoadProblem};
use super::outliers::{self, Outliers};
use super::record::{Ending, RunRecord};
use super::row::{CorruptRun, LatencySource, Row};

/// The whole fleet.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Runs read.
    pub runs: usize,
    /// Distinct hosts.
    pub hosts: usize,
    /// Reads and writes.
    pub ops: u64,
    /// Sum of the rows' IOPS.
    pub iops: f64,
    /// Sum of the rows' MB/s.
    pub mb_per_s: f64,
    /// Findings by class.
    pub by_class: BTreeMap<String, u64>,
    /// Throttled I/Os.
    pub throttled: u64,
    /// Long I/Os, over the runs whose log was read.
    pub long_ios: u64,
    /// The merged histogram of every run that carries one.
    pub hist: Option<LatencyHistogram>,
    /// Runs whose histograms are in `hist`.
    pub runs_merged: usize,
    /// Runs without a histogram: counted, but not in the fleet percentiles.
    pub not_mergeable: Vec<PathBuf>,
}

/// The fleet report's data.
#[derive(Debug, Clone, Default)]
pub struct Fleet {
    /// Rows: corruption first, then unfinished, then clean; by host and device within.
    pub rows: Vec<Row>,
    /// Fleet totals.
    pub totals: Totals,
    /// The outlier analysis.
    pub outliers: Outliers,
    /// Inputs that could not be read.
    pub unreadable: Vec<LoadProblem>,
    /// Files left out, and why.
    pub skipped: Vec<LoadProblem>,
    /// Remarks about single runs ("path: note").
    pub notes: Vec<String>,
    /// How many hosts `--expect-hosts` named (None: no list given).
    pub expected: Option<usize>,
    /// The expected hosts no result answers to.
    pub missing: Vec<String>,
    /// The earliest start and the latest end of the runs whose summaries say (µs since the
    /// epoch); None when none does.
    pub span_us: Option<(u64, u64)>,
}

/// Merges what was read.
pub fn build(loaded: FleetInputs) -> Fleet {
    let mut rows: BTreeMap<(String, DeviceKey), Row> = BTreeMap::new();
    let mut notes = Vec::new();
    for run in &loaded.runs {
        notes.extend(
            run.notes
                .iter()
                .map(|n| format!("{}: {n}", run.path.display())),
        );
        for (i, part) in run.parts.iter().enumerate() {
            let key = (identity::key(run), part.device.clone());
            let row = rows.entry(key).or_insert_with(|| new_row(run, part));
            add_part(row, run, part);
            if let (0, Some(b)) = (i, &run.bench) {
                row.bench.push((run.path.clone(), b.clone()));
            }
        }
    }
    let mut rows: Vec<Row> = rows.into_values().map(finish_row).collect();
    identity::name_rows(&mut rows);
    let outliers = outliers::analyse(&mut rows);
    rows.sort_by(|a, b| {
        (a.verdict(), &a.name, &a.device.name).cmp(&(b.verdict(), &b.name, &b.device.name))
    });
    let totals = totals(&loaded.runs, &rows);
    let span_us = loaded
        .runs
        .iter()
        .filter_map(|r| r.span_us)
        .reduce(|(a0, a1), (b0, b1)| (a0.min(b0), a1.max(b1)));
    Fleet {
        span_us,
        rows,
        totals,
        outliers,
        unreadable: loaded.unreadable,
        skipped: loaded.skipped,
        notes,
        expected: None,
        missing: Vec::new(),
    }
}

fn new_row(run: &RunRecord, part: &DevicePart) -> Row {
    let mut row = Row::new(&run.host, part.device.clone());
    row.key = identity::key(run);
    row.label = run.label.clone();
    row.machine_id = run.machine_id.clone();
    row
}

fn add_part(row: &mut Row, run: &RunRecord, part: &DevicePart) {
    row.runs.push(run.path.clone());
    for (c, n) in &part.by_class {
        *row.by_class.entry(c.clone()).or_default() += n;
    }
    let findings: u64 = part.by_class.values().sum();
    if findings > 0 {
        row.corrupt_runs.push(CorruptRun {
            path: run.path.clone(),
            findings,
            evidence: run.evidence.clone(),
        });
    }
    if let Ending::Unfinished(why) = &run.ending {
        row.unfinished
            .push(format!("{}: {why}", run.path.display()));
    }
    row.ops += part.ops;
    // Rates weighted by duration: accumulated as rate × seconds, divided in finish_row.
    row.iops += part.iops * part.elapsed_s;
    row.mb_per_s += part.mb_per_s * part.elapsed_s;
    row.elapsed_s += part.elapsed_s;
    row.throttled += part.throttled;
    if let Some(n) = run.long_ios {
        row.long_ios = Some(row.long_ios.unwrap_or(0) + n);
    }
    let source = match (&part.hist, row.runs.len(), row.latency_source) {
        (Some(_), 1, _) | (Some(_), _, LatencySource::Merged) => LatencySource::Merged,
        (None, 1, _) => LatencySource::Recorded,
        _ => LatencySource::Partial,
    };
    row.latency_source = source;
    if let Some(h) = &part.hist {
        row.hist.get_or_insert_with(LatencyHistogram::new).add(h);
    } else if row.runs.len() == 1 {
        row.latency = part.recorded;
    }
}

fn finish_row(mut row: Row) -> Row {
    if row.elapsed_s > 0.0 {
        row.iops /= row.elapsed_s;
        row.mb_per_s /= row.elapsed_s;
    }
    match &row.hist {
        Some(h) => row.latency = h.latency(),
        // Several runs, none with a histogram: nothing can be merged.
        None if row.latency_source == LatencySource::Partial => row.latency = Latency::default(),
        None => {}
    }
    if row.latency.count == 0 {
        row.latency_source = LatencySource::None;
    }
    row
}

fn totals(runs: &[RunRecord], rows: &[Row]) -> Totals {
    let mut t = Totals {
        runs: runs.len(),
        ..Totals::default()
    };
    let mut hosts: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    t.hosts = hosts.len();
    for r in rows {
        t.ops += r.ops;
        t.iops += r.iops;
        t.mb_per_s += r.mb_per_s;
        t.throttled += r.throttled;
        t.long_ios += r.long_ios.unwrap_or(0);
        for (c, n) in &r.by_class {
            *t.by_class.entry(c.clone()).or_default() += n;
        }
    }
    for run in runs {
        if !run.mergeable() {
            t.not_mergeable.push(run.path.clone());
            continue;
        }
        t.runs_merged += 1;
        for h in run.parts.iter().filter_map(|p| p.hist.as_ref()) {
            t.hist.get_or_insert_with(LatencyHistogram::new).add(h);
        }
    }
    t
}
