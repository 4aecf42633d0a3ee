//! `sqliosim report` over many runs: the fleet report.
//!
//! [`loader`] finds and reads the results (JSON summaries of schema /1 and /2, XML logs where a
//! run has no JSON), [`record`] turns each into a host, its devices and how it ended,
//! [`merge`] builds one row per (host, device) and the fleet totals from merged HdrHistograms
//! (a host told apart by [`identity`], its evidence found by [`evidence`]), [`expect`] names
//! the hosts of `--expect-hosts` that sent nothing,
//! [`outliers`] flags rows far from the fleet median, [`verdict`] decides the exit code, and
//! [`table`], [`json`], [`junit`] and [`html`] render the result. Documented in
//! docs/report-fleet.md.

mod charts;
pub mod device;
pub mod evidence;
pub mod expect;
pub mod html;
pub mod identity;
pub mod json;
pub mod junit;
pub mod loader;
pub mod merge;
pub mod outliers;
mod parts;
pub mod record;
pub mod row;
pub mod table;
pub mod verdict;
mod xmlinfo;

use std::path::{Path, PathBuf};

pub use merge::Fleet;
pub use row::Row;
pub use verdict::FleetVerdict;

use super::ReportError;

/// The files to write besides the terminal report.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The fleet page.
    pub html: Option<PathBuf>,
    /// The merged result as JSON (schema "sqliosim-fleet/1").
    pub json: Option<PathBuf>,
    /// JUnit XML.
    pub junit: Option<PathBuf>,
}

/// Reads and merges every result under `inputs`; `expected` (from `--expect-hosts`) names the
/// hosts that must have reported. Symlinks inside a directory walked are not followed.
pub fn build(inputs: &[PathBuf], expected: Option<&[String]>) -> Fleet {
    build_walk(inputs, expected, false)
}

/// As [`build`], following the symlinks inside the directories walked when `follow`
/// (`report --follow`).
pub fn build_walk(inputs: &[PathBuf], expected: Option<&[String]>, follow: bool) -> Fleet {
    let mut fleet = merge::build(loader::load(inputs, follow));
    if let Some(names) = expected {
        expect::check(&mut fleet, names);
    }
    fleet
}

/// Writes one output through a temporary renamed over it (never through a planted name).
fn write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    Ok(crate::io::safefile::replace(path, bytes)?)
}

/// Writes the requested files; returns one line per file written.
pub fn write_outputs(
    fleet: &Fleet,
    v: &FleetVerdict,
    inputs: &[PathBuf],
    out: &Outputs,
) -> Result<Vec<String>, ReportError> {
    let mut said = Vec::new();
    if let Some(p) = &out.json {
        let doc = json::render(fleet, v, inputs)
            .map_err(|e| ReportError::io(p, std::io::Error::other(e.to_string())))?;
        write(p, &doc)?;
        said.push(format!("Fleet JSON written to {}", p.display()));
    }
    if let Some(p) = &out.junit {
        write(p, &junit::render(fleet))?;
        said.push(format!("JUnit XML written to {}", p.display()));
    }
    if let Some(p) = &out.html {
        write(p, html::render(fleet, v).as_bytes())?;
        said.push(format!("Fleet HTML report written to {}", p.display()));
    }
    Ok(said)
}

/// The fleet report over `inputs`: writes `out`, and returns the verdict (whose `code` is the
/// exit code), the text for stdout (the table, then the files written) and whether writing
/// the files failed (which must not hide corruption the verdict found).
pub fn run(
    inputs: &[PathBuf],
    expected: Option<&[String]>,
    follow: bool,
    out: &Outputs,
) -> (FleetVerdict, String, Result<(), ReportError>) {
    let fleet = build_walk(inputs, expected, follow);
    let v = verdict::judge(&fleet);
    let mut text = table::render(&fleet, &v);
    let written = write_outputs(&fleet, &v, inputs, out).map(|lines| {
        for line in lines {
            text.push_str(&line);
            text.push('\n');
        }
    });
    (v, text, written)
}
