//! Campaign directories written by hand: campaign.json, and per host and cycle the files the
//! playbook leaves (cut.json, verify.json, verify.rc, smart-before.txt, smart-after.txt).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};

/// When the campaign started, microseconds since the Unix epoch (2024-05-01 10:40:00Z).
pub const STARTED_US: u64 = 1_714_560_000_000_000;

/// A new campaign directory of `hosts` × `cycles`, campaign.json written, no cycle yet.
pub fn campaign(hosts: &[&str], cycles: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let doc = json!({
        "schema": "sqliosim-campaign/1", "cycles": cycles, "hosts": hosts,
        "witness": "10.0.0.1:7000", "cut_command": "ipmitool chassis power off",
        "started_us": STARTED_US,
    });
    write_json(&dir.path().join("campaign.json"), &doc);
    dir
}

/// `hosts/HOST/cycle-K` of `dir`, created.
pub fn cycle_dir(dir: &Path, host: &str, k: u32) -> PathBuf {
    let d = dir.join("hosts").join(host).join(format!("cycle-{k}"));
    std::fs::create_dir_all(&d).expect("cycle dir");
    d
}

/// Writes `doc` as JSON to `path`.
pub fn write_json(path: &Path, doc: &Value) {
    std::fs::write(path, serde_json::to_vec(doc).expect("JSON")).expect("write");
}

/// cut.json of a host that came back (`true`) or not.
pub fn cut(host: &str, k: u32, came_back: bool) -> Value {
    json!({
        "cycle": k, "host": host, "cut_at_us": STARTED_US + u64::from(k) * 600_000_000,
        "waited_s": 5.2, "cut_rc": 0, "came_back": came_back,
        "back_after_s": if came_back { json!(1.4) } else { Value::Null },
    })
}

/// A clean verify summary with a judgement.
pub fn clean_verify() -> Value {
    json!({
        "schema": "sqliosim-summary/2", "run_id": 11908497678884975041u64,
        "host": {"hostname": "vm", "machine_id": "3d12", "label": null},
        "outcome": "clean", "findings": [], "findings_total": 0, "errors_total": 0,
        "judgement": {
            "pages_checked": 1023, "pages_owed": 800, "never_written": 0,
            "newer_than_journal": 12, "allowed_tears": 1, "log_blocks": 46,
            "journal": {"source": "witness", "last_batch": 123, "last_batch_us": STARTED_US, "clean_shutdown": false},
            "witness": {"addr": "10.0.0.1:7000", "record_batch": 120, "local_batch": 123, "held_to": "witness",
                        "owed_only_witness": 5, "acked_after_witness_batches": 3, "acked_after_witness_pages": 7}
        }
    })
}

/// A verify summary with one finding per class given.
pub fn corrupt_verify(classes: &[&str]) -> Value {
    let findings: Vec<Value> = classes
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"class": c, "path": "/d/sqliosim.mdx", "offset": 8192 * i, "detail": "…"}))
        .collect();
    let mut doc = clean_verify();
    doc["outcome"] = json!("findings");
    doc["findings_total"] = json!(classes.len());
    doc["errors_total"] = json!(classes.len());
    doc["findings"] = Value::Array(findings);
    doc
}

/// A cycle whose host came back, verify exited 0 and found nothing, and whose drive counted
/// one more unsafe shutdown (16 + K → 17 + K).
pub fn clean_cycle(dir: &Path, host: &str, k: u32) -> PathBuf {
    let d = cycle_dir(dir, host, k);
    write_json(&d.join("cut.json"), &cut(host, k, true));
    write_json(&d.join("verify.json"), &clean_verify());
    std::fs::write(d.join("verify.rc"), "0\n").expect("rc");
    let count = |n: u32| format!("/dev/nvme0n1 unsafe_shutdowns {n}\n");
    std::fs::write(d.join("smart-before.txt"), count(16 + k)).expect("smart");
    std::fs::write(d.join("smart-after.txt"), count(17 + k)).expect("smart");
    d
}

/// Makes cycle `k` of `host` corrupt: verify found `classes` and exited 1.
pub fn make_corrupt(dir: &Path, host: &str, k: u32, classes: &[&str]) {
    let d = cycle_dir(dir, host, k);
    write_json(&d.join("verify.json"), &corrupt_verify(classes));
    std::fs::write(d.join("verify.rc"), "1\n").expect("rc");
}

/// A campaign where every host came back clean from every cycle.
pub fn all_clean(hosts: &[&str], cycles: u32) -> tempfile::TempDir {
    let dir = campaign(hosts, cycles);
    for h in hosts {
        for k in 1..=cycles {
            clean_cycle(dir.path(), h, k);
        }
    }
    dir
}

/// What `sqliosim report DIR OPTS…` did: exit code, stdout, stderr.
pub struct Ran {
    /// The exit code.
    pub code: Option<i32>,
    /// Stdout.
    pub stdout: String,
    /// Stderr.
    pub stderr: String,
}

impl Ran {
    /// Both streams, for assertion messages.
    pub fn both(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }

    /// The table row of `host` in cycle `k`.
    pub fn row(&self, host: &str, k: u32) -> &str {
        self.stdout
            .lines()
            .find(|l| {
                let mut w = l.split_whitespace();
                w.next() == Some(host) && w.next() == Some(&k.to_string())
            })
            .unwrap_or_else(|| panic!("no row for {host} cycle {k}:\n{}", self.stdout))
    }
}

/// Runs `sqliosim report DIR OPTS…`.
pub fn report(dir: &Path, opts: &[&str]) -> Ran {
    let out = Command::cargo_bin("sqliosim")
        .expect("binary")
        .arg("report")
        .arg(dir)
        .args(opts)
        .output()
        .expect("report runs");
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the report with `--junit`, `--json` and `--html` into a new directory; returns the
/// run and the three documents' text.
pub fn report_all(dir: &Path) -> (Ran, String, Value, String) {
    let out = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let (j, js, h) = (
        out.path().join("junit.xml"),
        out.path().join("campaign.json"),
        out.path().join("campaign.html"),
    );
    let s = |p: &Path| p.to_str().expect("UTF-8 path").to_string();
    let ran = report(
        dir,
        &["--junit", &s(&j), "--json", &s(&js), "--html", &s(&h)],
    );
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", p.display(), ran.both()))
    };
    let json: Value = serde_json::from_str(&read(&js)).expect("the report JSON is JSON");
    let (junit, html) = (read(&j), read(&h));
    (ran, junit, json, html)
}

/// (suite name, testcase name, kind of its failure or error, its `type`) for every test case
/// that failed or erred in a JUnit document.
pub fn junit_failures(xml: &str) -> Vec<(String, String, String, String)> {
    let doc = roxmltree::Document::parse(xml).expect("well-formed JUnit XML");
    crate::fleet::junit::check_schema(&doc);
    let mut out = Vec::new();
    for suite in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            for f in case
                .children()
                .filter(|n| n.has_tag_name("failure") || n.has_tag_name("error"))
            {
                out.push((
                    suite.attribute("name").unwrap_or("").to_string(),
                    case.attribute("name").unwrap_or("").to_string(),
                    f.tag_name().name().to_string(),
                    f.attribute("type").unwrap_or("").to_string(),
                ));
            }
        }
    }
    out.sort();
    out
}
