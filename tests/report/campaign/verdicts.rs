//! Row verdicts and the campaign's exit code: CLEAN only when verify exited 0 and found
//! nothing; CORRUPT on any finding (exit 1); MISSING for a host not cut or not back, ERROR for
//! a host back without a verdict to read (exit 2 when nothing is corrupt); unsafe-shutdown
//! counts that do not rise by one are a note, not a failure.

use serde_json::json;

use super::support::*;

#[test]
fn an_all_clean_campaign_exits_0() {
    let dir = all_clean(&["node1", "node2"], 3);
    let (ran, junit, json, _) = report_all(dir.path());
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(ran.stdout.contains("Verdict: CLEAN"), "{}", ran.stdout);
    for host in ["node1", "node2"] {
        for k in 1..=3 {
            let row = ran.row(host, k);
            assert!(row.contains("CLEAN"), "{row}");
            // In flight = newer_than_journal 12 + allowed_tears 1; acked-unwitnessed 3/7.
            assert!(row.contains(" 13 ") && row.contains(" 3/7 "), "{row}");
        }
    }
    assert!(
        !ran.stdout.contains("note:"),
        "a rise by one is quiet:\n{}",
        ran.stdout
    );
    assert_eq!(junit_failures(&junit), vec![]);
    assert_eq!(json["exit_code"], json!(0));
    assert_eq!(json["rows"].as_array().map(Vec::len), Some(6));
}

#[test]
fn one_corrupt_host_in_each_cycle_fails_exactly_those_test_cases() {
    let hosts = ["node1", "node2", "node3"];
    let dir = all_clean(&hosts, 3);
    make_corrupt(dir.path(), "node1", 1, &["lost_write"]);
    make_corrupt(dir.path(), "node2", 2, &["torn_write", "lost_file"]);
    make_corrupt(dir.path(), "node3", 3, &["bit_rot"]);
    let (ran, junit, json, _) = report_all(dir.path());
    assert_eq!(ran.code, Some(1), "{}", ran.both());
    assert!(ran.stdout.contains("Verdict: FAILED"), "{}", ran.stdout);
    let f = |h: &str, k: u32| {
        (
            h.to_string(),
            format!("cycle {k}"),
            "failure".to_string(),
            "corrupt".to_string(),
        )
    };
    assert_eq!(
        junit_failures(&junit),
        vec![f("node1", 1), f("node2", 2), f("node3", 3)]
    );
    assert!(
        junit.contains("lost_file 1, torn_write 1"),
        "the failure names the classes:\n{junit}"
    );
    // Lost = lost_write + lost_file, torn = torn_write, other = the rest.
    let row2 = &json["rows"][4];
    assert_eq!(
        (row2["host"].as_str(), row2["cycle"].as_u64()),
        (Some("node2"), Some(2))
    );
    assert_eq!(
        (
            row2["lost"].as_u64(),
            row2["torn"].as_u64(),
            row2["other"].as_u64()
        ),
        (Some(1), Some(1), Some(0))
    );
    let row3 = &json["rows"][8];
    assert_eq!(
        (row3["verdict"].as_str(), row3["other"].as_u64()),
        (Some("CORRUPT"), Some(1))
    );
}

