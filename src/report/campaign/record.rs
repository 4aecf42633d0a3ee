//! The records of one cycle, parsed: `cut.json` (the cut and whether the host came back),
//! `verify.rc` (verify's exit code), `verify.json` (a `sqliosim-summary/*` document: its
//! outcome, findings by class and, where verify wrote one, its `judgement`) and the
//! `unsafe_shutdowns` lines of `smart-before.txt` / `smart-after.txt`. Every field the
//! contract marks optional stays an `Option`: an older verify has no `judgement`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `cut.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Cut {
    /// The cycle it says it is.
    pub cycle: Option<u64>,
    /// The host it says it is.
    pub host: Option<String>,
    /// When the power was cut, microseconds since the Unix epoch.
    pub cut_at_us: Option<u64>,
    /// Seconds the load ran before the cut.
    pub waited_s: Option<f64>,
    /// The cut command's exit code.
    pub cut_rc: Option<i64>,
    /// Whether the host came back.
    pub came_back: Option<bool>,
    /// Seconds from the cut until the host answered (null when it did not).
    pub back_after_s: Option<f64>,
    /// Whether the cycle's run was a resume of the previous cycle's.
    pub resumed: Option<bool>,
    /// The run's exit code when it had ended by itself before the cut (refused or failed):
    /// the cut found no run under load.
    pub run_exit_before_cut: Option<i64>,
}

/// `judgement.journal` of verify.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JournalFacts {
    /// "local", "witness" or "none".
    pub source: Option<String>,
    /// The last batch the journal holds.
    pub last_batch: Option<u64>,
    /// When that batch was recorded, microseconds since the Unix epoch.
    pub last_batch_us: Option<u64>,
    /// Whether the run had shut down cleanly.
    pub clean_shutdown: Option<bool>,
}

/// `judgement.witness` of verify.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WitnessFacts {
    /// The witness's address.
    pub addr: Option<String>,
    /// The last batch the witness recorded.
    pub record_batch: Option<u64>,
    /// The last batch of the local journal.
    pub local_batch: Option<u64>,
    /// What the device was held to: "witness", "local" or "none".
    pub held_to: Option<String>,
    /// Pages owed that only the witness knew of.
    pub owed_only_witness: Option<u64>,
    /// Batches the device acknowledged after the witness's last record.
    pub acked_after_witness_batches: Option<u64>,
    /// Pages in those batches.
    pub acked_after_witness_pages: Option<u64>,
}

/// `judgement` of verify.json: what the scan held the device to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Judgement {
    /// Pages read.
    pub pages_checked: Option<u64>,
    /// Pages the journal said must hold a generation.
    pub pages_owed: Option<u64>,
    /// Pages never written.
    pub never_written: Option<u64>,
    /// Pages newer than the journal's last record (landed after it).
    pub newer_than_journal: Option<u64>,
    /// Torn pages the rules allow (a write in flight at the cut).
    pub allowed_tears: Option<u64>,
    /// Log blocks read.
    pub log_blocks: Option<u64>,
    /// The journal the scan was held to.
    pub journal: Option<JournalFacts>,
    /// The witness's record, when verify asked one.
    pub witness: Option<WitnessFacts>,
}

/// One finding of verify.json: only its class is read.
#[derive(Debug, Deserialize)]
struct FindingClassOnly {
    class: String,
}

/// verify.json as read (unknown fields ignored).
#[derive(Debug, Deserialize)]
struct VerifyDoc {
    schema: Option<String>,
    outcome: Option<String>,
    #[serde(default)]
    findings: Vec<FindingClassOnly>,
    findings_total: Option<u64>,
    #[serde(default)]
    suppressed: BTreeMap<String, u64>,
    environment_error: Option<String>,
    judgement: Option<Judgement>,
}

/// What the report takes from verify.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VerifyFacts {
    /// "clean", "findings", "environment_error"…
    pub outcome: Option<String>,
    /// Integrity findings by class (those logged in full and those past the cap).
    pub by_class: BTreeMap<String, u64>,
    /// Integrity findings in all.
    pub findings: u64,
    /// The environment error that stopped verify, if one did.
    pub environment_error: Option<String>,
    /// The judgement, when this verify writes one.
    pub judgement: Option<Judgement>,
}

