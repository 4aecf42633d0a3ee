//! deploy/ checked offline, as far as a machine without a cluster can: every Kubernetes manifest
//! validated against the Kubernetes schemas by kubernetes-validate (strict: unknown fields are
//! errors), the Ansible playbook through `ansible-playbook --syntax-check`, and the systemd
//! burn-in unit (its settings, its command against the built binary, `systemd-analyze
//! verify`). collect.sh is run for real in tests/deploy_collect.rs.
//!
//! Each test skips (SKIPPED line) when its tool is missing, and fails instead when
//! SQLIOSIM_REQUIRE_KUBEVAL=1 (kubernetes-validate) or SQLIOSIM_REQUIRE_ANSIBLE=1
//! (ansible-playbook) is set, as in CI, or SQLIOSIM_REQUIRE_SYSTEMD=1 (systemd-analyze; CI does
//! not set it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// True when `program --version` runs; otherwise skips, or fails under `require`.
fn tool(program: &str, require: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os(require).is_none(),
            "{require} is set but `{program}` does not run (see .ci/run for the pinned install)"
        );
        eprintln!("SKIPPED: `{program}` is not installed");
    }
    ok
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn manifests() -> Vec<PathBuf> {
    let dir = deploy().join("kubernetes");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("deploy/kubernetes")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    v.sort();
    v
}

fn validate(file: &Path) -> Output {
    Command::new("kubernetes-validate")
        .args(["--strict", "--no-warn"])
        .arg(file)
        .output()
        .expect("kubernetes-validate")
}

#[test]
fn every_kubernetes_manifest_validates_against_the_schemas() {
    if !tool("kubernetes-validate", "SQLIOSIM_REQUIRE_KUBEVAL") {
        return;
    }
    let files = manifests();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    for want in ["daemonset.yaml", "storageclass-job.yaml", "configmap.yaml"] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    for file in &files {
        let out = validate(file);
        let said = text(&out);
        assert!(out.status.success(), "{}: {said}", file.display());
        assert!(said.contains("passed"), "{}: {said}", file.display());
    }
}

#[test]
fn a_misspelt_field_fails_the_validation() {
    // The check above is only worth something if strict validation rejects what a cluster would.
    if !tool("kubernetes-validate", "SQLIOSIM_REQUIRE_KUBEVAL") {
        return;
    }
    let good = std::fs::read_to_string(deploy().join("kubernetes/daemonset.yaml")).expect("read");
    assert!(good.contains("hostNetwork: true"));
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let bad = dir.path().join("daemonset.yaml");
    std::fs::write(&bad, good.replace("hostNetwork: true", "hostNetwrk: true")).expect("write");
    let out = validate(&bad);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("hostNetwrk"), "{}", text(&out));
}

#[test]
fn the_playbook_passes_the_ansible_syntax_check() {
    if !tool("ansible-playbook", "SQLIOSIM_REQUIRE_ANSIBLE") {
        return;
    }
    let out = Command::new("ansible-playbook")
        .current_dir(deploy().join("ansible"))
        .args(["--syntax-check", "-i", "localhost,", "site.yml"])
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("ansible-playbook");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("playbook: site.yml"), "{}", text(&out));
}

/// deploy/systemd's unit, its continuation lines joined.
fn unit_lines() -> Vec<String> {
    let path = deploy().join("systemd").join("sqliosim-burnin.service");
    let text = std::fs::read_to_string(&path).expect("the burn-in unit");
    text.replace("\\\n", " ")
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

/// The value of `key=` in the unit's lines (the last one wins, as in systemd).
fn unit_value(lines: &[String], key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

#[test]
fn the_burn_in_unit_stops_cleanly_logs_to_the_journal_and_its_command_parses() {
    let lines = unit_lines();
    let v = |k| unit_value(&lines, k);
    assert_eq!(v("Restart").as_deref(), Some("no"));
    assert_eq!(v("KillSignal").as_deref(), Some("SIGTERM"));
    assert_eq!(v("TimeoutStopSec").as_deref(), Some("15min"));
    assert_eq!(v("StandardOutput").as_deref(), Some("journal"));
    // The command with the unit's Environment= defaults, against the built binary: its
    // options exist and resolve (--dry-run stops before any file is touched).
    let mut exec = v("ExecStart").expect("ExecStart");
    for env in lines.iter().filter_map(|l| l.strip_prefix("Environment=")) {
        let (name, value) = env.split_once('=').expect("NAME=value");
        exec = exec.replace(&format!("${{{name}}}"), value);
    }
    assert!(exec.contains("--status-interval 60"), "{exec}");
    let words: Vec<&str> = exec.split_whitespace().collect();
    assert_eq!(words[..2], ["/usr/local/bin/sqliosim", "run"]);
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quick.cfg.ini");
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let args: Vec<String> = words[2..]
        .iter()
        .map(|w| match *w {
            "/etc/sqliosim/burnin.cfg.ini" => cfg.display().to_string(),
            w if w.starts_with('/') => tmp.path().join(&w[1..]).display().to_string(),
            w => w.to_string(),
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .arg("run")
        .args(&args)
        .arg("--dry-run")
        .output()
        .expect("sqliosim");
    assert!(out.status.success(), "{args:?}: {}", text(&out));
}

#[test]
fn the_burn_in_unit_passes_systemd_analyze_verify() {
    if !tool("systemd-analyze", "SQLIOSIM_REQUIRE_SYSTEMD") {
        return;
    }
    // verify checks that the binary and the mount exist: point them at the built binary and
    // a directory that does.
    let unit = std::fs::read_to_string(deploy().join("systemd/sqliosim-burnin.service"))
        .expect("unit")
        .replace("/usr/local/bin/sqliosim", env!("CARGO_BIN_EXE_sqliosim"))
        .replace("RequiresMountsFor=/mnt/burnin", "RequiresMountsFor=/tmp");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("sqliosim-burnin.service");
    std::fs::write(&path, unit).expect("write");
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("systemd-analyze");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !text(&out).contains("sqliosim-burnin.service:"),
        "warnings: {}",
        text(&out)
    );
}
