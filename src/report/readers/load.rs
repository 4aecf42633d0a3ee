//! Loading the evidence of a run for `sqliosim report`: an XML log (ours or SQLIOSim's) or a
//! JSON summary, complete or cut short.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::encoding::decode_evidence;
use crate::findings::Finding;
use crate::io::safefile::{Kind, SafeFileError, TooBig, Use};
use crate::stats::Summary;

use crate::report::error::ReportError;
use crate::report::readers::logparse::{parse_log, LogEntry};
use crate::report::readers::summary_lines::summary_from_lines;
use crate::report::sinks::json::{self, JsonReport};

/// What kind of file was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// An XML error log.
    XmlLog,
    /// A JSON summary.
    Json,
}

/// The evidence of a run, as far as the file holds it.
#[derive(Debug, Clone)]
pub struct RunEvidence {
    /// The file read.
    pub path: PathBuf,
    /// XML log or JSON summary.
    pub kind: InputKind,
    /// The file was cut short (a killed run); what could be read is here.
    pub truncated: bool,
    /// The run finished and wrote its final summary.
    pub complete: bool,
    /// Integrity findings, in full.
    pub findings: Vec<Finding>,
    /// Integrity errors found (logged in full or not), by class.
    pub by_class: BTreeMap<String, u64>,
    /// Error entries that are not integrity findings (their descriptions).
    pub other_errors: Vec<String>,
    /// Warning entries (their descriptions).
    pub warnings: Vec<String>,
    /// Statistics, if the file has them.
    pub summary: Option<Summary>,
    /// The JSON document, when the input was one.
    pub json: Option<JsonReport>,
    /// What carried the run's disk I/O, as described at its start.
    pub io_service: Option<String>,
    /// How a signal cut the run short ("SIGINT after 6 s of 30 s"), when one did.
    pub stopped_by: Option<String>,
    /// The log's entries as read (none when the input was a JSON summary).
    pub log: Vec<LogEntry>,
}

impl RunEvidence {
    /// Total integrity errors.
    pub fn integrity_errors(&self) -> u64 {
        self.by_class.values().sum()
    }

    /// Warnings the run logged: the WARNING entries of an XML log, or a JSON summary's
    /// `warnings_total` (the same count; the JSON keeps no warning texts).
    pub fn warning_count(&self) -> u64 {
        match (self.kind, &self.json) {
            (InputKind::Json, Some(d)) => d.warnings_total,
            _ => self.warnings.len() as u64,
        }
    }

    /// Errors that are not integrity findings: the XML log's other ERROR entries, or a JSON
    /// summary's `errors_total` less its `findings_total`.
    pub fn other_error_count(&self) -> u64 {
        match (self.kind, &self.json) {
            (InputKind::Json, Some(d)) => d.errors_total.saturating_sub(d.findings_total),
            _ => self.other_errors.len() as u64,
        }
    }
}

/// Reads an XML log or a JSON summary; an unreadable file is an error.
pub fn load(path: &Path) -> Result<RunEvidence, ReportError> {
    // A FIFO or device under the name is refused, not waited on, and one larger than its
    // kind may be is refused unread (docs/security.md); a JSON summary under another name is
    // held to its own, smaller limit once its first byte says what it is.
    let named_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let kind = if named_json {
        Kind::Summary
    } else {
        Kind::XmlLog
    };
    let bytes = crate::io::safefile::read_bounded(path, Use::Input, kind)?;
    summary_within_limit(path, &bytes)?;
    let unreadable = |reason: String| ReportError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    // UTF-16 with a BOM, as Windows SQLIOSim may save its log; UTF-8 otherwise.
    let text = decode_evidence(&bytes).map_err(|e| unreadable(e.to_string()))?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let (doc, truncated) = json::parse(trimmed).map_err(|e| unreadable(e.to_string()))?;
        return Ok(from_json(path, doc, truncated));
    }
    if trimmed.starts_with('<') {
        let parsed = parse_log(trimmed).map_err(unreadable)?;
        let seed = log_seed(&parsed.entries);
        let mut l = from_log(path, parsed.entries, parsed.truncated);
        if let Some(seed) = seed {
            add_sibling_json(&mut l, seed);
        }
        return Ok(l);
    }
    Err(unreadable("it starts with neither '<' nor '{'".into()))
}

/// Refuses a JSON summary larger than [`Kind::Summary`] allows (an XML log may be larger).
fn summary_within_limit(path: &Path, bytes: &[u8]) -> Result<(), SafeFileError> {
    let json = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let (size, limit) = (bytes.len() as u64, Kind::Summary.limit());
    if json && size > limit {
        return Err(SafeFileError::TooBig(Box::new(TooBig {
            path: path.to_path_buf(),
            size,
            limit,
            kind: Kind::Summary,
        })));
    }
    Ok(())
}

fn from_json(path: &Path, doc: JsonReport, truncated: bool) -> RunEvidence {
    let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
    for f in &doc.findings {
        *by_class.entry(f.class.as_str().into()).or_default() += 1;
    }
    for (class, n) in doc.suppressed.iter().filter(|(c, _)| *c != "error_message") {
        *by_class.entry(class.clone()).or_default() += n;
    }
    RunEvidence {
        path: path.to_path_buf(),
        kind: InputKind::Json,
        truncated,
        complete: doc.complete && !truncated,
        findings: doc.findings.clone(),
        by_class,
        other_errors: Vec::new(),
        warnings: Vec::new(),
        summary: doc.stats.clone(),
        io_service: doc.io_engine.as_ref().map(|e| e.describe()),
        stopped_by: doc.stop.as_ref().and_then(signal_stop),
        json: Some(doc),
        log: Vec::new(),
    }
}

