//! The merged fleet result as JSON, schema "sqliosim-fleet/1" (documented in
//! docs/report-fleet.md): every row with its merged histogram, the fleet totals, the outlier
//! analysis, and what could not be read.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::report::sinks::json::ToolInfo;
use crate::report::ReportError;
use crate::stats::Latency;

use super::device::DeviceKey;
use super::loader::LoadProblem;
use super::merge::Fleet;
use super::outliers::Outliers;
use super::row::{CorruptRun, HostVerdict, LatencySource, Row};
use super::verdict::FleetVerdict;

/// Value of the `schema` field of the fleet JSON.
pub const FLEET_SCHEMA: &str = "sqliosim-fleet/1";

/// One row.
#[derive(Debug, Serialize)]
struct JsonRow<'a> {
    host: &'a str,
    name: &'a str,
    label: Option<&'a str>,
    machine_id: Option<&'a str>,
    device: &'a DeviceKey,
    verdict: HostVerdict,
    findings: u64,
    by_class: &'a BTreeMap<String, u64>,
    unfinished: &'a [String],
    #[serde(serialize_with = "lossy_paths")]
    runs: &'a [PathBuf],
    corrupt_runs: Vec<JsonCorruptRun>,
    ops: u64,
    elapsed_s: f64,
    iops: f64,
    mb_per_s: f64,
    latency: Option<Latency>,
    latency_source: LatencySource,
    latency_hdr: Option<String>,
    throttled: u64,
    long_ios: Option<u64>,
    outlier: &'a [&'static str],
    /// The capacity runs beside the row's runs (an addition: absent without one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    bench: Vec<JsonBench<'a>>,
}

/// A capacity run of a row: the file it came from and its figures (without the bench's whole
/// document, which stays in the run's own JSON summary).
#[derive(Debug, Serialize)]
struct JsonBench<'a> {
    path: String,
    args: &'a str,
    outcome: &'a str,
    error: Option<&'a str>,
    combination: &'a str,
    iops: f64,
    mb_per_s: f64,
    p99_us: Option<f64>,
    max_us: Option<f64>,
    errors: u64,
}

fn bench<'a>(
    p: &std::path::Path,
    b: &'a crate::report::sinks::bench_figures::BenchFigures,
) -> JsonBench<'a> {
    JsonBench {
        path: p.to_string_lossy().into_owned(),
        args: &b.args,
        outcome: &b.outcome,
        error: b.error.as_deref(),
        combination: &b.combination,
        iops: b.iops,
        mb_per_s: b.mb_per_s,
        p99_us: b.p99_us,
        max_us: b.max_us,
        errors: b.errors,
    }
}

/// A run of a row that found corruption, with its evidence (paths as text).
#[derive(Debug, Serialize)]
struct JsonCorruptRun {
    path: String,
    findings: u64,
    dumps: Option<String>,
    bundle: Option<String>,
}

fn corrupt_run(c: &CorruptRun) -> JsonCorruptRun {
    let text = |p: &Option<PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
    JsonCorruptRun {
        path: c.path.to_string_lossy().into_owned(),
        findings: c.findings,
        dumps: text(&c.evidence.dumps),
        bundle: text(&c.evidence.bundle),
    }
}

/// Fleet totals.
#[derive(Debug, Serialize)]
struct JsonTotals<'a> {
    runs: usize,
    hosts: usize,
    rows: usize,
    ops: u64,
    iops: f64,
    mb_per_s: f64,
    findings: u64,
    by_class: &'a BTreeMap<String, u64>,
    throttled: u64,
    long_ios: u64,
    latency: Option<Latency>,
    latency_hdr: Option<String>,
    runs_merged: usize,
    #[serde(serialize_with = "lossy_paths")]
    not_mergeable: &'a [PathBuf],
}

/// The document.
#[derive(Debug, Serialize)]
struct JsonFleet<'a> {
    schema: &'static str,
    tool: ToolInfo,
    generated_us: u64,
    #[serde(serialize_with = "lossy_paths")]
    inputs: &'a [PathBuf],
    verdict: &'a str,
    exit_code: u8,
    problems: &'a str,
    expected_hosts: Option<usize>,
    missing_hosts: &'a [String],
    totals: JsonTotals<'a>,
    rows: Vec<JsonRow<'a>>,
    outliers: &'a Outliers,
    unreadable: &'a [LoadProblem],
    skipped: &'a [LoadProblem],
    notes: &'a [String],
}

fn row(r: &Row) -> JsonRow<'_> {
    JsonRow {
        host: &r.host,
        name: &r.name,
        label: r.label.as_deref(),
        machine_id: r.machine_id.as_deref(),
        device: &r.device,
        verdict: r.verdict(),
        findings: r.findings(),
        by_class: &r.by_class,
        unfinished: &r.unfinished,
        runs: &r.runs,
        corrupt_runs: r.corrupt_runs.iter().map(corrupt_run).collect(),
        ops: r.ops,
        elapsed_s: r.elapsed_s,
        iops: r.iops,
        mb_per_s: r.mb_per_s,
        latency: (r.latency_source != LatencySource::None).then_some(r.latency),
        latency_source: r.latency_source,
        latency_hdr: r.hist.as_ref().map(|h| h.to_v2_base64()),
        throttled: r.throttled,
        long_ios: r.long_ios,
        outlier: &r.outlier,
        bench: r.bench.iter().map(|(p, b)| bench(p, b)).collect(),
    }
}

/// Paths as text, a byte that is not UTF-8 shown as U+FFFD: serde refuses such a path, and one
/// odd file name in a results tree would otherwise cost the whole fleet JSON (and its exit 1).
fn lossy_paths<S: serde::Serializer>(paths: &&[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(paths.iter().map(|p| p.to_string_lossy()))
}

/// The fleet JSON, pretty-printed.
pub fn render(f: &Fleet, v: &FleetVerdict, inputs: &[PathBuf]) -> Result<Vec<u8>, ReportError> {
    let t = &f.totals;
    let hist = t.hist.as_ref().filter(|h| h.count() > 0);
    let doc = JsonFleet {
        schema: FLEET_SCHEMA,
        tool: ToolInfo::default(),
        generated_us: crate::report::sinks::clock::now_us(),
        inputs,
        verdict: &v.line,
        exit_code: v.code,
        problems: &v.problems,
        expected_hosts: f.expected,
        missing_hosts: &f.missing,
        totals: JsonTotals {
            runs: t.runs,
            hosts: t.hosts,
            rows: f.rows.len(),
            ops: t.ops,
            iops: t.iops,
            mb_per_s: t.mb_per_s,
            findings: t.by_class.values().sum(),
            by_class: &t.by_class,
            throttled: t.throttled,
            long_ios: t.long_ios,
            latency: hist.map(|h| h.latency()),
            latency_hdr: hist.map(|h| h.to_v2_base64()),
            runs_merged: t.runs_merged,
            not_mergeable: &t.not_mergeable,
        },
        rows: f.rows.iter().map(row).collect(),
        outliers: &f.outliers,
        unreadable: &f.unreadable,
        skipped: &f.skipped,
        notes: &f.notes,
    };
    Ok(serde_json::to_vec_pretty(&doc)?)
}
