//! The campaign's verdict and exit code, by the fleet report's rule: 1 when any row is
//! CORRUPT; otherwise 2 when any row is MISSING or ERROR (naming which); otherwise 0.
//! Corruption wins, but what is missing or in error is still named.

use super::row::{CutVerdict, Row};

/// At most this many rows are named per kind in the verdict line.
const NAMES_MAX: usize = 10;

/// The verdict of a campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignVerdict {
    /// 0, 1 or 2.
    pub code: u8,
    /// "Verdict: …".
    pub line: String,
    /// The MISSING and ERROR rows, in one sentence (empty when none).
    pub problems: String,
}

/// "node3 cycle 2, node3 cycle 3, … and 4 more".
fn names(rows: &[&Row]) -> String {
    let mut v: Vec<String> = rows
        .iter()
        .take(NAMES_MAX)
        .map(|r| format!("{} cycle {}", r.host, r.cycle))
        .collect();
    if rows.len() > NAMES_MAX {
        v.push(format!("and {} more", rows.len() - NAMES_MAX));
    }
    v.join(", ")
}

fn with(rows: &[Row], v: CutVerdict) -> Vec<&Row> {
    rows.iter().filter(|r| r.verdict == v).collect()
}

/// Judges the campaign from its rows.
pub fn judge(rows: &[Row], hosts: usize, cycles: u32) -> CampaignVerdict {
    let corrupt = with(rows, CutVerdict::Corrupt);
    let missing = with(rows, CutVerdict::Missing);
    let error = with(rows, CutVerdict::Error);
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!(
            "{} cycle(s) MISSING: {}",
            missing.len(),
            names(&missing)
        ));
    }
    if !error.is_empty() {
        parts.push(format!(
            "{} cycle(s) in ERROR: {}",
            error.len(),
            names(&error)
        ));
    }
    let problems = parts.join("; ");
    let (code, line) = if !corrupt.is_empty() {
        let head = format!(
            "Verdict: FAILED — corruption in {} cycle(s): {}",
            corrupt.len(),
            names(&corrupt)
        );
        match problems.is_empty() {
            true => (1, head),
            false => (1, format!("{head}; also {problems}")),
        }
    } else if !problems.is_empty() {
        (
            2,
            format!("Verdict: INCOMPLETE — no corruption found, but {problems}"),
        )
    } else {
        (
            0,
            format!(
                "Verdict: CLEAN — {hosts} host(s) × {cycles} cycle(s), every power cut survived"
            ),
        )
    };
    CampaignVerdict {
        code,
        line,
        problems,
    }
}
