//! `sqliosim report` over directories of real summaries: rows, corruption first and named,
//! totals from merged histograms, outliers, and the exit codes 0, 1 and 2.

use std::path::Path;

use sqliosim::stats::LatencyHistogram;

use super::support::*;

#[test]
fn a_clean_fleet_exits_0_with_one_row_per_host_and_merged_totals() {
    let dir = clean_fleet(3);
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(0), "{out}{err}");
    for h in ["host1", "host2", "host3"] {
        let r = row(&out, h);
        assert!(r.contains("CLEAN") && r.contains("/dev/"), "{r}");
    }
    assert!(
        out.contains("Fleet latency from the merged histograms of 3 of 3 run(s)"),
        "{out}"
    );
    // Three identical hosts: the MAD is 0, the floor applies, and nobody is an outlier.
    assert!(
        out.contains("more than 3 median absolute deviations"),
        "{out}"
    );
    let iops = out
        .lines()
        .find(|l| l.trim_start().starts_with("IOPS: median"))
        .unwrap();
    assert!(iops.ends_with("): none"), "{iops}");
    assert!(
        out.contains("Verdict: CLEAN — 3 host/device(s) clean"),
        "{out}"
    );
}

#[test]
fn corruption_is_listed_first_named_and_exits_1() {
    let dir = clean_fleet(3);
    let bad = as_host(summary(&runs().faulty), "host9");
    put(dir.path(), "host9", &bad);
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(1), "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("CORRUPTION on "))
        .unwrap_or_else(|| panic!("no CORRUPTION line:\n{out}"));
    assert!(line.starts_with("CORRUPTION on host9 (/dev/"), "{line}");
    assert!(
        line.contains("lost_write") && line.contains("torn_write"),
        "{line}"
    );
    assert_eq!(
        out.matches("CORRUPTION on ").count(),
        1,
        "only host9:\n{out}"
    );
    // The corrupt host's row comes before the clean ones.
    let at = |h: &str| out.find(row(&out, h)).unwrap();
    assert!(at("host9") < at("host1"), "{out}");
    assert!(row(&out, "host9").contains("CORRUPTION"));
    assert!(
        out.contains("Verdict: FAILED — corruption on host9"),
        "{out}"
    );
}

#[test]
fn unreadable_and_truncated_summaries_exit_2_naming_them() {
    let dir = clean_fleet(3);
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "this is not JSON {").unwrap();
    let text = std::fs::read_to_string(runs().clean.join("summary.json")).unwrap();
    let cut = put(dir.path(), "host7", &serde_json::json!({}));
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        out.contains(&format!("UNREADABLE {}", garbage.display())),
        "{out}"
    );
    assert!(
        err.contains("garbage.json") && err.contains("unreadable"),
        "{err}"
    );
    // The truncated one is read as far as it goes: a run that did not finish.
    assert!(out.contains("was cut short"), "{out}");
    assert!(err.contains("did not finish"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn an_interrupted_run_exits_2_and_says_how_it_stopped() {
    let dir = clean_fleet(2);
    put(
        dir.path(),
        "host5",
        &interrupted(as_host(summary(&runs().clean), "host5")),
    );
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(row(&out, "host5").contains("UNFINISHED"), "{out}");
    assert!(
        out.contains("UNFINISHED on host5 (/dev/")
            && out.contains("interrupted by SIGINT after 6 s of 30 s"),
        "{out}"
    );
    assert!(err.contains("1 did not finish: host5"), "{err}");
}

#[test]
fn corruption_wins_over_unreadable_and_both_are_named() {
    let dir = clean_fleet(2);
    put(
        dir.path(),
        "host9",
        &as_host(summary(&runs().faulty), "host9"),
    );
    std::fs::write(dir.path().join("junk.json"), "{\"schema\": ").unwrap();
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("corruption on host9") && out.contains("1 result(s) unreadable"),
        "{out}"
    );
}

#[test]
fn a_missing_input_is_unreadable_not_a_panic() {
    let dir = clean_fleet(1);
    let missing = dir.path().join("nope.json");
    let (code, out, err) = report(&[dir.path(), &missing]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        out.contains("UNREADABLE") && out.contains("nope.json"),
        "{out}"
    );
}

#[test]
fn schema1_runs_are_counted_but_their_percentiles_are_not_merged() {
    let dir = clean_fleet(2);
    let old = as_schema1(as_host(summary(&runs().clean), "old1"));
    let mut old = old;
    // /1 has no host field: the host comes from system.hostname.
    old["system"]["hostname"] = serde_json::json!("old1");
    put(dir.path(), "old1", &old);
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(0), "{out}{err}");
    let r = row(&out, "old1");
    assert!(r.contains("CLEAN") && r.contains('*'), "{r}");
    assert!(out.contains("merged histograms of 2 of 3 run(s)"), "{out}");
    assert!(
        out.contains("Not mergeable: 1 run(s)") && out.contains("old1"),
        "{out}"
    );
    assert!(out.contains("* not mergeable"), "{out}");
}

