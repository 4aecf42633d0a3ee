//! The JSON summary of a plain `sqliosim run`: written beside the XML log by default (schema
//! /2 with host, configuration hash, end and stop), turned off by `--no-json`, moved by
//! `--json FILE`, never written over a file that is not ours; and `sqliosim report LOG.xml`
//! uses it for the timeline and charts.

use std::path::Path;

use crate::crash_support::{assert_exit, assert_success, bin, run_cmd, small_config};

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

/// What `prometheus_client.parser.text_string_to_metric_families` makes of a metrics file:
/// one JSON object per family (name, type, samples with labels and values).
const PARSE_METRICS: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for fam in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": fam.name, "type": fam.type, "samples": [
        {"name": s.name, "labels": s.labels, "value": s.value} for s in fam.samples]})
print(json.dumps(out))
"#;

/// The metrics file through the real Prometheus client parser; `None` when python3 or
/// prometheus_client is missing and SQLIOSIM_REQUIRE_PROMETHEUS is not set (CI sets it).
fn parse_metrics(text: &str) -> Option<serde_json::Value> {
    use std::io::Write;
    let child = std::process::Command::new("python3")
        .args(["-c", PARSE_METRICS])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let required = std::env::var_os("SQLIOSIM_REQUIRE_PROMETHEUS").is_some();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if !required => {
            eprintln!("skipping the Prometheus parse: no python3 ({e})");
            return None;
        }
        Err(e) => panic!("SQLIOSIM_REQUIRE_PROMETHEUS is set but python3 does not start: {e}"),
    };
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(text.as_bytes()).expect("write the metrics");
    drop(stdin);
    let out = child.wait_with_output().expect("python3");
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("No module named 'prometheus_client'") && !required {
        eprintln!("skipping the Prometheus parse: {err}");
        return None;
    }
    assert!(
        out.status.success(),
        "the parser refused the file: {err}\n{text}"
    );
    Some(serde_json::from_slice(&out.stdout).expect("parser output"))
}

/// The family `name` of parsed metrics, with its type checked.
fn family<'a>(fams: &'a serde_json::Value, name: &str, kind: &str) -> &'a Vec<serde_json::Value> {
    let fam = fams
        .as_array()
        .and_then(|a| a.iter().find(|f| f["name"] == name))
        .unwrap_or_else(|| panic!("no family {name}: {fams}"));
    assert_eq!(fam["type"], kind, "{name}");
    fam["samples"].as_array().expect("samples")
}

/// The checks on the metrics file read while the run goes on: the counters by file and
/// direction, findings, throttled and long I/Os, the gauges and the latency histogram.
fn check_live_metrics(fams: &serde_json::Value, data_file: &str) {
    let ops = family(fams, "sqliosim_io_operations", "counter");
    let writes = ops
        .iter()
        .find(|s| s["labels"]["file"] == data_file && s["labels"]["direction"] == "write")
        .unwrap_or_else(|| panic!("no writes of {data_file}: {ops:?}"));
    assert!(writes["value"].as_f64() > Some(0.0), "{writes}");
    let bytes = family(fams, "sqliosim_io_bytes", "counter");
    assert!(
        bytes.iter().any(|s| s["labels"]["direction"] == "read"),
        "{bytes:?}"
    );
    for counter in [
        "sqliosim_integrity_findings",
        "sqliosim_throttled",
        "sqliosim_long_ios",
    ] {
        assert_eq!(family(fams, counter, "counter").len(), 1, "{counter}");
    }
    family(fams, "sqliosim_findings", "counter");
    family(fams, "sqliosim_file_throttled", "counter");
    for gauge in ["sqliosim_in_flight", "sqliosim_cycle", "sqliosim_running"] {
        assert_eq!(family(fams, gauge, "gauge").len(), 1, "{gauge}");
    }
    let running = &family(fams, "sqliosim_running", "gauge")[0];
    assert_eq!(running["value"].as_f64(), Some(1.0), "{running}");
    let phases = family(fams, "sqliosim_phase", "gauge");
    let on: f64 = phases.iter().filter_map(|s| s["value"].as_f64()).sum();
    assert_eq!((phases.len(), on), (5, 1.0), "{phases:?}");
    // Spelt as the status line's phase= (one word: initial_update, not "initial update").
    let names: Vec<&str> = phases
        .iter()
        .filter_map(|s| s["labels"]["phase"].as_str())
        .collect();
    assert!(
        names.contains(&"initial_update") && names.iter().all(|n| !n.contains(' ')),
        "{names:?}"
    );
    let lat = family(fams, "sqliosim_io_latency_seconds", "histogram");
    let of_file = |suffix: &str| -> Vec<&serde_json::Value> {
        lat.iter()
            .filter(|s| s["name"] == format!("sqliosim_io_latency_seconds{suffix}"))
            .filter(|s| s["labels"]["file"] == data_file)
            .collect()
    };
    let buckets: Vec<f64> = of_file("_bucket")
        .iter()
        .filter_map(|s| s["value"].as_f64())
        .collect();
    assert!(
        buckets.windows(2).all(|w| w[0] <= w[1]),
        "cumulative: {buckets:?}"
    );
    let count = of_file("_count")[0]["value"].as_f64();
    assert_eq!(buckets.last().copied(), count, "+Inf is the count");
    assert!(count > Some(0.0) && of_file("_sum").len() == 1, "{lat:?}");
}

/// `promtool check metrics` (Debian's prometheus package) accepts the file without a lint
/// complaint, where promtool is installed (CI does not install it: skipped there).
fn promtool_check(path: &Path) {
    let file = std::fs::File::open(path).expect("metrics");
    let Ok(out) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(file)
        .output()
    else {
        eprintln!("SKIPPED: promtool is not installed");
        return;
    };
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success() && said.trim().is_empty(), "{said}");
}

