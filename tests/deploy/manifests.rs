//! deploy/ checked offline, as far as a machine without a cluster can: every Kubernetes manifest
//! validated against the Kubernetes schemas by kubernetes-validate (strict: unknown fields are
//! errors), what each kustomization renders, and the Ansible playbook through
//! `ansible-playbook --syntax-check`. The systemd unit is checked in systemd_unit.rs, collect.sh
//! run for real in collect.rs.
//!
//! Each test skips (SKIPPED line) when its tool is missing, and fails instead when
//! SQLIOSIM_REQUIRE_KUBEVAL=1 (kubernetes-validate) or SQLIOSIM_REQUIRE_ANSIBLE=1
//! (ansible-playbook) is set, as in CI, or SQLIOSIM_REQUIRE_KUBECTL=1 (kubectl's kustomize; CI
//! has no kubectl: the kustomizations' lists of files are checked without it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// True when `program --version` runs; otherwise skips, or fails under `require`.
pub(crate) fn tool(program: &str, require: &str) -> bool {
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

pub(crate) fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every file under `dir`, its subdirectories included.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            v.extend(files_under(&path));
        } else {
            v.push(path);
        }
    }
    v.sort();
    v
}

fn manifests() -> Vec<PathBuf> {
    files_under(&deploy().join("kubernetes"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        // Kustomize's own files, not Kubernetes objects: rendered and checked below.
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .collect()
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
    for path in files_under(&dir) {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let n = text.matches("registry.example.com").count();
        if n > 0 && path.extension().is_some_and(|e| e == "yaml") {
            let name = path
                .strip_prefix(&dir)
                .expect("under")
                .display()
                .to_string();
            naming.push((name, n));
        }
    }
    assert_eq!(
        naming,
        [("image/kustomization.yaml".to_string(), 1)],
        "the registry should be named once, in the image component"
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
    let labels = yaml_query(
        &k.join("results/namespace.yaml"),
        "docs[0]['metadata']['labels']",
    )
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

/// Each kustomization of both variants: what it must render (kinds, sorted) and whether its
/// workloads mount the shared results claim.
const KUSTOMIZATIONS: [(&str, &[&str], bool); 6] = [
    ("kubernetes", &["DaemonSet"], true),
    ("kubernetes/storageclass", &["Job"], true),
    (
        "kubernetes/results",
        &["ConfigMap", "Namespace", "PersistentVolumeClaim"],
        true,
    ),
    ("kubernetes-no-rwx", &["DaemonSet"], false),
    ("kubernetes-no-rwx/storageclass", &["Job"], false),
    (
        "kubernetes-no-rwx/results",
        &["ConfigMap", "Namespace"],
        false,
    ),
];

#[test]
fn every_kustomization_renders_valid_manifests_with_the_image_set_and_only_its_part() {
    if !tool("kubernetes-validate", "SQLIOSIM_REQUIRE_KUBEVAL") {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    for (name, kinds, shared) in KUSTOMIZATIONS {
        let Some(rendered) = kustomize(&deploy().join(name)) else {
            return;
        };
        let file = tmp.path().join(format!("{}.yaml", name.replace('/', "-")));
        std::fs::write(&file, &rendered).expect("write");
        let out = validate(&file);
        assert!(out.status.success(), "{name}: {}", text(&out));
        // The burn-in's cleanup (`kubectl delete -k deploy/kubernetes`) deletes what it
        // renders: never the results claim, the namespace or the StorageClass Job.
        let got = yaml_query(&file, "sorted(d['kind'] for d in docs)").expect("kinds");
        assert_eq!(got, serde_json::json!(kinds), "{name}:\n{rendered}");
        let images = yaml_query(
            &file,
            "sorted({c['image'] for d in docs if 'template' in d.get('spec', {}) \
             for c in d['spec']['template']['spec']['containers']})",
        )
        .expect("images");
        let workload = kinds.contains(&"DaemonSet") || kinds.contains(&"Job");
        let want = if workload {
            serde_json::json!(["registry.example.com/sqliosim:0.1.0"])
        } else {
            serde_json::json!([])
        };
        assert_eq!(images, want, "{name}");
        if workload {
            // Without a ReadWriteMany class no workload waits for the claim.
            assert_eq!(
                rendered.contains("claimName: sqliosim-results"),
                shared,
                "{name}:\n{rendered}"
            );
        }
    }
}

/// The same as above without kubectl (CI has none): the files each kustomization of
/// deploy/kubernetes lists hold only the kinds it must render.
#[test]
fn the_burn_in_kustomization_lists_no_claim_namespace_or_job() {
    for (name, kinds, _) in &KUSTOMIZATIONS[..3] {
        let dir = deploy().join(name);
        let Some(resources) = yaml_query(&dir.join("kustomization.yaml"), "docs[0]['resources']")
        else {
            return;
        };
        let mut got = Vec::new();
        for file in resources.as_array().expect("resources") {
            let path = dir.join(file.as_str().expect("a file"));
            let found = yaml_query(&path, "[d['kind'] for d in docs]").expect("kinds");
            got.extend(found.as_array().expect("kinds").clone());
        }
        got.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        assert_eq!(serde_json::json!(got), serde_json::json!(kinds), "{name}");
    }
}

/// The DaemonSet burns only a directory that must exist (the disk under test mounted, never
/// the node's root disk by default), and its grace period lets sqliosim end with its summary
/// as the systemd unit's TimeoutStopSec=15min does.
#[test]
fn the_daemonset_burns_only_a_mounted_disk_and_waits_as_long_as_the_unit() {
    let Some(ds) = yaml_query(
        &deploy().join("kubernetes/daemonset.yaml"),
        "docs[0]['spec']['template']['spec']",
    ) else {
        return;
    };
    let grace = ds["terminationGracePeriodSeconds"].as_u64().expect("grace");
    assert!(
        grace >= 900,
        "terminationGracePeriodSeconds {grace} < 15 min"
    );
    let container = &ds["containers"][0];
    let mounts = container["volumeMounts"].as_array().expect("mounts");
    let args = container["args"][0].as_str().expect("args");
    let mut disks = 0;
    for mount in mounts {
        let path = mount["mountPath"].as_str().expect("mountPath");
        if !args.contains(&format!("--dir {path}")) {
            continue;
        }
        disks += 1;
        let volume = ds["volumes"]
            .as_array()
            .expect("volumes")
            .iter()
            .find(|v| v["name"] == mount["name"])
            .expect("the mount's volume");
        assert_eq!(volume["hostPath"]["type"], "Directory", "{volume}");
        let host = volume["hostPath"]["path"].as_str().expect("path");
        assert!(
            !host.starts_with("/var/") && host != "/" && !host.starts_with("/tmp"),
            "{volume}: a directory of the root filesystem"
        );
    }
    assert!(disks > 0, "no --dir of the DaemonSet is a hostPath: {args}");
    let policy = container["env"]
        .as_array()
        .expect("env")
        .iter()
        .find(|e| e["name"] == "SQLIOSIM_ON_RESTART")
        .expect("SQLIOSIM_ON_RESTART in the DaemonSet");
    assert_eq!(policy["value"], "verify-only");
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
    let cm = deploy().join("kubernetes/results/configmap.yaml");
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
