//! One run as the fleet report sees it: the host that ran it, how it ended, and per device
//! under its files the counters, rates and latency histogram — built from what
//! [`crate::report::readers::load::load`] read (a JSON summary of schema /1 or /2, or an XML log).

use std::path::{Path, PathBuf};

use crate::report::facts::sysinfo::SystemInfo;
use crate::report::facts::UNKNOWN;
use crate::report::readers::load::{InputKind, RunEvidence};
use crate::report::sinks::json::JsonReport;

use super::device::{DeviceKey, DevicePart};
use super::evidence::EvidencePaths;
use super::parts::parts_of;
use super::xmlinfo::{self, LogHost};

/// How a run ended, as far as its file tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It ran its planned course (or stopped on a finding) and wrote its final summary.
    Finished,
    /// It did not finish; the reason, in words ("interrupted by SIGINT after 6 s of 30 s").
    Unfinished(String),
}

/// One run.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The file read.
    pub path: PathBuf,
    /// "sqliosim-summary/1", "sqliosim-summary/2", or "xml log".
    pub source: String,
    /// `host.hostname`, else `system.hostname`, else the file's path (no host known).
    pub host: String,
    /// /etc/machine-id of the host, when known.
    pub machine_id: Option<String>,
    /// The run's `--host-label` (an inventory name), when given.
    pub label: Option<String>,
    /// Where the run's page dumps and evidence bundle are, when it left any.
    pub evidence: EvidencePaths,
    /// How it ended.
    pub ending: Ending,
    /// One entry per device under its files (at least one).
    pub parts: Vec<DevicePart>,
    /// I/Os outstanding for more than 15 s, from the XML log of the run (None: no log here).
    pub long_ios: Option<u64>,
    /// The XML log of the run that was read (the input, or the log beside the JSON).
    pub log: Option<PathBuf>,
    /// Things worth saying about the file (an unreadable histogram, …).
    pub notes: Vec<String>,
    /// The capacity run beside it (`run --bench`), when its JSON summary has one.
    pub bench: Option<crate::report::sinks::bench_figures::BenchFigures>,
    /// When the run started and when it ended (else last wrote its summary), µs since the
    /// epoch, from its JSON summary (None: an XML log alone).
    pub span_us: Option<(u64, u64)>,
}

impl RunRecord {
    /// All integrity findings of the run.
    pub fn findings(&self) -> u64 {
        self.parts.iter().flat_map(|p| p.by_class.values()).sum()
    }

    /// True when every device part carries a latency histogram.
    pub fn mergeable(&self) -> bool {
        self.parts.iter().all(|p| p.hist.is_some())
    }

    /// Builds the record of a file read by [`crate::report::readers::load::load`]; `log_text` is the
    /// XML log of the run when there is one (the input itself, or the log beside a JSON).
    pub fn from_loaded(l: &RunEvidence, log_text: Option<&str>) -> RunRecord {
        let mut notes = Vec::new();
        let long_ios = log_text.map(xmlinfo::long_ios);
        let mut rec = match (&l.json, l.kind) {
            (Some(doc), InputKind::Json) => from_json(l, doc, &mut notes),
            _ => from_log(l, log_text.map(xmlinfo::host_of).unwrap_or_default()),
        };
        rec.long_ios = long_ios;
        rec.notes.extend(notes);
        rec
    }
}

/// True when the summary is one `sqliosim verify` wrote (its subcommand: the first argument
/// that is not an option).
fn is_verify(doc: &JsonReport) -> bool {
    doc.command_line
        .iter()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .is_some_and(|a| a == "verify")
}

