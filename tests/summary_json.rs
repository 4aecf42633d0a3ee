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
    assert_depth(&j["stats"]);
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

/// The depth the device saw, as the summary reports it, agrees with itself and with "IO request
/// blocks": per file, per phase, for the run, and in the timeline.
fn assert_depth(stats: &serde_json::Value) {
    let run = &stats["depth"];
    let run_max = run["max"].as_u64().expect("run depth max");
    let run_mean = run["mean"].as_f64().expect("run depth mean");
    assert!(
        run_max > 0 && run_mean > 0.0 && run_mean <= run_max as f64,
        "{run}"
    );
    let timeline = stats["timeline"].as_array().expect("timeline");
    let tl_max = timeline
        .iter()
        .filter_map(|p| p["inflight_max"].as_u64())
        .max();
    assert_eq!(tl_max, Some(run_max), "the timeline's peak is the run's");
    for p in timeline {
        let (max, mean) = (
            p["inflight_max"].as_u64().unwrap(),
            p["inflight_mean"].as_f64().unwrap(),
        );
        assert!(mean >= 0.0 && mean <= max as f64, "{p}");
    }
    let mut sum_of_file_max = 0;
    for f in stats["files"].as_array().expect("files") {
        let d = &f["depth"];
        let max = d["max"].as_u64().expect("file depth max");
        let mean = d["mean"].as_f64().expect("file depth mean");
        assert_eq!(Some(max), f["io_request_blocks"].as_u64(), "{f}");
        assert!(max > 0 && mean > 0.0 && mean <= max as f64, "{d}");
        assert!(max <= run_max, "{d}");
        sum_of_file_max += max;
        let phases: Vec<&str> = d["phases"]
            .as_array()
            .expect("phases")
            .iter()
            .map(|p| p["phase"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            phases,
            [
                "initial update",
                "initial checkpoint",
                "main",
                "final checkpoint",
                "audit"
            ]
        );
        for p in d["phases"].as_array().unwrap() {
            let (pmax, pmean) = (p["max"].as_u64().unwrap(), p["mean"].as_f64().unwrap());
            assert!(
                pmax <= max && pmean <= pmax as f64 && p["seconds"].as_f64() > Some(0.0),
                "{p}"
            );
        }
        let main = &d["phases"][2];
        assert!(
            main["max"].as_u64() > Some(0),
            "I/O in the main phase: {main}"
        );
    }
    assert!(run_max <= sum_of_file_max);
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