/// Polls `json` until the run's running statistics and status are in it (or the run ends).
fn live_json(json: &Path, child: &mut std::process::Child) -> serde_json::Value {
    loop {
        let text = std::fs::read_to_string(json).unwrap_or_default();
        if let Ok(j) = serde_json::from_str::<serde_json::Value>(&text) {
            let ops = j["stats"]["total"]["latency"]["count"]
                .as_u64()
                .unwrap_or(0);
            if j["outcome"] == "running" && ops > 0 && !j["status"].is_null() {
                return j;
            }
        }
        if let Some(rc) = child.try_wait().expect("wait") {
            panic!("the run ended ({rc}) before its JSON carried running statistics: {text}");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn a_live_run_is_watched_from_outside_status_lines_json_heartbeat_and_metrics() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 6, false);
    let metrics = dir.path().join("sqliosim.prom");
    let mut child = run_cmd(&config, dir.path())
        .args(["--status-interval", "1", "--metrics-textfile"])
        .arg(&metrics)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start");
    let json = dir.path().join("sqliosim.log.json");
    let j = live_json(&json, &mut child);
    assert!(
        j["stats"]["files"][0]["io"]["latency_hdr"].is_string(),
        "{j}"
    );
    assert!(
        j["pid"].as_u64().is_some() && j["status"]["cycle"] == 1,
        "{j}"
    );
    // While it runs, `report` says RUNNING with its last status, exit 2: never a pass.
    let r = bin().arg("report").arg(&json).output().expect("report");
    let said = String::from_utf8_lossy(&r.stdout);
    assert_exit(&r, 2);
    assert!(
        said.contains("Verdict: RUNNING: no integrity errors so far"),
        "{said}"
    );
    assert!(
        said.contains("Last status: ") && !said.contains("PASSED"),
        "{said}"
    );
    assert!(!said.contains("CLEAN"), "{said}");
    // The fleet report of the same file agrees (2).
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).expect("mkdir");
    std::fs::copy(&json, fleet.join("host.json")).expect("copy");
    let f = bin()
        .arg("report")
        .arg(&fleet)
        .output()
        .expect("fleet report");
    assert_exit(&f, 2);
    let data_file = j["stats"]["files"][0]["path"]
        .as_str()
        .expect("path")
        .to_string();
    let text = std::fs::read_to_string(&metrics).expect("the metrics file, during the run");
    if let Some(fams) = parse_metrics(&text) {
        check_live_metrics(&fams, &data_file);
    }
    promtool_check(&metrics);
    let out = child.wait_with_output().expect("wait");
    let stdout = assert_success(&out);
    let status: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("sqliosim status: "))
        .collect();
    assert!(status.len() >= 2, "{stdout}");
    for l in &status {
        for key in [
            "phase=",
            "cycle=1/1",
            "elapsed=",
            "planned=6s",
            "iops=",
            "mb_s=",
            "p99_run_ms=",
            "in_flight=",
            "throttled=",
            "findings=0",
        ] {
            assert!(l.contains(key), "{key} in {l}");
        }
    }
    assert!(
        status.iter().any(|l| l.contains("phase=main ")),
        "{status:?}"
    );
    let done = bin().arg("report").arg(&json).output().expect("report");
    assert_success(&done);
}

/// The metrics textfile's directory removed while the run goes on (a tidy-up of the textfile
/// collector's folder, say): the run finishes, its verdict stands (exit 0), and it says once,
/// at the end, that writing the metrics file failed, naming where.
#[test]
fn a_metrics_file_that_can_no_longer_be_written_is_a_warning_at_the_end_not_a_failed_run() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let metrics_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let textfile = metrics_dir.path().join("sqliosim.prom");
    let config = small_config(dir.path(), 1, 4, false);
    let child = run_cmd(&config, dir.path())
        .args(["--status-interval", "1", "--metrics-textfile"])
        .arg(&textfile)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !textfile.is_file() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(textfile.is_file(), "the metrics file was never written");
    std::fs::remove_dir_all(metrics_dir.path()).expect("remove the metrics directory");
    let out = child.wait_with_output().expect("wait");
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let warning = format!(
        "writing the metrics file failed: {}",
        metrics_dir.path().display()
    );
    assert_eq!(err.matches(&warning).count(), 1, "{err}");
}

/// The end of a run says where its log view is and the command that makes its HTML report, and
/// that command, pasted into a shell as printed, works even in a directory whose name has a
/// space and a quote.
#[test]
fn the_printed_report_command_runs_as_pasted() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = root.path().join("burn in 'one'");
    std::fs::create_dir(&dir).expect("mkdir");
    let config = small_config(&dir, 1, 1, false);
    let out = run_cmd(&config, &dir).output().expect("run");
    let stdout = assert_success(&out);
    let view = dir.join("sqliosim.log.html");
    assert!(
        stdout.contains(&format!(
            "Log view: {} (opens in a browser)",
            view.display()
        )) && view.is_file(),
        "{stdout}"
    );
    let cmd = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Charts and findings in one page: "))
        .unwrap_or_else(|| panic!("no report command:\n{stdout}"));
    let exe = Path::new(env!("CARGO_BIN_EXE_sqliosim"));
    let path = format!(
        "{}:{}",
        exe.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let r = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(&dir)
        .env("PATH", path)
        .output()
        .expect("sh");
    assert_success(&r);
    let page = std::fs::read_to_string(dir.join("sqliosim-report.html")).expect("report page");
    assert!(page.contains("CLEAN"), "the page has the verdict");
}
