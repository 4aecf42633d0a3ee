//! The fleet's verdict and exit code: 1 when any host found corruption; otherwise 2 when a
//! result is unreadable, a run did not finish or an expected host sent nothing (naming which);
//! otherwise 0. Corruption wins
//! over unfinished, but both are named in the verdict line.

use super::merge::Fleet;
use super::row::HostVerdict;

/// The verdict of a fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetVerdict {
    /// 0, 1 or 2.
    pub code: u8,
    /// "Verdict: …".
    pub line: String,
    /// The unfinished runs and unreadable results, in one sentence (empty when none).
    pub problems: String,
}

/// Judges the fleet.
pub fn judge(f: &Fleet) -> FleetVerdict {
    let corrupt: Vec<String> = f
        .rows
        .iter()
        .filter(|r| r.verdict() == HostVerdict::Corruption)
        .map(|r| format!("{} ({})", r.name, r.device.name))
        .collect();
    let unfinished: Vec<String> = f
        .rows
        .iter()
        .filter(|r| !r.unfinished.is_empty())
        .map(|r| format!("{} ({})", r.name, r.device.name))
        .collect();
    let unreadable: Vec<String> = f
        .unreadable
        .iter()
        .map(|p| p.path.display().to_string())
        .collect();
    let mut parts = Vec::new();
    if !f.missing.is_empty() {
        parts.push(format!(
            "{} expected host(s) sent no result: {}",
            f.missing.len(),
            f.missing.join(", ")
        ));
    }
    if !unfinished.is_empty() {
        parts.push(format!(
            "{} did not finish: {}",
            unfinished.len(),
            unfinished.join(", ")
        ));
    }
    if !unreadable.is_empty() {
        parts.push(format!(
            "{} result(s) unreadable: {}",
            unreadable.len(),
            unreadable.join(", ")
        ));
    }
    if f.rows.is_empty() && unreadable.is_empty() {
        parts.push("no sqliosim result found in the inputs".into());
    }
    let problems = parts.join("; ");
    let (code, head) = if !corrupt.is_empty() {
        (
            1,
            format!("Verdict: FAILED — corruption on {}", corrupt.join(", ")),
        )
    } else if !problems.is_empty() {
        (
            2,
            "Verdict: INCOMPLETE — no corruption found, but".to_string(),
        )
    } else {
        (
            0,
            format!("Verdict: CLEAN — {} host/device(s) clean", f.rows.len()),
        )
    };
    let line = match (code, problems.is_empty()) {
        (_, true) => head,
        (1, false) => format!("{head}; also {problems}"),
        _ => format!("{head} {problems}"),
    };
    FleetVerdict {
        code,
        line,
        problems,
    }
}
