//! Real runs, made once per test binary, and fleets of edited copies of their summaries.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use serde_json::{json, Value};

/// A small configuration: two files, audit and random users (as tests/runs/fault_injection.rs).
fn config(dir: &Path) -> PathBuf {
    let cfg = dir.join("fleet.cfg.ini");
    let text = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\n\
        [AuditUser]\nUserCount=2\n[RandomUser]\nUserCount=2\nRandomUserReadWriteRatio=0\n\
        [BulkUpdateUser]\nUserCount=0\n\
        [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
        [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";
    std::fs::write(&cfg, text).expect("write config");
    cfg
}

/// Runs `sqliosim run` for one second in `dir` (with `extra` arguments) and returns its exit
/// code; the summary is `dir/summary.json`, the log `dir/sqliosim.log.xml`.
fn real_run(dir: &Path, extra: &[&str]) -> Option<i32> {
    std::fs::create_dir_all(dir).expect("run dir");
    let cfg = config(dir);
    let out = Command::cargo_bin("sqliosim")
        .expect("binary")
        .arg("-cfg")
        .arg(&cfg)
        .arg("-dir")
        .arg(dir)
        .args(["-d", "1", "--seed", "3", "--json"])
        .arg(dir.join("summary.json"))
        .args(extra)
        .output()
        .expect("run");
    out.status.code()
}

/// The real runs: `clean/` (a plain run) and `faulty/` (one with injected lost and torn
/// writes, so its summary has integrity findings).
pub struct Runs {
    /// Directory of the clean run.
    pub clean: PathBuf,
    /// Directory of the run with injected faults.
    pub faulty: PathBuf,
}

/// Made once, shared by every test of this binary.
pub fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("fleet-runs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let clean = base.join("clean");
        let faulty = base.join("faulty");
        assert_eq!(real_run(&clean, &[]), Some(0), "the clean run is clean");
        // With a bundle, as the Ansible role runs it, so the evidence can be followed.
        let bundle = faulty.join("bundle.tar.gz");
        let bundle = bundle.to_str().expect("UTF-8 path");
        let spec = ["--fault-injection", "lost@10,torn4k@80", "--bundle", bundle];
        assert_eq!(
            real_run(&faulty, &spec),
            Some(1),
            "the faulty run finds its faults"
        );
        Runs { clean, faulty }
    })
}

/// The summary of a real run as JSON.
pub fn summary(run: &Path) -> Value {
    let text = std::fs::read_to_string(run.join("summary.json")).expect("summary");
    serde_json::from_str(&text).expect("summary is JSON")
}

/// `doc` with `host.hostname` set to `host`.
pub fn as_host(mut doc: Value, host: &str) -> Value {
    doc["host"] = json!({ "hostname": host, "machine_id": format!("id-{host}") });
    doc
}

/// `doc` as run on a host named `hostname` with machine id `id` (no label).
pub fn as_machine(mut doc: Value, hostname: &str, id: &str) -> Value {
    doc["host"] = json!({ "hostname": hostname, "machine_id": id });
    doc
}

/// Writes `text` to `dir/expected-hosts.txt` (an `--expect-hosts` list); returns the path.
pub fn expect_file(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("expected-hosts.txt");
    std::fs::write(&p, text).expect("write the expected hosts");
    p
}

/// Writes `doc` to `dir/name/summary.json`; returns the path.
pub fn put(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).expect("host dir");
    let p = d.join("summary.json");
    std::fs::write(&p, serde_json::to_vec_pretty(doc).expect("encode")).expect("write");
    p
}

/// `doc` as a run a SIGINT stopped after 6 of 30 seconds (schema /2 fields).
pub fn interrupted(mut doc: Value) -> Value {
    doc["complete"] = json!(false);
    doc["outcome"] = json!("interrupted");
    doc["stop"] =
        json!({ "reason": "signal", "signal": "SIGINT", "after_s": 6.0, "planned_s": 30.0 });
    doc
}

/// Removes every `latency_hdr` and the /2 fields: what a schema /1 summary looked like.
pub fn as_schema1(mut doc: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("latency_hdr");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut doc);
    doc["schema"] = json!("sqliosim-summary/1");
    if let Value::Object(m) = &mut doc {
        for k in ["host", "config_hash", "ended_us", "stop"] {
            m.remove(k);
        }
    }
    doc
}

/// `doc` with every IOPS figure multiplied by `f` (a slow host).
pub fn scaled_iops(mut doc: Value, f: f64) -> Value {
    let stats = &mut doc["stats"];
    let scale = |v: &mut Value| {
        if let Some(x) = v["iops"].as_f64() {
            v["iops"] = json!(x * f);
        }
    };
    scale(&mut stats["total"]);
    if let Some(files) = stats["files"].as_array_mut() {
        files.iter_mut().for_each(|fl| scale(&mut fl["io"]));
    }
    doc
}

/// `sqliosim report ARGS` → (exit code, stdout, stderr).
pub fn report(args: &[&Path]) -> (Option<i32>, String, String) {
    report_with(args, &[])
}

/// `sqliosim report PATHS… OPTIONS…` → (exit code, stdout, stderr).
pub fn report_with(paths: &[&Path], opts: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("sqliosim")
        .expect("binary")
        .arg("report")
        .args(paths)
        .args(opts)
        .output()
        .expect("report runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fleet of `n` clean hosts (`host1`…), copies of the one clean run, in a new directory.
pub fn clean_fleet(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let doc = summary(&runs().clean);
    for i in 1..=n {
        put(
            dir.path(),
            &format!("host{i}"),
            &as_host(doc.clone(), &format!("host{i}")),
        );
    }
    dir
}

/// The table line of `host` in the report's stdout.
pub fn row<'a>(stdout: &'a str, host: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("{host} ")))
        .unwrap_or_else(|| panic!("no row for {host}:\n{stdout}"))
}
