//! deploy/ checked offline, as far as a machine without a cluster can: every Kubernetes manifest
//! validated against the Kubernetes schemas by kubernetes-validate (strict: unknown fields are
//! errors), the Ansible playbook through `ansible-playbook --syntax-check`, and the systemd
//! burn-in unit (its settings, its command against the built binary, `systemd-analyze
//! verify`). collect.sh is run for real in tests/deploy/collect.rs.
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
        // Kustomize's own file, not a Kubernetes object: rendered and checked below.
        .filter(|p| !p.ends_with("kustomization.yaml"))
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
    for playbook in ["site.yml", "campaign.yml"] {
        let out = Command::new("ansible-playbook")
            .current_dir(deploy().join("ansible"))
            .args(["--syntax-check", "-i", "localhost,", playbook])
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("ansible-playbook");
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            text(&out).contains(&format!("playbook: {playbook}")),
            "{}",
            text(&out)
        );
    }
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

/// PyYAML reads `expr` (Python over `docs`, the YAML documents of `file`) and prints it as JSON;
/// None (skipped, or failed under SQLIOSIM_REQUIRE_KUBEVAL) without python3 and PyYAML.
fn yaml_query(file: &Path, expr: &str) -> Option<serde_json::Value> {
    let code = format!(
        "import sys, json, yaml; docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]; print(json.dumps({expr}))"
    );
    let out = Command::new("python3")
        .args(["-c", &code])
        .arg(file)
        .output();
    match out {
        Ok(out) if out.status.success() => {
            Some(serde_json::from_slice(&out.stdout).expect("JSON from python"))
        }
        other => {
            let why = format!("python3 with PyYAML on {}: {other:?}", file.display());
            assert!(
                std::env::var_os("SQLIOSIM_REQUIRE_KUBEVAL").is_none(),
                "SQLIOSIM_REQUIRE_KUBEVAL is set but {why}"
            );
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}

#[test]
fn the_image_registry_is_named_once_in_the_kustomization() {
    let dir = deploy().join("kubernetes");
    let mut naming = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("deploy/kubernetes") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let n = text.matches("registry.example.com").count();
        if n > 0 && path.extension().is_some_and(|e| e == "yaml") {
            naming.push((
                path.file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned(),
                n,
            ));
        }
    }
    assert_eq!(
        naming,
        [("kustomization.yaml".to_string(), 1)],
        "the registry should be named once, in kustomization.yaml"
    );
}

#[test]
fn burn_in_pods_land_only_on_labelled_nodes_of_a_namespace_that_admits_them() {
    let k = deploy().join("kubernetes");
    let Some(ds) = yaml_query(
        &k.join("daemonset.yaml"),
        "docs[0]['spec']['template']['spec']",
    ) else {
        return;
    };
    let tolerates_all = ds["tolerations"].as_array().is_some_and(|t| {
        t.iter()
            .any(|t| t["operator"] == "Exists" && t["key"].is_null())
    });
    // Tolerating every taint reaches the control-plane nodes too, unless a selector keeps
    // the pods to the nodes labelled for burn-in.
    let selector = &ds["nodeSelector"]["sqliosim.io/burn-in"];
    assert!(
        !tolerates_all || selector == "true",
        "the DaemonSet tolerates every taint and selects no burn-in label: {ds}"
    );
    let host_access = ds["hostNetwork"] == true
        || ds["volumes"]
            .as_array()
            .is_some_and(|v| v.iter().any(|v| !v["hostPath"].is_null()));
    let labels = yaml_query(&k.join("namespace.yaml"), "docs[0]['metadata']['labels']")
        .expect("namespace labels");
    let enforce = labels["pod-security.kubernetes.io/enforce"].as_str();
    // Baseline Pod Security forbids hostPath and hostNetwork: the namespace must say which level
    // it enforces, and one that admits the DaemonSet.
    assert!(
        enforce.is_some(),
        "no Pod Security label on the namespace: {labels}"
    );
    if host_access {
        assert_eq!(enforce, Some("privileged"), "{labels}");
    }
}

/// `kubectl kustomize DIR` (kustomize built into kubectl), or None when kubectl is missing.
fn kustomize(dir: &Path) -> Option<String> {
    if !tool("kubectl", "SQLIOSIM_REQUIRE_KUBECTL") {
        return None;
    }
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .expect("kubectl");
    assert!(out.status.success(), "{}: {}", dir.display(), text(&out));
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn both_kustomizations_render_valid_manifests_with_the_image_set() {
    if !tool("kubernetes-validate", "SQLIOSIM_REQUIRE_KUBEVAL") {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    for (name, shared) in [("kubernetes", true), ("kubernetes-no-rwx", false)] {
        let Some(rendered) = kustomize(&deploy().join(name)) else {
            return;
        };
        let file = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&file, &rendered).expect("write");
        let out = validate(&file);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let images = yaml_query(
            &file,
            "sorted({c['image'] for d in docs if 'template' in d.get('spec', {}) \
             for c in d['spec']['template']['spec']['containers']})",
        )
        .expect("images");
        assert_eq!(
            images,
            serde_json::json!(["registry.example.com/sqliosim:0.1.0"]),
            "{name}"
        );
        // Without a ReadWriteMany class: no claim, and no workload waits for one.
        assert_eq!(
            rendered.contains("PersistentVolumeClaim")
                || rendered.contains("claimName: sqliosim-results"),
            shared,
            "{name}:\n{rendered}"
        );
    }
}

#[test]
fn the_readmes_wait_for_the_storageclass_job_returns_when_an_index_failed() {
    // The README's commands before collect.sh, against stand-ins that answer as a cluster does
    // for a Job whose index failed for corruption: `kubectl wait --for=condition=Complete` waits
    // (until its --timeout), `kubectl get job` shows the Failed condition.
    let readme = std::fs::read_to_string(deploy().join("kubernetes/README.md")).expect("README");
    let block = readme
        .split("```")
        .skip(1)
        .step_by(2)
        .find(|b| b.contains("./collect.sh --job"))
        .expect("a code block running collect.sh --job");
    let script: String = block
        .lines()
        .take_while(|l| !l.starts_with("./collect.sh"))
        .map(|l| format!("{l}\n"))
        .collect();
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let kubectl = "#!/bin/sh\ncase \"$1\" in\n  wait) exec sleep 3600 ;;\n  \
                   get) echo 'FailureTarget Failed' ;;\n  *) exit 0 ;;\nesac\n";
    for (name, body) in [("kubectl", kubectl), ("docker", "#!/bin/sh\nexit 0\n")] {
        let path = bin.join(name);
        std::fs::write(&path, body).expect("stand-in");
        Command::new("chmod")
            .arg("755")
            .arg(&path)
            .status()
            .expect("chmod");
    }
    let file = tmp.path().join("wait.sh");
    std::fs::write(&file, &script).expect("script");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // A hang guard (timeout exits 124), not a timing check: the old wait never returned.
    let out = Command::new("timeout")
        .args(["-k", "5", "120", "bash", "-e"])
        .arg(&file)
        .env("PATH", path)
        .output()
        .expect("timeout bash");
    assert!(
        out.status.success(),
        "the README's wait did not return on a failed Job ({:?}):\n{script}\n{}",
        out.status,
        text(&out)
    );
}

#[test]
fn the_configmaps_configuration_resolves_without_a_warning() {
    let cm = deploy().join("kubernetes/configmap.yaml");
    let Some(cfg) = yaml_query(&cm, "docs[0]['data']['sqliosim.cfg.ini']") else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let file = tmp.path().join("sqliosim.cfg.ini");
    std::fs::write(&file, cfg.as_str().expect("text")).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .arg("run")
        .arg("--config")
        .arg(&file)
        .arg("--dir")
        .arg(tmp.path().join("data"))
        .args(["--duration", "30m", "--dry-run"])
        .output()
        .expect("sqliosim");
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
}