#[test]
fn a_host_that_did_not_come_back_is_missing_for_the_rest_of_the_campaign() {
    let dir = campaign(&["node1", "node2"], 3);
    for k in 1..=3 {
        clean_cycle(dir.path(), "node1", k);
    }
    clean_cycle(dir.path(), "node2", 1);
    // Cycle 2: cut, never back, so no verify; cycle 3: never cut (no cut.json).
    let d = cycle_dir(dir.path(), "node2", 2);
    write_json(&d.join("cut.json"), &cut("node2", 2, false));
    let (ran, junit, json, _) = report_all(dir.path());
    assert_eq!(ran.code, Some(2), "{}", ran.both());
    assert!(ran.row("node2", 1).contains("CLEAN"));
    assert!(ran.row("node2", 2).contains("MISSING"));
    assert!(ran.row("node2", 3).contains("MISSING"));
    assert!(
        ran.stdout
            .contains("node2 cycle 2 MISSING: did not come back"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains(
            "node2 cycle 3 MISSING: not cut: the host left the campaign in an earlier cycle"
        ),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stderr.contains("campaign report incomplete"),
        "{}",
        ran.stderr
    );
    let m = |k: u32| {
        (
            "node2".to_string(),
            format!("cycle {k}"),
            "failure".to_string(),
            "missing".to_string(),
        )
    };
    assert_eq!(junit_failures(&junit), vec![m(2), m(3)]);
    assert_eq!(json["totals"]["missing"], json!(2));
}

#[test]
fn a_host_back_without_verify_json_is_an_error() {
    let dir = all_clean(&["node1"], 2);
    let d = cycle_dir(dir.path(), "node1", 2);
    std::fs::remove_file(d.join("verify.json")).unwrap();
    let (ran, junit, _, _) = report_all(dir.path());
    assert_eq!(ran.code, Some(2), "{}", ran.both());
    assert!(ran.row("node1", 2).contains("ERROR"));
    assert!(
        ran.stdout.contains("cycle-2/verify.json: missing"),
        "the row names the file:\n{}",
        ran.stdout
    );
    let e = (
        "node1".to_string(),
        "cycle 2".to_string(),
        "error".to_string(),
        "error".to_string(),
    );
    assert_eq!(junit_failures(&junit), vec![e]);
}

#[test]
fn nothing_unknown_is_clean() {
    // (verify.rc, outcome, findings): what the row must be.
    let cases = [
        ("2\n", "environment_error", 0, "ERROR"),
        ("3\n", "clean", 0, "ERROR"),
        ("0\n", "running", 0, "ERROR"),
        ("zero\n", "clean", 0, "ERROR"),
        ("1\n", "clean", 0, "CORRUPT"),
        ("0\n", "clean", 1, "CORRUPT"),
    ];
    for (rc, outcome, n, want) in cases {
        let dir = all_clean(&["node1"], 1);
        let d = cycle_dir(dir.path(), "node1", 1);
        let mut doc = corrupt_verify(&vec!["stale_read"; n]);
        doc["outcome"] = json!(outcome);
        write_json(&d.join("verify.json"), &doc);
        std::fs::write(d.join("verify.rc"), rc).unwrap();
        let ran = report(dir.path(), &[]);
        let code = if want == "CORRUPT" { 1 } else { 2 };
        assert_eq!(
            ran.code,
            Some(code),
            "rc {rc:?} outcome {outcome}: {}",
            ran.both()
        );
        assert!(
            ran.row("node1", 1).contains(want),
            "rc {rc:?} outcome {outcome}: {}",
            ran.stdout
        );
    }
}

#[test]
fn unsafe_shutdowns_that_do_not_rise_by_one_are_noted() {
    let dir = all_clean(&["node1"], 2);
    let d = cycle_dir(dir.path(), "node1", 2);
    std::fs::write(
        d.join("smart-before.txt"),
        "/dev/nvme0n1 unsafe_shutdowns 17\n",
    )
    .unwrap();
    std::fs::write(
        d.join("smart-after.txt"),
        "/dev/nvme0n1 unsafe_shutdowns 17\n",
    )
    .unwrap();
    let ran = report(dir.path(), &[]);
    assert_eq!(
        ran.code,
        Some(0),
        "a warning, not a failure: {}",
        ran.both()
    );
    assert!(ran.row("node1", 2).contains("17→17"), "{}", ran.stdout);
    assert!(
        ran.stdout
            .contains("node1 cycle 2 note: /dev/nvme0n1 unsafe_shutdowns 17→17: did not rise"),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("node1 cycle 1 note"), "{}", ran.stdout);
}