#[test]
fn a_slow_host_is_an_iops_outlier_and_the_rule_is_stated() {
    let dir = clean_fleet(4);
    put(
        dir.path(),
        "slow",
        &scaled_iops(as_host(summary(&runs().clean), "slow"), 0.1),
    );
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(0), "outliers alone do not fail: {out}{err}");
    let iops = out
        .lines()
        .find(|l| l.trim_start().starts_with("IOPS: median"))
        .unwrap();
    assert!(iops.contains("slow (/dev/"), "{iops}");
    assert!(!iops.contains("host1"), "{iops}");
    assert!(row(&out, "slow").contains("iops"), "{out}");
}

#[test]
fn an_xml_log_counts_only_where_no_json_summary_exists() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // A run directory as it was left: its log and its JSON; the log is skipped.
    let both = dir.path().join("both");
    std::fs::create_dir_all(&both).unwrap();
    std::fs::copy(
        runs().clean.join("summary.json"),
        both.join("sqliosim.log.json"),
    )
    .unwrap();
    std::fs::copy(
        runs().clean.join("sqliosim.log.xml"),
        both.join("sqliosim.log.xml"),
    )
    .unwrap();
    // A log alone: read, with the host and device it names.
    let alone = dir.path().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::copy(
        runs().faulty.join("sqliosim.log.xml"),
        alone.join("sqliosim.log.xml"),
    )
    .unwrap();
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(1), "the log alone has the findings: {out}{err}");
    assert!(
        out.contains("1 skipped") && out.contains("both/sqliosim.log.xml"),
        "{out}"
    );
    assert!(out.contains("2 run(s)"), "{out}");
    // The JSON found its log beside it: long I/Os are known (0) on that row.
    assert!(out.contains("merged histograms of 1 of 2 run(s)"), "{out}");
}

#[test]
fn one_file_is_still_the_single_run_report() {
    let (code, out, _) = report(&[&runs().clean.join("summary.json")]);
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("sqliosim report: ") && out.contains("(JSON summary)"),
        "{out}"
    );
    assert!(!out.contains("fleet report"), "{out}");
}

