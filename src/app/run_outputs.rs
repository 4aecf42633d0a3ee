//! A run's outputs beside the console: the evidence (XML log, dumps, JSON summary), the status
//! lines and the metrics textfile (each a sink), the JSON summary on stdout for `--json -`, and
//! the evidence bundle written at the end. Split from `simrun.rs`, which wires the run together.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::targets::ensure_ours;
use crate::config::RunSettings;
use crate::events::EventSink;
use crate::report::sinks::metrics::MetricsSink;
use crate::report::sinks::status::StatusSink;
use crate::report::views::bundle::BundleFile;
use crate::report::{Evidence, EvidenceOptions, RunInfo};

/// `--json -`: the final JSON summary on stdout (a closed pipe is no failure of the run).
pub(super) fn json_to_stdout(evidence: &Evidence) -> Result<(), crate::report::ReportError> {
    let mut doc = evidence.summary_json()?;
    doc.push(b'\n');
    match crate::exit::print_data(&doc) {
        Err(e) if !e.closed() => Err(crate::report::ReportError::io("standard output", e.0)),
        _ => Ok(()),
    }
}

/// Ends an offline command's evidence (`verify`, `restore`): its files written, and the JSON
/// summary on stdout when `--json -` asked for it there.
pub(super) fn finish_offline(evidence: &Evidence, json_stdout: bool) -> anyhow::Result<()> {
    evidence
        .finish()
        .map_err(|e| anyhow::anyhow!("writing the evidence failed: {e}"))?;
    if json_stdout {
        json_to_stdout(evidence)
            .map_err(|e| anyhow::anyhow!("writing the JSON summary failed: {e}"))?;
    }
    Ok(())
}

/// An output beside the console and the evidence, with what its failure to write is called.
pub(super) struct LiveOutput {
    /// What it writes, for the end-of-run warning ("the metrics file").
    pub what: &'static str,
    /// The sink.
    pub sink: Arc<dyn EventSink>,
}

/// Every output beside the console and the evidence that the settings ask for. A new output
/// is its sink's file in `report/`, its `pub mod` line, and one entry here (ARCHITECTURE.md,
/// "Adding things").
pub(super) fn live_outputs(settings: &RunSettings) -> Vec<LiveOutput> {
    [status_sink(settings), metrics_sink(settings)]
        .into_iter()
        .flatten()
        .collect()
}

/// `--status-interval`: a status line every interval, when stdout is not a terminal (there
/// the progress line shows the same).
fn status_sink(settings: &RunSettings) -> Option<LiveOutput> {
    use std::io::IsTerminal;
    let every = Duration::from_secs(settings.status_interval?);
    (!std::io::stdout().is_terminal()).then(|| LiveOutput {
        what: "status lines",
        sink: Arc::new(StatusSink::new(every)),
    })
}

/// `--metrics-textfile`: the Prometheus textfile, every `--status-interval` (10 s without).
fn metrics_sink(settings: &RunSettings) -> Option<LiveOutput> {
    let path = settings.metrics_textfile.clone()?;
    let every = Duration::from_secs(settings.status_interval.unwrap_or(10));
    Some(LiveOutput {
        what: "metrics file",
        sink: Arc::new(MetricsSink::new(path, every)),
    })
}

/// Warns, on stderr, of each live output that failed to write (the verdict stands).
pub(super) fn warn_failed(outputs: &[LiveOutput]) {
    for o in outputs {
        if let Some(e) = o.sink.take_error() {
            crate::exit::errln!("sqliosim: warning: writing the {} failed: {e}", o.what);
        }
    }
}

/// The XML log, the page dumps and the JSON summary beside it (unless `--no-json`).
pub(super) fn open_evidence(settings: &RunSettings, run_id: u64) -> anyhow::Result<Evidence> {
    ensure_ours(&settings.error_log, "SQLIOSIM_LOG", settings.force)?;
    if let Some(json) = &settings.json {
        ensure_ours(json, "sqliosim-summary", settings.force).map_err(|e| {
            anyhow::anyhow!("{e} (the JSON summary goes beside the XML log by default: --json FILE names another path, --no-json turns it off)")
        })?;
    }
    // Each run's dumps in a directory of its own, so none is ever read as another run's.
    let dumps = settings
        .error_log
        .parent()
        .map(|d| super::previous::dump_dir(&d.join("dumps"), &super::previous::id_text(run_id)));
    let opts = EvidenceOptions {
        log: Some(settings.error_log.clone()),
        dump_dir: dumps,
        json: settings.json.clone(),
        overwrite_foreign: settings.force,
        ..EvidenceOptions::default()
    };
    let run = RunInfo {
        seed: Some(settings.seed),
        run_id: Some(run_id),
        command_line: crate::report::sinks::evidence::command_line(),
        config: serde_json::to_value(&settings.config).unwrap_or_default(),
        host_label: settings.host_label.clone(),
    };
    Evidence::create(opts, run).map_err(|e| {
        anyhow::anyhow!(
            "cannot write the error log {}: {e}",
            settings.error_log.display()
        )
    })
}

/// `--bundle`: the configuration, log, JSON, dumps and report in one archive; the dumps read
/// through the directory the run wrote them into (`evidence`'s), never by path again.
pub(super) fn write_bundle(
    settings: &RunSettings,
    evidence: &Evidence,
    out: &Path,
) -> anyhow::Result<()> {
    let input = settings
        .json
        .clone()
        .unwrap_or_else(|| settings.error_log.clone());
    let mut extra = Vec::new();
    if let crate::config::ConfigSource::File(p) | crate::config::ConfigSource::WorkingDir(p) =
        &settings.source
    {
        extra.push(BundleFile::disk(p, "config"));
    }
    let dumps = evidence.dumps_opened();
    crate::report::views::bundle::write_for_run(&input, &settings.error_log, dumps, &extra, out)
        .map_err(|e| anyhow::anyhow!("cannot write the bundle {}: {e}", out.display()))?;
    Ok(())
}