/// The seed our log's configuration echo names ("Seed = N").
fn log_seed(entries: &[LogEntry]) -> Option<u64> {
    entries
        .iter()
        .filter(|e| e.attr("Func") == "Config::Echo")
        .find_map(|e| e.text.strip_prefix("Seed = ")?.trim().parse().ok())
}

/// Takes the rich data (timeline, actors, histograms, system, tool) from the JSON summary the
/// same run wrote beside its XML log (same seed), when there is one: a plain `sqliosim run`
/// leaves both. The findings and the verdict still come from the log.
fn add_sibling_json(l: &mut RunEvidence, seed: u64) {
    let path = json::beside_log(&l.path);
    let Some(text) = crate::io::safefile::read_bounded(&path, Use::Input, Kind::Summary)
        .ok()
        .and_then(|b| decode_evidence(&b).ok())
    else {
        return;
    };
    let Ok((doc, _)) = json::parse(text.trim_start()) else {
        return;
    };
    if doc.seed != Some(seed) || !doc.schema.starts_with("sqliosim-summary/") {
        return;
    }
    if doc.stats.is_some() {
        l.summary = doc.stats.clone();
    }
    if l.io_service.is_none() {
        l.io_service = doc.io_engine.as_ref().map(|e| e.describe());
    }
    if l.stopped_by.is_none() {
        l.stopped_by = doc.stop.as_ref().and_then(signal_stop);
        l.complete &= l.stopped_by.is_none();
    }
    l.json = Some(doc);
}

/// "SIGINT after 6 s of 30 s" for a JSON `stop` that says a signal cut the run short.
fn signal_stop(stop: &crate::report::sinks::json::StopInfo) -> Option<String> {
    if stop.reason != "signal" {
        return None;
    }
    let name = stop.signal.as_deref().unwrap_or("a signal");
    let of = stop
        .planned_s
        .map_or_else(String::new, |p| format!(" of {p:.0} s"));
    Some(format!("{name} after {:.0} s{of}", stop.after_s))
}

/// An ERROR entry that reports bad page contents (ours carry FINDING; SQLIOSim's say so).
fn integrity_class(e: &LogEntry) -> Option<String> {
    if let Some(f) = &e.finding {
        return Some(f.class.as_str().into());
    }
    let t = e.text.as_str();
    (t.starts_with("Buffer validation failed")
        || e.attr("Func") == crate::report::sinks::log_entries::VALIDATE_FUNC)
        .then(|| "validation_failed".to_string())
}

fn from_log(path: &Path, entries: Vec<LogEntry>, truncated: bool) -> RunEvidence {
    let mut l = RunEvidence {
        path: path.to_path_buf(),
        kind: InputKind::XmlLog,
        truncated,
        complete: false,
        findings: Vec::new(),
        by_class: BTreeMap::new(),
        other_errors: Vec::new(),
        warnings: Vec::new(),
        summary: None,
        json: None,
        io_service: None,
        stopped_by: None,
        log: entries.clone(),
    };
    let mut summary_lines = Vec::new();
    for e in entries {
        match e.attr("TYPE") {
            "ERROR" => match integrity_class(&e) {
                Some(c) => {
                    *l.by_class.entry(c).or_default() += 1;
                    l.findings.extend(e.finding);
                }
                None if e.attr("Func") == crate::report::sinks::log_entries::DUMP_FUNC => {}
                None => l.other_errors.push(e.text),
            },
            "WARNING" if e.attr("Func") == crate::report::sinks::log_entries::STOP_SIGNAL_FUNC => {
                let by = e.text.split_once("stopped by ").map(|(_, r)| r);
                let by = by
                    .and_then(|r| r.split_once(':'))
                    .map(|(b, _)| b.to_string());
                l.stopped_by = Some(by.unwrap_or_else(|| "a signal".into()));
                l.warnings.push(e.text);
            }
            "WARNING" => {
                add_suppressed(&mut l.by_class, &e.text);
                l.warnings.push(e.text);
            }
            _ if e.attr("Func") == crate::stats::SQLIOSIM_SUMMARY_FUNC => {
                summary_lines.push(e.text)
            }
            _ if e.attr("Func") == crate::report::facts::io_service::LOG_FUNC => {
                let text = e.text.strip_prefix("I/O engine: ").unwrap_or(&e.text);
                l.io_service = Some(text.to_string());
            }
            _ => {}
        }
    }
    l.complete = !summary_lines.is_empty() && !truncated && l.stopped_by.is_none();
    l.summary = summary_from_lines(&summary_lines);
    l
}

/// Adds the classes counted in our final "N further errors were suppressed … (class n, …)."
fn add_suppressed(by_class: &mut BTreeMap<String, u64>, text: &str) {
    if !text.contains("further errors were suppressed") {
        return;
    }
    let Some(list) = text.rsplit_once('(').map(|(_, l)| l.trim_end_matches(").")) else {
        return;
    };
    for item in list.split(", ") {
        if let Some((class, n)) = item.rsplit_once(' ') {
            if let (Ok(n), true) = (n.parse::<u64>(), class != "error_message") {
                *by_class.entry(class.to_string()).or_default() += n;
            }
        }
    }
}