#[test]
fn bundle_needs_a_single_run() {
    let dir = clean_fleet(2);
    let b = dir.path().join("b.tar.gz");
    let (code, _, err) = report_with(&[dir.path()], &["--bundle", b.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--bundle packs the evidence of one run"),
        "{err}"
    );
}

fn total_hdr(p: &Path) -> LatencyHistogram {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    LatencyHistogram::from_v2_base64(doc["stats"]["total"]["latency_hdr"].as_str().unwrap())
        .unwrap()
}

#[test]
fn fleet_json_holds_rows_and_the_merged_percentiles() {
    let dir = clean_fleet(2);
    let bad = put(
        dir.path(),
        "host9",
        &as_host(summary(&runs().faulty), "host9"),
    );
    let out_json = dir.path().join("out").join("fleet.json");
    std::fs::create_dir_all(out_json.parent().unwrap()).unwrap();
    let (code, out, err) = report_with(&[dir.path()], &["--json", out_json.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out_json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "sqliosim-fleet/1");
    assert_eq!(doc["exit_code"], 1);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["host"], "host9");
    assert_eq!(rows[0]["verdict"], "corruption");
    assert!(rows[0]["by_class"]["lost_write"].as_u64().unwrap() >= 1);
    // The fleet p99 is the p99 of the histograms added, not an average of p99s.
    let mut want = total_hdr(&runs().clean.join("summary.json"));
    want.add(&total_hdr(&runs().clean.join("summary.json")));
    want.add(&total_hdr(&bad));
    let got = doc["totals"]["latency"]["p99_us"].as_f64().unwrap();
    assert_eq!(got, want.latency().p99_us);
    assert_eq!(
        doc["totals"]["latency"]["count"].as_u64().unwrap(),
        want.count()
    );
    let merged =
        LatencyHistogram::from_v2_base64(doc["totals"]["latency_hdr"].as_str().unwrap()).unwrap();
    assert_eq!(merged.latency(), want.latency());
    // The fleet JSON in the directory is not taken for a run next time.
    let (code, out, _) = report(&[dir.path()]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("3 run(s)") && out.contains("fleet.json"),
        "{out}"
    );
    assert!(!out.contains("UNREADABLE"), "{out}");
}

#[test]
fn one_file_with_junit_writes_a_fleet_of_one() {
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("one.xml");
    let input = runs().faulty.join("summary.json");
    let (code, stdout, err) = report_with(&[&input], &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}{err}");
    assert!(
        stdout.starts_with("sqliosim report: "),
        "the single-run report: {stdout}"
    );
    let text = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(doc.root_element().attribute("tests"), Some("1"));
    assert_eq!(doc.root_element().attribute("failures"), Some("1"));
}

#[test]
fn a_run_stopped_by_sigint_makes_the_fleet_exit_2() {
    let dir = clean_fleet(2);
    let run = dir.path().join("stopped");
    std::fs::create_dir_all(&run).unwrap();
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quick.cfg.ini");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sqliosim"))
        .arg("-cfg")
        .arg(&cfg)
        .arg("-dir")
        .arg(&run)
        .args(["-d", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The run catches SIGINT from its summary's first heartbeat on: wait for the summary
    // beside its log rather than a fixed time (it came 0.1–0.4 s after the start beside six
    // spinners and a disk writer; the test slept 4 s).
    let summary = run.join("sqliosim.log.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !summary.is_file() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its summary"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "no summary within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.contains("interrupted by SIGINT after"), "{out}");
    assert!(err.contains("did not finish"), "{err}");
}

#[test]
fn a_run_on_two_devices_gives_a_row_per_device_with_its_own_findings() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut doc = as_host(summary(&runs().faulty), "multi");
    // The log file (the second) on another disk.
    let dev = &mut doc["system"]["files"][1]["device"];
    dev["name"] = serde_json::json!("vdb");
    dev["serial"] = serde_json::json!("SERIAL-B");
    let log_file = doc["system"]["files"][1]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let on_log: usize = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == log_file.as_str())
        .count();
    put(dir.path(), "multi", &doc);
    let json = dir.path().join("fleet.json");
    let (code, out, err) = report_with(&[dir.path()], &["--json", json.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    let fleet: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = fleet["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["device"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "{names:?}");
    assert!(names.contains(&"/dev/vdb"), "{names:?}");
    let vdb = rows
        .iter()
        .find(|r| r["device"]["name"] == "/dev/vdb")
        .unwrap();
    assert_eq!(vdb["device"]["serial"], "SERIAL-B");
    assert_eq!(vdb["findings"].as_u64().unwrap() as usize, on_log);
    // Per-file histograms merged per device: every I/O of the run is in one of the rows.
    let ops: u64 = rows.iter().map(|r| r["ops"].as_u64().unwrap()).sum();
    let total = &doc["stats"]["total"];
    let want: u64 = ["reads", "scatter_reads", "writes", "gather_writes"]
        .iter()
        .map(|k| total[*k].as_u64().unwrap())
        .sum();
    assert_eq!(ops, want);
    // A device that did I/O has merged percentiles; one that did none has none.
    for r in rows {
        let want = if r["ops"] == 0 { "none" } else { "merged" };
        assert_eq!(r["latency_source"], want, "{r:?}");
    }
    let findings: u64 = rows.iter().map(|r| r["findings"].as_u64().unwrap()).sum();
    assert_eq!(findings, fleet["totals"]["findings"].as_u64().unwrap());
    assert!(findings > 0);
}

/// A summary `sqliosim verify` wrote (a restarted pod's verdict over its cut set) stands in the
/// fleet as a row, and a note says it is a verify of files at rest, not a burn-in run.
#[test]
fn a_verify_summary_in_a_fleet_is_marked_as_one() {
    let dir = clean_fleet(2);
    let verify = dir.path().join("verify.json");
    let out = assert_cmd::Command::cargo_bin("sqliosim")
        .expect("binary")
        .arg("verify")
        .arg("--dir")
        .arg(&runs().clean)
        .arg("--json")
        .arg(&verify)
        .output()
        .expect("verify");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&verify).expect("summary")).expect("JSON");
    std::fs::remove_file(&verify).expect("rm");
    put(dir.path(), "node9", &as_host(doc, "node9"));
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(row(&out, "node9").contains("CLEAN"), "{out}");
    let note = out
        .lines()
        .find(|l| l.contains("node9") && l.contains("sqliosim verify"))
        .unwrap_or_else(|| panic!("no note marks the verify: {out}"));
    assert!(note.contains("not a burn-in run"), "{note}");
    assert!(
        !out.lines()
            .any(|l| l.contains("host1") && l.contains("sqliosim verify")),
        "a run marked as a verify: {out}"
    );
}