fn from_json(l: &RunEvidence, doc: &JsonReport, notes: &mut Vec<String>) -> RunRecord {
    if is_verify(doc) {
        notes.push(
            "a `sqliosim verify` of a file set at rest (after a cut or a restart), not a burn-in run: its verdict is of the files, its figures are the verify's own reads".into(),
        );
    }
    let host = doc
        .host
        .as_ref()
        .map(|h| h.hostname.clone())
        .filter(|h| !h.is_empty())
        .or_else(|| doc.system.as_ref().map(|s| s.hostname.clone()))
        .filter(|h| !h.is_empty() && h != UNKNOWN);
    let devices = doc.system.as_ref().map(device_map).unwrap_or_default();
    let known = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
    RunRecord {
        path: l.path.clone(),
        source: doc.schema.clone(),
        host: host.unwrap_or_else(|| l.path.display().to_string()),
        machine_id: doc.host.as_ref().and_then(|h| known(&h.machine_id)),
        label: doc.host.as_ref().and_then(|h| known(&h.label)),
        evidence: EvidencePaths::of_json(&l.path, doc),
        ending: json_ending(l, doc),
        parts: parts_of(l, &devices, notes),
        long_ios: None,
        log: None,
        notes: Vec::new(),
        bench: doc.bench.clone(),
        span_us: Some((doc.started_us, doc.ended_us.unwrap_or(doc.updated_us))),
    }
}

fn from_log(l: &RunEvidence, info: LogHost) -> RunRecord {
    let ending = if l.complete {
        Ending::Finished
    } else if l.truncated {
        Ending::Unfinished("the XML log was cut short (killed, or still running)".into())
    } else {
        Ending::Unfinished("the XML log has no final summary (killed, or still running)".into())
    };
    let mut notes = Vec::new();
    let parts = parts_of(l, &info.devices, &mut notes);
    RunRecord {
        path: l.path.clone(),
        source: "xml log".into(),
        host: info
            .hostname
            .unwrap_or_else(|| l.path.display().to_string()),
        machine_id: info.machine_id,
        label: info.label,
        evidence: EvidencePaths::of_log(&l.path),
        ending,
        parts,
        long_ios: None,
        log: None,
        notes,
        bench: None,
        span_us: None,
    }
}

/// Test file path → device, from the system information of a JSON summary.
fn device_map(sys: &SystemInfo) -> Vec<(String, DeviceKey)> {
    sys.files
        .iter()
        .map(|f| {
            (
                f.path.display().to_string(),
                DeviceKey::from_info(&f.device),
            )
        })
        .collect()
}

fn json_ending(l: &RunEvidence, doc: &JsonReport) -> Ending {
    if l.truncated {
        return Ending::Unfinished(
            "the JSON summary was cut short (killed, or still running)".into(),
        );
    }
    let stop = doc.stop.as_ref();
    match doc.outcome.as_str() {
        "interrupted" => Ending::Unfinished(signal_words(doc)),
        "environment_error" => Ending::Unfinished(format!(
            "stopped on an environment error: {}",
            doc.environment_error.as_deref().unwrap_or("(no detail)")
        )),
        _ if stop.is_some_and(|s| s.reason == "signal") => Ending::Unfinished(signal_words(doc)),
        _ if !doc.complete => {
            Ending::Unfinished("no final summary (still running, or killed)".into())
        }
        _ => Ending::Finished,
    }
}

/// "interrupted by SIGINT after 6 s of 30 s".
fn signal_words(doc: &JsonReport) -> String {
    let Some(stop) = &doc.stop else {
        return "interrupted".into();
    };
    let sig = stop.signal.as_deref().unwrap_or("a signal");
    match stop.planned_s {
        Some(p) => format!(
            "interrupted by {sig} after {:.0} s of {p:.0} s",
            stop.after_s
        ),
        None => format!("interrupted by {sig} after {:.0} s", stop.after_s),
    }
}

/// The path of the XML log of the run summarised by the JSON at `json_path`: the file its `log`
/// field names, looked for beside the JSON (results are usually copied from their host), else
/// the contract's sibling name (`x.log.json` → `x.log.xml`).
pub fn log_beside(json_path: &Path, doc: &JsonReport) -> Option<PathBuf> {
    let dir = json_path.parent()?;
    if let Some(name) = doc.log.as_ref().and_then(|p| p.file_name()) {
        let p = dir.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    let sibling = json_path.with_extension("xml");
    sibling.is_file().then_some(sibling)
}