/// The class under which findings counted in `findings_total` but not listed are shown.
pub const UNLISTED: &str = "unlisted";

/// Parses verify.json: a `sqliosim-summary/*` document.
pub fn verify(bytes: &[u8]) -> Result<VerifyFacts, String> {
    let doc: VerifyDoc = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    match doc.schema.as_deref() {
        Some(s) if s.starts_with("sqliosim-summary/") => {}
        Some(s) => return Err(format!("schema \"{s}\" is not a sqliosim summary")),
        None => return Err("no \"schema\": not a sqliosim summary".into()),
    }
    let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
    for f in &doc.findings {
        *by_class.entry(f.class.clone()).or_default() += 1;
    }
    // Error messages past the cap are not integrity findings (as `report` counts them).
    for (class, n) in doc.suppressed.iter().filter(|(c, _)| *c != "error_message") {
        *by_class.entry(class.clone()).or_default() += n;
    }
    let listed: u64 = by_class.values().sum();
    let total = doc.findings_total.unwrap_or(0);
    if total > listed {
        by_class.insert(UNLISTED.into(), total - listed);
    }
    Ok(VerifyFacts {
        outcome: doc.outcome,
        findings: by_class.values().sum(),
        by_class,
        environment_error: doc.environment_error,
        judgement: doc.judgement,
    })
}

/// Parses cut.json.
pub fn cut(bytes: &[u8]) -> Result<Cut, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not the cut record: {e}"))
}

/// Parses verify.rc: an exit code as text.
pub fn exit_code(bytes: &[u8]) -> Result<i32, String> {
    let text = String::from_utf8_lossy(bytes);
    text.trim()
        .parse()
        .map_err(|_| format!("not an exit code: \"{}\"", text.trim().escape_debug()))
}

/// The `DEVICE unsafe_shutdowns N` lines of a SMART file; lines not of that form are named in
/// the second list (by number).
pub fn smart(bytes: &[u8]) -> (BTreeMap<String, u64>, Vec<usize>) {
    let mut counts = BTreeMap::new();
    let mut odd = Vec::new();
    for (i, line) in String::from_utf8_lossy(bytes).lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            [dev, "unsafe_shutdowns", n] => match n.parse::<u64>() {
                Ok(n) => {
                    counts.insert((*dev).to_string(), n);
                }
                Err(_) => odd.push(i + 1),
            },
            _ => odd.push(i + 1),
        }
    }
    (counts, odd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_count_the_suppressed_and_the_unlisted() {
        let doc = br#"{"schema":"sqliosim-summary/2","outcome":"findings",
            "findings":[{"class":"lost_write"},{"class":"torn_write"}],
            "suppressed":{"lost_write":3,"error_message":9},"findings_total":7}"#;
        let v = verify(doc).expect("parsed");
        assert_eq!(v.findings, 7);
        assert_eq!(v.by_class["lost_write"], 4);
        assert_eq!(v.by_class[UNLISTED], 2);
        assert!(v.judgement.is_none());
    }

    #[test]
    fn another_schema_is_refused() {
        assert!(verify(br#"{"schema":"sqliosim-fleet/1"}"#).is_err());
        assert!(verify(br#"{"outcome":"clean"}"#).is_err());
    }

    #[test]
    fn smart_lines_are_read_and_odd_ones_named() {
        let (c, odd) = smart(
            b"/dev/nvme0n1 unsafe_shutdowns 17\n\nsmartctl: oops\n/dev/sda unsafe_shutdowns x\n",
        );
        assert_eq!(c.get("/dev/nvme0n1"), Some(&17));
        assert_eq!(odd, vec![3, 4]);
    }

    #[test]
    fn exit_codes_are_trimmed_numbers() {
        assert_eq!(exit_code(b"1\n"), Ok(1));
        assert!(exit_code(b"").is_err());
        assert!(exit_code(b"one").is_err());
    }
}
