//! The verdict of one host in one cycle, from its files: CLEAN (verify exited 0 and found
//! nothing), CORRUPT (verify found something, or exited 1), MISSING (the host was not cut in
//! this cycle, or did not come back), ERROR (it came back but the verdict is not there to
//! read: no verify.json or verify.rc, verify exited 2 or with another code, a file
//! unreadable). Corruption wins over everything else; nothing unknown is CLEAN.

use super::files::{CycleFiles, Got};
use super::record::{self, Cut, VerifyFacts};
use super::row::{Acked, CutVerdict, Left, Row};
use super::smart;

/// What is found while judging, before the verdict.
#[derive(Default)]
struct Found {
    corrupt: Vec<String>,
    missing: Option<String>,
    errors: Vec<String>,
    notes: Vec<String>,
}

/// Judges the row of `host` in cycle `k` from its files; `left` says whether the host left the
/// campaign in an earlier cycle, `witness` whether the campaign had a witness.
pub fn judge(host: &str, k: u32, files: &CycleFiles, left: Left, witness: bool) -> Row {
    let mut row = Row::new(host, k, files.dir.clone());
    if let Some(why) = &files.refused {
        row.why.push(why.clone());
        return row;
    }
    let mut f = Found::default();
    row.cut = cut_of(files, host, k, left, &mut f);
    let came_back = row.cut.as_ref().and_then(|c| c.came_back) == Some(true);
    row.verify_rc = rc_of(files, came_back, &mut f);
    row.verify = verify_of(files, came_back, &mut f);
    judge_verify(&row, &mut f);
    figures(&mut row, witness, &mut f);
    if row.cut.is_some() {
        row.unsafe_shutdowns = smart::compare(files, &mut f.errors, &mut f.notes);
    }
    row.verdict = verdict(&row, &mut f);
    row.why = f.corrupt;
    row.why.extend(f.missing);
    row.why.extend(f.errors);
    row.notes = f.notes;
    row
}

fn named(files: &CycleFiles, name: &str, what: &str) -> String {
    format!("{}: {what}", files.dir.join(name).display())
}

/// Why a cycle without cut.json is MISSING.
fn not_cut(left: Left) -> String {
    const LEFT: &str = "not cut: the host left the campaign in an earlier cycle";
    match left {
        Left::NotBack(c) => format!("{LEFT} (cycle {c}: did not come back)"),
        Left::NotCut(c) => format!("{LEFT} (not cut since cycle {c})"),
        Left::No => {
            "not cut: no cut.json (the campaign did not cut this host in this cycle)".into()
        }
    }
}

fn cut_of(files: &CycleFiles, host: &str, k: u32, left: Left, f: &mut Found) -> Option<Cut> {
    let bytes = match &files.cut {
        Got::Bytes(b) => b,
        Got::Unreadable(why) => {
            f.errors.push(why.clone());
            return None;
        }
        Got::Absent => {
            f.missing = Some(not_cut(left));
            return None;
        }
    };
    let cut = match record::cut(bytes) {
        Ok(c) => c,
        Err(e) => {
            f.errors.push(named(files, "cut.json", &e));
            return None;
        }
    };
    if cut.cycle.is_some_and(|c| c != u64::from(k))
        || cut.host.as_deref().is_some_and(|h| h != host)
    {
        let says = format!(
            "says host {} cycle {}, filed under host {host} cycle {k}",
            cut.host.as_deref().unwrap_or("?"),
            cut.cycle.map_or("?".into(), |c| c.to_string())
        );
        f.errors.push(named(files, "cut.json", &says));
    }
    match cut.came_back {
        Some(true) => {}
        Some(false) => f.missing = Some("did not come back after the cut".into()),
        None => f.errors.push(named(
            files,
            "cut.json",
            "no \"came_back\": whether the host came back is unknown",
        )),
    }
    if let Some(rc) = cut.run_exit_before_cut {
        f.errors.push(format!(
            "the run had ended by itself (exit {rc}) before the cut: the cut found no run under load and tested nothing (see the cycle's run.stderr)"
        ));
    }
    if let Some(rc) = cut.cut_rc.filter(|rc| *rc != 0) {
        f.notes.push(format!(
            "the cut command exited {rc}: the power may not have been cut"
        ));
    }
    Some(cut)
}

