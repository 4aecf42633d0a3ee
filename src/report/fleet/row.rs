//! One row of the fleet report: a (host, device) pair with its runs' figures merged, how its
//! percentiles were had ([`LatencySource`]) and its verdict ([`HostVerdict`]). `merge` builds
//! the rows; naming them (`identity`), the outlier analysis and every output read them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::stats::{Latency, LatencyHistogram};

use super::device::DeviceKey;
use super::evidence::EvidencePaths;

/// Where a row's percentiles come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencySource {
    /// Merged from the histograms of all its runs.
    Merged,
    /// One run without a histogram: its percentiles as it recorded them (not mergeable).
    Recorded,
    /// Several runs, not all with a histogram: merged from those that have one.
    Partial,
    /// No latency known.
    None,
}

/// The verdict of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostVerdict {
    /// Integrity findings (exit code 1).
    Corruption,
    /// A run did not finish (exit code 2 unless another host found corruption).
    Unfinished,
    /// Every run finished without findings.
    Clean,
}

impl HostVerdict {
    /// "CORRUPTION", "UNFINISHED", "CLEAN".
    pub fn word(self) -> &'static str {
        match self {
            HostVerdict::Corruption => "CORRUPTION",
            HostVerdict::Unfinished => "UNFINISHED",
            HostVerdict::Clean => "CLEAN",
        }
    }
}

/// A run of a row that found corruption, and where its evidence is.
#[derive(Debug, Clone)]
pub struct CorruptRun {
    /// Its result file.
    pub path: PathBuf,
    /// Its integrity findings on the row's device.
    pub findings: u64,
    /// Its page dumps and bundle.
    pub evidence: EvidencePaths,
}

/// One host and device.
#[derive(Debug, Clone)]
pub struct Row {
    /// Host name, as the run recorded it.
    pub host: String,
    /// The name the row is shown by ([`super::identity::name_rows`]): the host name, qualified by the
    /// label or machine id where needed.
    pub name: String,
    /// What tells the host apart from others ([`super::identity::key`]).
    pub key: String,
    /// The `--host-label` of its runs, when given.
    pub label: Option<String>,
    /// Machine id, when known.
    pub machine_id: Option<String>,
    /// Its runs that found corruption (in the order read).
    pub corrupt_runs: Vec<CorruptRun>,
    /// Device.
    pub device: DeviceKey,
    /// The files its figures come from.
    pub runs: Vec<PathBuf>,
    /// Integrity findings by class.
    pub by_class: BTreeMap<String, u64>,
    /// Why runs did not finish ("path: reason").
    pub unfinished: Vec<String>,
    /// Reads and writes.
    pub ops: u64,
    /// Seconds covered.
    pub elapsed_s: f64,
    /// Reads and writes per second (duration-weighted over its runs).
    pub iops: f64,
    /// MB/s (duration-weighted over its runs).
    pub mb_per_s: f64,
    /// Percentiles (see `latency_source`).
    pub latency: Latency,
    /// Where `latency` comes from.
    pub latency_source: LatencySource,
    /// Merged histogram of the runs that carry one.
    pub hist: Option<LatencyHistogram>,
    /// Times I/O was throttled.
    pub throttled: u64,
    /// I/Os outstanding for more than 15 s (None when no run had its XML log here).
    pub long_ios: Option<u64>,
    /// The measures on which the row is an outlier ("iops", "p99").
    pub outlier: Vec<&'static str>,
    /// The capacity runs beside its runs (`run --bench`), each with the file it came from, in
    /// the order read (a run's bench goes in the row of its first device).
    pub bench: Vec<(PathBuf, crate::report::sinks::bench_figures::BenchFigures)>,
}

impl Row {
    /// An empty row for `host` and `device`.
    pub fn new(host: &str, device: DeviceKey) -> Row {
        Row {
            host: host.to_string(),
            name: host.to_string(),
            key: host.to_string(),
            label: None,
            machine_id: None,
            corrupt_runs: Vec::new(),
            device,
            runs: Vec::new(),
            by_class: BTreeMap::new(),
            unfinished: Vec::new(),
            ops: 0,
            elapsed_s: 0.0,
            iops: 0.0,
            mb_per_s: 0.0,
            latency: Latency::default(),
            latency_source: LatencySource::None,
            hist: None,
            throttled: 0,
            long_ios: None,
            outlier: Vec::new(),
            bench: Vec::new(),
        }
    }

    /// All integrity findings.
    pub fn findings(&self) -> u64 {
        self.by_class.values().sum()
    }

    /// Its verdict.
    pub fn verdict(&self) -> HostVerdict {
        if self.findings() > 0 {
            HostVerdict::Corruption
        } else if !self.unfinished.is_empty() {
            HostVerdict::Unfinished
        } else {
            HostVerdict::Clean
        }
    }

    /// "class n, class n" (or "-").
    pub fn classes(&self) -> String {
        classes(&self.by_class)
    }
}

/// "lost_write 8, torn_write 4", or "-" when empty.
pub fn classes(by: &BTreeMap<String, u64>) -> String {
    if by.is_empty() {
        return "-".into();
    }
    let v: Vec<String> = by.iter().map(|(c, n)| format!("{c} {n}")).collect();
    v.join(", ")
}
