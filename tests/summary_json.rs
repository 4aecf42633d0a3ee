//! The JSON summary of a plain `sqliosim run`: written beside the XML log by default (schema
//! /2 with host, configuration hash, end and stop), turned off by `--no-json`, moved by
//! `--json FILE`, never written over a file that is not ours; and `sqliosim report LOG.xml`
//! uses it for the timeline and charts.

mod crash_support;

use std::path::Path;

use crash_support::{assert_exit, assert_success, bin, run_cmd, small_config};

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn a_plain_run_writes_its_summary_beside_the_log_and_report_uses_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 3, false);
    let out = run_cmd(&config, dir.path()).output().expect("run");
    let stdout = assert_success(&out);
    let json = dir.path().join("sqliosim.log.json");
    assert!(
        stdout.contains(&format!("JSON summary: {}", json.display())),
        "{stdout}"
    );
    let j = read_json(&json);
    assert_eq!(j["schema"], "sqliosim-summary/2");
    assert_eq!(
        (j["complete"].as_bool(), j["outcome"].as_str()),
        (Some(true), Some("clean"))
    );
    assert_eq!(j["stop"]["reason"], "completed");
    assert!(j["stop"]["signal"].is_null());
    assert_eq!(j["stop"]["planned_s"].as_f64(), Some(3.0));
    assert!(j["ended_us"].as_u64() >= j["started_us"].as_u64());
    let host = &j["host"];
    assert!(
        !host["hostname"].as_str().unwrap_or_default().is_empty(),
        "{host}"
    );
    let machine_id = std::fs::read_to_string("/etc/machine-id").ok();
    let machine_id = machine_id
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    assert_eq!(host["machine_id"].as_str(), machine_id.as_deref());
    // The hash is recomputable from the document itself.
    use sha2::Digest;
    let canonical = serde_json::to_string(&j["config"]).expect("config");
    let hex: String = sha2::Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        j["config_hash"].as_str(),
        Some(format!("sha256:{hex}").as_str())
    );
    // `report` on the plain run's XML log finds the timeline and actors in the JSON beside it.
    let html = dir.path().join("report.html");
    let r = bin()
        .arg("report")
        .arg(dir.path().join("sqliosim.log.xml"))
        .arg("--html")
        .arg(&html)
        .output()
        .expect("report");
    assert_success(&r);
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(
        !page.contains("No timeline in this file"),
        "the timeline is drawn"
    );
    assert!(!page.contains(": no data"), "every chart has data");
}

#[test]
fn no_json_writes_none_and_json_file_moves_it() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, false);
    let out = run_cmd(&config, dir.path())
        .arg("--no-json")
        .output()
        .expect("run");
    let stdout = assert_success(&out);
    assert!(!stdout.contains("JSON summary:"), "{stdout}");
    assert!(!dir.path().join("sqliosim.log.json").exists());
    let elsewhere = dir.path().join("elsewhere.json");
    let out = run_cmd(&config, dir.path())
        .arg("--json")
        .arg(&elsewhere)
        .output()
        .expect("run");
    assert_success(&out);
    assert_eq!(read_json(&elsewhere)["schema"], "sqliosim-summary/2");
    assert!(!dir.path().join("sqliosim.log.json").exists());
}

#[test]
fn a_file_that_is_not_ours_beside_the_log_is_never_overwritten() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, false);
    let theirs = dir.path().join("sqliosim.log.json");
    std::fs::write(&theirs, "{\"someone\": \"else's file\"}\n").expect("write");
    let out = run_cmd(&config, dir.path()).output().expect("run");
    assert_exit(&out, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sqliosim.log.json") && stderr.contains("--no-json"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&theirs).expect("still there"),
        "{\"someone\": \"else's file\"}\n"
    );
}