/// A file verify leaves: required when the host came back.
fn required<'a>(
    files: &CycleFiles,
    got: &'a Got,
    name: &str,
    came_back: bool,
    f: &mut Found,
) -> Option<&'a [u8]> {
    match got {
        Got::Bytes(b) => Some(b),
        Got::Unreadable(why) => {
            f.errors.push(why.clone());
            None
        }
        Got::Absent if came_back => {
            let why =
                "missing: the host came back, but verify did not run or its result was not fetched";
            f.errors.push(named(files, name, why));
            None
        }
        Got::Absent => None,
    }
}

fn rc_of(files: &CycleFiles, came_back: bool, f: &mut Found) -> Option<i32> {
    let bytes = required(files, &files.verify_rc, "verify.rc", came_back, f)?;
    record::exit_code(bytes)
        .map_err(|e| f.errors.push(named(files, "verify.rc", &e)))
        .ok()
}

fn verify_of(files: &CycleFiles, came_back: bool, f: &mut Found) -> Option<VerifyFacts> {
    let bytes = required(files, &files.verify_json, "verify.json", came_back, f)?;
    record::verify(bytes)
        .map_err(|e| f.errors.push(named(files, "verify.json", &e)))
        .ok()
}

/// What verify's exit code and summary say, together.
fn judge_verify(row: &Row, f: &mut Found) {
    let findings = row.findings();
    if findings > 0 {
        f.corrupt.push(format!(
            "{findings} integrity finding(s): {} (details: sqliosim report {})",
            row.classes(),
            row.verify_json().display()
        ));
    }
    match row.verify_rc {
        Some(0) if findings > 0 => f.notes.push(format!(
            "verify exited 0 but verify.json lists {findings} finding(s)"
        )),
        Some(0) => clean_exit(row, f),
        Some(1) if findings == 0 => f.corrupt.push(
            "verify exited 1 (integrity findings), but verify.json lists none".into(),
        ),
        Some(1) | None => {}
        Some(2) => {
            let env = row.verify.as_ref().and_then(|v| v.environment_error.as_deref());
            let mut why = "verify exited 2 (usage, configuration or environment)".to_string();
            if let Some(e) = env {
                why = format!("{why}: {e}");
            }
            f.errors.push(why);
        }
        Some(n) => f.errors.push(format!(
            "verify exited {n}: not a verdict (3 is an internal failure; others a kill or a wrapper)"
        )),
    }
}

/// Verify exited 0 with no finding: CLEAN only when its summary says "clean" too.
fn clean_exit(row: &Row, f: &mut Found) {
    let Some(v) = &row.verify else { return };
    if v.outcome.as_deref() != Some("clean") {
        let outcome = v
            .outcome
            .as_ref()
            .map_or("absent".into(), |o| format!("\"{o}\""));
        f.errors.push(format!(
            "{}: outcome {outcome} with verify's exit code 0 and no finding: no verdict to trust",
            row.verify_json().display()
        ));
    }
}

/// The row's figures from verify.json's findings and judgement.
fn figures(row: &mut Row, witness: bool, f: &mut Found) {
    let Some(v) = &row.verify else { return };
    let class = |c: &str| v.by_class.get(c).copied().unwrap_or(0);
    row.lost = class("lost_write") + class("lost_file");
    row.torn = class("torn_write");
    row.other = v.findings.saturating_sub(row.lost + row.torn);
    let Some(j) = &v.judgement else { return };
    row.pages_owed = j.pages_owed;
    row.allowed_tears = j.allowed_tears;
    row.in_flight = match (j.newer_than_journal, j.allowed_tears) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    row.acked_unwitnessed = j.witness.as_ref().and_then(|w| {
        let (batches, pages) = (w.acked_after_witness_batches, w.acked_after_witness_pages);
        (batches.is_some() || pages.is_some()).then_some(Acked { batches, pages })
    });
    if witness && j.witness.is_none() {
        f.notes
            .push("the campaign has a witness, but verify held this host to none".into());
    }
}

