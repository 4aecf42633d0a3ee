//! `--expect-hosts`: a host of the list that sent no result (the unreachable host of issue #23)
//! makes a fleet without corruption exit 2 and is named in the text, the HTML, the JSON, and as
//! a failing JUnit test case, so no CI shows the fleet green.

use super::junit::check_schema;
use super::support::*;

/// The report over two clean hosts of a list of three, with every output.
struct Missing {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    html: String,
    json: serde_json::Value,
    junit: String,
}

fn report_missing_host3() -> Missing {
    let dir = clean_fleet(2);
    let out = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let list = expect_file(
        out.path(),
        "# the rack\nhost1\n\nhost2   # spare PSU\nhost3\n",
    );
    let file = |n: &str| out.path().join(n).to_str().expect("UTF-8").to_string();
    let (html, json, junit) = (file("fleet.html"), file("fleet.json"), file("junit.xml"));
    let opts = [
        "--expect-hosts",
        list.to_str().expect("UTF-8"),
        "--html",
        &html,
        "--json",
        &json,
        "--junit",
        &junit,
    ];
    let (code, stdout, stderr) = report_with(&[dir.path()], &opts);
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    Missing {
        code,
        html: read(&html),
        json: serde_json::from_str(&read(&json)).expect("fleet JSON"),
        junit: read(&junit),
        stdout,
        stderr,
    }
}

#[test]
fn a_missing_expected_host_exits_2_and_is_named_in_text_html_and_json() {
    let m = report_missing_host3();
    let all = format!("{}{}", m.stdout, m.stderr);
    assert_eq!(m.code, Some(2), "{all}");
    assert!(m.stdout.contains("MISSING host3: expected"), "{all}");
    assert!(m.stdout.contains("3 host(s) expected, 1 missing"), "{all}");
    assert!(
        m.stdout
            .contains("Verdict: INCOMPLETE — no corruption found, but 1 expected host(s) sent no result: host3"),
        "{all}"
    );
    assert!(!all.contains("Verdict: CLEAN"), "{all}");
    assert!(m.stderr.contains("host3"), "{}", m.stderr);
    assert!(m.html.contains("MISSING host3"), "{}", m.html);
    assert!(!m.html.contains("Verdict: CLEAN"), "{}", m.html);
    assert!(m.html.contains("class='verdict warn'"), "{}", m.html);
    assert_eq!(m.json["missing_hosts"], serde_json::json!(["host3"]));
    assert_eq!(m.json["expected_hosts"], serde_json::json!(3));
    assert_eq!(m.json["exit_code"], serde_json::json!(2));
}

#[test]
fn a_missing_expected_host_is_a_failing_junit_test_case() {
    let m = report_missing_host3();
    let doc = roxmltree::Document::parse(&m.junit).expect("JUnit is XML");
    check_schema(&doc);
    let root = doc.root_element();
    assert_eq!(root.attribute("tests"), Some("3"), "{}", m.junit);
    assert_eq!(root.attribute("failures"), Some("1"), "{}", m.junit);
    let failed: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .filter_map(|n| n.attribute("name"))
        .collect();
    assert_eq!(failed, ["host3"], "{}", m.junit);
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("failure");
    assert_eq!(failure.attribute("type"), Some("missing"));
}

#[test]
fn every_expected_host_present_passes_and_a_label_or_machine_id_counts() {
    let dir = clean_fleet(1);
    let labelled = {
        let mut d = as_host(summary(&runs().clean), "host2");
        d["host"]["label"] = serde_json::json!("node2");
        d
    };
    put(dir.path(), "node2", &labelled);
    put(
        dir.path(),
        "m3",
        &as_machine(summary(&runs().clean), "localhost", "0123abcd"),
    );
    let list = expect_file(dir.path(), "host1\nnode2\n0123abcd\n");
    let opts = ["--expect-hosts", list.to_str().expect("UTF-8")];
    let (code, out, err) = report_with(&[dir.path()], &opts);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("3 host(s) expected, 0 missing"), "{out}");
    assert!(out.contains("Verdict: CLEAN"), "{out}");
}

#[test]
fn a_list_naming_no_host_and_an_unreadable_list_exit_2() {
    let dir = clean_fleet(1);
    let list = expect_file(dir.path(), "# nobody\n\n");
    let opts = ["--expect-hosts", list.to_str().expect("UTF-8")];
    let (code, out, err) = report_with(&[dir.path()], &opts);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("names no host"), "{err}");
    let gone = dir.path().join("no-such-list.txt");
    let opts = ["--expect-hosts", gone.to_str().expect("UTF-8")];
    let (code, out, err) = report_with(&[dir.path()], &opts);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("no-such-list.txt"), "{err}");
}
