//! Hostile campaign directories: a symlinked cycle directory or file is refused (ERROR for its
//! row), never followed out of the campaign; a campaign.json that is not the contract stops the
//! report with exit 2 naming the file; a host name with escape sequences never reaches the
//! terminal raw; options that do not apply to a campaign are refused.

use std::os::unix::fs::symlink;

use serde_json::json;

use super::support::*;

#[test]
fn a_symlinked_cycle_directory_is_not_followed() {
    let dir = all_clean(&["node1"], 2);
    // Outside the campaign: a cycle whose verify found corruption. Followed, the row would be
    // CORRUPT and the report exit 1.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let elsewhere = clean_cycle(outside.path(), "node1", 2);
    make_corrupt(outside.path(), "node1", 2, &["lost_write"]);
    let cycle2 = dir.path().join("hosts/node1/cycle-2");
    std::fs::remove_dir_all(&cycle2).unwrap();
    symlink(&elsewhere, &cycle2).unwrap();
    let ran = report(dir.path(), &[]);
    assert_eq!(ran.code, Some(2), "{}", ran.both());
    assert!(ran.row("node1", 2).contains("ERROR"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("cycle-2: is a symlink; not followed"),
        "{}",
        ran.stdout
    );
    assert!(!ran.stdout.contains("lost_write"), "{}", ran.stdout);
}

#[test]
fn a_symlinked_file_in_a_cycle_is_not_followed() {
    let dir = all_clean(&["node1"], 1);
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let planted = outside.path().join("verify.json");
    write_json(&planted, &corrupt_verify(&["lost_write"]));
    let d = cycle_dir(dir.path(), "node1", 1);
    std::fs::remove_file(d.join("verify.json")).unwrap();
    symlink(&planted, d.join("verify.json")).unwrap();
    let ran = report(dir.path(), &[]);
    assert_eq!(ran.code, Some(2), "{}", ran.both());
    assert!(ran.row("node1", 1).contains("ERROR"), "{}", ran.stdout);
    assert!(
        ran.stdout.contains("verify.json: is a symlink"),
        "{}",
        ran.stdout
    );
}

#[test]
fn a_bad_campaign_json_is_exit_2_naming_the_file() {
    let base = json!({"schema": "sqliosim-campaign/1", "cycles": 2, "hosts": ["node1"]});
    let with = |key: &str, v: serde_json::Value| {
        let mut d = base.clone();
        d[key] = v;
        serde_json::to_string(&d).unwrap()
    };
    let cases = [
        ("not JSON {".to_string(), "not JSON"),
        (
            with("schema", json!("sqliosim-campaign/9")),
            "sqliosim-campaign/9",
        ),
        (with("cycles", json!(0)), "\"cycles\""),
        (with("cycles", json!(10_001)), "\"cycles\""),
        (with("hosts", json!("node1")), "\"hosts\""),
        (with("hosts", json!([1, 2])), "\"hosts\""),
        (with("hosts", json!(["node1", "../etc"])), "../etc"),
        (with("hosts", json!(["a/b"])), "a/b"),
        (with("hosts", json!([".."])), "\"..\""),
        (with("hosts", json!(["node1", "node1"])), "listed twice"),
    ];
    for (text, names) in cases {
        let dir = all_clean(&["node1"], 2);
        std::fs::write(dir.path().join("campaign.json"), &text).unwrap();
        let ran = report(dir.path(), &[]);
        assert_eq!(ran.code, Some(2), "{text}: {}", ran.both());
        assert!(
            ran.stderr.contains("campaign.json: "),
            "{text}: {}",
            ran.stderr
        );
        assert!(
            ran.stderr.contains(names),
            "{text}: names {names}: {}",
            ran.stderr
        );
        assert!(
            ran.stdout.is_empty(),
            "{text}: nothing reported: {}",
            ran.stdout
        );
    }
}

#[test]
fn a_host_name_with_an_escape_sequence_does_not_reach_stdout_raw() {
    let evil = "node\x1b]0;owned\x07\x1b[2J";
    let dir = all_clean(&[evil], 1);
    let (ran, junit, _, html) = report_all(dir.path());
    assert_eq!(ran.code, Some(0), "{}", ran.both());
    assert!(
        !ran.stdout.contains('\x1b'),
        "raw ESC on stdout: {:?}",
        ran.stdout
    );
    assert!(
        !ran.stdout.contains('\x07'),
        "raw BEL on stdout: {:?}",
        ran.stdout
    );
    assert!(
        ran.stdout.contains("node\\x1b]0;owned\\x07"),
        "{}",
        ran.stdout
    );
    assert!(!junit.contains('\x1b'), "JUnit carries no ESC");
    assert!(html.contains("node"), "the page names the host");
}

#[test]
fn options_of_other_reports_are_refused_for_a_campaign() {
    let dir = all_clean(&["node1"], 1);
    let hosts = dir.path().join("expected.txt");
    std::fs::write(&hosts, "node1\n").unwrap();
    let cases = [
        vec!["--bundle", "b.tar.gz"],
        vec!["--expect-hosts", hosts.to_str().unwrap()],
        vec!["--follow"],
    ];
    for opts in cases {
        let ran = report(dir.path(), &opts);
        assert_eq!(ran.code, Some(2), "{opts:?}: {}", ran.both());
        assert!(
            ran.stderr
                .contains(&format!("{} does not apply to a campaign", opts[0])),
            "{opts:?}: {}",
            ran.stderr
        );
    }
}
