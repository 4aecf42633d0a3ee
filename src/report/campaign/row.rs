//! One row per host per cycle: its verdict (CLEAN, CORRUPT, MISSING, ERROR; judged in
//! [`super::judge`]), why, the notes, and the figures the table shows, from the cycle's files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::files::{CycleFiles, Got};
use super::record::{Cut, VerifyFacts};
use super::smart::Shutdowns;

/// The verdict of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CutVerdict {
    /// Verify exited 0 and found nothing.
    Clean,
    /// Verify found integrity findings (or exited 1).
    Corrupt,
    /// The host was not cut in this cycle, or did not come back.
    Missing,
    /// The host came back but there is no verdict to read.
    Error,
}

impl CutVerdict {
    /// The word shown.
    pub fn word(self) -> &'static str {
        match self {
            CutVerdict::Clean => "CLEAN",
            CutVerdict::Corrupt => "CORRUPT",
            CutVerdict::Missing => "MISSING",
            CutVerdict::Error => "ERROR",
        }
    }
}

/// Batches and pages the device acknowledged after the witness's last record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Acked {
    /// Batches.
    pub batches: Option<u64>,
    /// Pages in them.
    pub pages: Option<u64>,
}

/// One host in one cycle.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The host.
    pub host: String,
    /// The cycle, from 1.
    pub cycle: u32,
    /// The verdict.
    pub verdict: CutVerdict,
    /// What made it CORRUPT, MISSING or ERROR (corruption first).
    pub why: Vec<String>,
    /// Warnings that do not change the verdict (unsafe shutdowns that did not rise by one, a
    /// cut command that failed).
    pub notes: Vec<String>,
    /// `hosts/HOST/cycle-K`.
    #[serde(serialize_with = "lossy_path")]
    pub dir: PathBuf,
    /// cut.json, when read.
    pub cut: Option<Cut>,
    /// Verify's exit code, when read.
    pub verify_rc: Option<i32>,
    /// What verify.json says, when read.
    pub verify: Option<VerifyFacts>,
    /// Writes that landed after the journal's last record: newer_than_journal + allowed_tears.
    pub in_flight: Option<u64>,
    /// Acknowledged after the witness's last record (the witness behind the local journal).
    pub acked_unwitnessed: Option<Acked>,
    /// Pages the journal said must hold a generation.
    pub pages_owed: Option<u64>,
    /// Lost writes and lost files.
    pub lost: u64,
    /// Torn writes the rules do not allow.
    pub torn: u64,
    /// Torn pages the rules allow.
    pub allowed_tears: Option<u64>,
    /// The other findings.
    pub other: u64,
    /// Unsafe-shutdown counts per device, before and after the cut.
    pub unsafe_shutdowns: Vec<Shutdowns>,
}

/// A path as text, a byte that is not UTF-8 shown as U+FFFD (serde refuses such a path).
pub(super) fn lossy_path<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

impl Row {
    /// A row not yet judged (ERROR until it is).
    pub fn new(host: &str, cycle: u32, dir: PathBuf) -> Row {
        Row {
            host: host.to_string(),
            cycle,
            verdict: CutVerdict::Error,
            why: Vec::new(),
            notes: Vec::new(),
            dir,
            cut: None,
            verify_rc: None,
            verify: None,
            in_flight: None,
            acked_unwitnessed: None,
            pages_owed: None,
            lost: 0,
            torn: 0,
            allowed_tears: None,
            other: 0,
            unsafe_shutdowns: Vec::new(),
        }
    }

    /// Integrity findings in all.
    pub fn findings(&self) -> u64 {
        self.verify.as_ref().map_or(0, |v| v.findings)
    }

    /// "lost_write 2, torn_write 1" ("-" when none).
    pub fn classes(&self) -> String {
        let by = self.verify.as_ref().map(|v| &v.by_class);
        let parts: Vec<String> = by
            .into_iter()
            .flatten()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        match parts.is_empty() {
            true => "-".into(),
            false => parts.join(", "),
        }
    }

    /// verify.json of the row.
    pub fn verify_json(&self) -> PathBuf {
        self.dir.join("verify.json")
    }
}

/// Where a host stands before a cycle: still in the campaign, or gone since a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Still in.
    No,
    /// Did not come back after the cut of that cycle.
    NotBack(u32),
    /// Not cut since that cycle.
    NotCut(u32),
}

impl Left {
    /// Where the host stands after `row`.
    pub fn after(self, row: &Row, files: &CycleFiles) -> Left {
        let came_back = row.cut.as_ref().and_then(|c| c.came_back);
        match (self, &files.cut, came_back) {
            (Left::No, _, Some(false)) => Left::NotBack(row.cycle),
            (Left::No, Got::Absent, _) if files.refused.is_none() => Left::NotCut(row.cycle),
            (_, Got::Bytes(_), Some(true)) => Left::No,
            (left, _, _) => left,
        }
    }
}

/// Findings of a row by class, for sums.
pub fn by_class(rows: &[Row]) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for v in rows.iter().filter_map(|r| r.verify.as_ref()) {
        for (c, n) in &v.by_class {
            *sum.entry(c.clone()).or_default() += n;
        }
    }
    sum
}
