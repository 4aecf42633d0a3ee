//! deploy/ checked offline, as far as a machine without a cluster can: every Kubernetes manifest
//! validated against the Kubernetes schemas by kubernetes-validate (strict: unknown fields are
//! errors) and the Ansible playbook through `ansible-playbook --syntax-check`. collect.sh is run
//! for real in tests/deploy_collect.rs.
//!
//! Each test skips (SKIPPED line) when its tool is missing, and fails instead when
//! SQLIOSIM_REQUIRE_KUBEVAL=1 (kubernetes-validate) or SQLIOSIM_REQUIRE_ANSIBLE=1
//! (ansible-playbook) is set, as in CI.

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