fn verdict(row: &Row, f: &mut Found) -> CutVerdict {
    if !f.corrupt.is_empty() {
        CutVerdict::Corrupt
    } else if f.missing.is_some() {
        CutVerdict::Missing
    } else if !f.errors.is_empty() {
        CutVerdict::Error
    } else if row.verify_rc == Some(0) && row.verify.is_some() {
        CutVerdict::Clean
    } else {
        f.errors
            .push("no verdict: verify's exit code or summary is not there".into());
        CutVerdict::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(cut: &str, verify: Option<&str>, rc: Option<&str>) -> CycleFiles {
        let got = |s: Option<&str>| s.map_or(Got::Absent, |s| Got::Bytes(s.as_bytes().to_vec()));
        CycleFiles {
            dir: "hosts/h/cycle-1".into(),
            refused: None,
            cut: got(Some(cut).filter(|c| !c.is_empty())),
            verify_json: got(verify),
            verify_rc: got(rc),
            smart_before: Got::Absent,
            smart_after: Got::Absent,
        }
    }

    const BACK: &str = r#"{"cycle":1,"host":"h","came_back":true}"#;
    const CLEAN: &str = r#"{"schema":"sqliosim-summary/2","outcome":"clean","findings":[]}"#;

    #[test]
    fn clean_needs_exit_0_a_clean_summary_and_the_host_back() {
        let v = |f: &CycleFiles| judge("h", 1, f, Left::No, false).verdict;
        assert_eq!(v(&files(BACK, Some(CLEAN), Some("0\n"))), CutVerdict::Clean);
        assert_eq!(v(&files(BACK, Some(CLEAN), None)), CutVerdict::Error);
        assert_eq!(v(&files(BACK, None, Some("0"))), CutVerdict::Error);
        let no_word = r#"{"cycle":1,"host":"h"}"#;
        assert_eq!(
            v(&files(no_word, Some(CLEAN), Some("0"))),
            CutVerdict::Error
        );
        let other = r#"{"cycle":2,"host":"h","came_back":true}"#;
        assert_eq!(v(&files(other, Some(CLEAN), Some("0"))), CutVerdict::Error);
    }

    #[test]
    fn a_run_that_ended_before_the_cut_is_no_clean_cycle() {
        let cut = r#"{"cycle":1,"host":"h","came_back":true,"run_exit_before_cut":2}"#;
        let row = judge("h", 1, &files(cut, Some(CLEAN), Some("0")), Left::No, false);
        assert_eq!(row.verdict, CutVerdict::Error);
        assert!(
            row.why.iter().any(|w| w.contains("exit 2")),
            "{:?}",
            row.why
        );
        let cut = r#"{"cycle":1,"host":"h","came_back":true,"run_exit_before_cut":null}"#;
        let row = judge("h", 1, &files(cut, Some(CLEAN), Some("0")), Left::No, false);
        assert_eq!(row.verdict, CutVerdict::Clean);
    }

    #[test]
    fn corruption_wins_even_from_a_host_said_not_back() {
        let gone = r#"{"cycle":1,"host":"h","came_back":false}"#;
        let bad = r#"{"schema":"sqliosim-summary/2","outcome":"findings","findings":[{"class":"lost_write"}],"findings_total":1}"#;
        let row = judge("h", 1, &files(gone, Some(bad), Some("1")), Left::No, false);
        assert_eq!(row.verdict, CutVerdict::Corrupt);
        assert_eq!(row.lost, 1);
        assert!(row
            .why
            .iter()
            .any(|w| w == "did not come back after the cut"));
    }

    #[test]
    fn a_host_gone_stays_gone_until_cut_again() {
        let gone = r#"{"cycle":1,"host":"h","came_back":false}"#;
        let f1 = files(gone, None, None);
        let r1 = judge("h", 1, &f1, Left::No, false);
        assert_eq!(r1.verdict, CutVerdict::Missing);
        let left = Left::No.after(&r1, &f1);
        assert_eq!(left, Left::NotBack(1));
        let f2 = files("", None, None);
        let r2 = judge("h", 2, &f2, left, false);
        assert_eq!(r2.verdict, CutVerdict::Missing);
        assert!(
            r2.why[0].contains("cycle 1: did not come back"),
            "{:?}",
            r2.why
        );
        assert_eq!(left.after(&r2, &f2), Left::NotBack(1));
    }
}
