//! `sqliosim report CAMPAIGN_DIR`: the report of a power-cycle campaign, one row per host per
//! power cut.
//!
//! A campaign (run by the Ansible playbook: load, cut the power, wait for the host, `sqliosim
//! verify --json`, resume; N times per host) leaves `campaign.json` and
//! `hosts/HOST/cycle-K/{cut.json, verify.json, verify.rc, smart-before.txt, smart-after.txt}`
//! (docs/fleet.md, "Campaign report"). [`spec`] reads and checks `campaign.json`, [`files`]
//! reads each cycle's files without following a symlink out of the tree, [`record`] parses
//! them, [`judge`] judges each host and cycle into a [`row`] (with [`smart`] for the drives'
//! unsafe-shutdown counts), [`verdict`] decides the exit code, and [`table`], [`html`],
//! [`json`] and [`junit`] render the result.

pub mod files;
pub mod html;
pub mod json;
pub mod judge;
pub mod junit;
pub mod record;
pub mod row;
pub mod smart;
pub mod spec;
pub mod table;
pub mod verdict;

use std::path::Path;

use crate::io::safefile::Dir;

use super::fleet::Outputs;
use super::ReportError;
use files::Place;
use row::{Left, Row};
pub use spec::{Campaign, CampaignError, CAMPAIGN_FILE};
pub use verdict::CampaignVerdict;

/// A campaign and its rows, host by host, cycle by cycle.
#[derive(Debug, Clone)]
pub struct Report {
    /// What `campaign.json` says.
    pub campaign: Campaign,
    /// One per host per cycle, in `hosts` order then by cycle.
    pub rows: Vec<Row>,
}

/// True when `dir` is a campaign directory: it holds a `campaign.json` (of any kind: a
/// symlink there is then refused by the campaign report, not passed to the fleet report).
pub fn is_campaign(dir: &Path) -> bool {
    dir.is_dir() && dir.join(CAMPAIGN_FILE).symlink_metadata().is_ok()
}

/// Reads the campaign in `dir` and judges every host in every cycle.
pub fn build(dir: &Path) -> Result<Report, CampaignError> {
    let top = Dir::open(dir)?;
    let campaign = spec::load(&top)?;
    let hosts = Place::hosts(&top);
    let witness = campaign.witness.is_some();
    let mut rows = Vec::with_capacity(campaign.hosts.len() * campaign.cycles as usize);
    for host in &campaign.hosts {
        let place = hosts.child(host);
        let mut left = Left::No;
        for k in 1..=campaign.cycles {
            let path = dir.join("hosts").join(host).join(format!("cycle-{k}"));
            let files = files::read_cycle(&place, k, path);
            let r = judge::judge(host, k, &files, left, witness);
            left = left.after(&r, &files);
            rows.push(r);
        }
    }
    Ok(Report { campaign, rows })
}

/// Writes one output through a temporary renamed over it (never through a planted name).
fn write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    Ok(crate::io::safefile::replace(path, bytes)?)
}

/// Writes the requested files; returns one line per file written.
pub fn write_outputs(
    rep: &Report,
    v: &CampaignVerdict,
    out: &Outputs,
) -> Result<Vec<String>, ReportError> {
    let mut said = Vec::new();
    if let Some(p) = &out.json {
        write(p, &json::render(rep, v)?)?;
        said.push(format!("Campaign JSON written to {}", p.display()));
    }
    if let Some(p) = &out.junit {
        write(p, &junit::render(rep))?;
        said.push(format!("JUnit XML written to {}", p.display()));
    }
    if let Some(p) = &out.html {
        write(p, html::render(rep, v).as_bytes())?;
        said.push(format!("Campaign HTML report written to {}", p.display()));
    }
    Ok(said)
}

/// The campaign report of `dir`: writes `out`, and returns the verdict (whose `code` is the
/// exit code), the text for stdout (the table, then the files written) and whether writing
/// the files failed (which must not hide corruption the verdict found). An unreadable or
/// invalid `campaign.json` is an error: nothing is reported.
pub fn run(
    dir: &Path,
    out: &Outputs,
) -> Result<(CampaignVerdict, String, Result<(), ReportError>), CampaignError> {
    let rep = build(dir)?;
    let v = verdict::judge(&rep.rows, rep.campaign.hosts.len(), rep.campaign.cycles);
    let mut text = table::render(&rep, &v);
    let written = write_outputs(&rep, &v, out).map(|lines| {
        for line in lines {
            text.push_str(&line);
            text.push('\n');
        }
    });
    Ok((v, text, written))
}
