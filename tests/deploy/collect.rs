//! deploy/kubernetes/collect.sh for real, without a cluster: two "pods" run the pods' own
//! wrapper (run.sh, read out of configmap.yaml) with the real sqliosim, each under its own
//! hostname (`unshare --uts`, as a pod has), one with injected faults; a stand-in `kubectl`
//! plays their logs back; collect.sh must rebuild one summary per pod from the logs and the
//! fleet report it runs must name the faulty pod and exit 1.
//!
//! Skips (SKIPPED line) unless root with bash and python3 with PyYAML; fails instead when
//! SQLIOSIM_REQUIRE_KUBEVAL=1, as in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

const PODS: [&str; 2] = ["sqliosim-storageclass-0", "sqliosim-storageclass-1"];
const FAULTY: usize = 1;

pub(crate) const CONFIG: &str = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\n\
    [AuditUser]\nUserCount=1\n[RandomUser]\nUserCount=2\n[BulkUpdateUser]\nUserCount=0\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

/// PyYAML reads run.sh out of the ConfigMap; None (with the reason) when it cannot.
fn wrapper_script() -> Result<String, String> {
    let cm = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/results/configmap.yaml");
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['data']['run.sh'], end='')",
        ])
        .arg(&cm)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 with PyYAML: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn prerequisites() -> Option<String> {
    let root = Command::new("id").arg("-u").output();
    let why = if !root.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0") {
        "not root (`unshare --uts` gives each pod its hostname)".to_string()
    } else {
        match wrapper_script() {
            Ok(script) => return Some(script),
            Err(e) => e,
        }
    };
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_KUBEVAL").is_none(),
        "SQLIOSIM_REQUIRE_KUBEVAL is set but collect.sh cannot be tested: {why}"
    );
    eprintln!("SKIPPED deploy_collect: {why}");
    None
}

/// One pod: run.sh under the pod's hostname; its stdout is the pod's log.
fn run_pod(dir: &Path, script: &Path, pod: &str, faulty: bool) -> Vec<u8> {
    let data = dir.join("data").join(pod);
    std::fs::create_dir_all(&data).expect("data dir");
    let mut args = vec![
        "run.sh".to_string(),
        pod.to_string(),
        "--dir".into(),
        data.display().to_string(),
    ];
    if faulty {
        args.extend(["--fault-injection".into(), "lost@10,torn4k@80".into()]);
    }
    let out = Command::new("unshare")
        .args([
            "--uts",
            "--",
            "sh",
            "-c",
            "hostname \"$1\" && shift && exec sh \"$@\"",
            "pod",
        ])
        .arg(pod)
        .arg(script)
        .args(&args[1..])
        .env("SQLIOSIM_BIN", env!("CARGO_BIN_EXE_sqliosim"))
        .env("SQLIOSIM_CONFIG", dir.join("small.cfg.ini"))
        .env("SQLIOSIM_RESULTS", dir.join("results"))
        .env("SQLIOSIM_DURATION", "3s")
        .output()
        .expect("run.sh");
    let want = if faulty { 1 } else { 0 };
    assert_eq!(
        out.status.code(),
        Some(want),
        "{pod}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A `kubectl` that knows the pods and replays their logs, as the API server would.
fn fake_kubectl(dir: &Path) -> PathBuf {
    fake_kubectl_of(dir, &PODS)
}

pub(crate) fn fake_kubectl_of(dir: &Path, pods: &[&str]) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let logs = dir.join("logs");
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  get) for p in {pods}; do echo pod/$p-x7k2p; done ;;\n  \
         logs) cat \"{logs}/${{4#pod/}}\" ;;\n  *) echo \"kubectl stand-in: $*\" >&2; exit 1 ;;\nesac\n",
        pods = pods.join(" "),
        logs = logs.display()
    );
    let path = bin.join("kubectl");
    std::fs::write(&path, script).expect("kubectl");
    let _ = Command::new("chmod").arg("+x").arg(&path).status();
    bin
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn collect_sh_rebuilds_each_pods_summary_from_its_log_and_the_report_names_the_faulty_pod() {
    let Some(run_sh) = prerequisites() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    let script = dir.join("run.sh");
    std::fs::write(&script, run_sh).expect("run.sh");
    std::fs::create_dir_all(dir.join("logs")).expect("logs");
    for (i, pod) in PODS.iter().enumerate() {
        let log = run_pod(dir, &script, pod, i == FAULTY);
        std::fs::write(dir.join("logs").join(format!("{pod}-x7k2p")), log).expect("log");
    }
    let bin = fake_kubectl(dir);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out_dir = dir.join("collected");
    let collect = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/collect.sh");
    let out = Command::new("bash")
        .arg(&collect)
        .args(["--job", "sqliosim-storageclass", "--out"])
        .arg(&out_dir)
        .args(["--sqliosim", env!("CARGO_BIN_EXE_sqliosim")])
        .env("PATH", path)
        .output()
        .expect("collect.sh");
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for pod in PODS {
        // The summary from the log is the very file the pod wrote to the results volume.
        let from_log = json(&out_dir.join(pod).join("sqliosim.log.json"));
        let on_volume = json(&dir.join("results").join(pod).join("sqliosim.log.json"));
        assert_eq!(
            from_log, on_volume,
            "{pod}: the summary in the log differs from the file"
        );
    }
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("CORRUPTION on {} ", PODS[FAULTY])),
        "{said}"
    );
    assert!(
        !said.contains(&format!("CORRUPTION on {} ", PODS[0])),
        "{said}"
    );
}

/// A pod started again (a crash, a reboot, a retried pod) never deletes the results of its
/// earlier start: they are kept beside, under the run id of their JSON summary.
#[test]
fn run_sh_keeps_the_results_of_an_earlier_start_under_its_run_id() {
    let Some(run_sh) = prerequisites() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    let script = dir.join("run.sh");
    std::fs::write(&script, run_sh).expect("run.sh");
    let pod = PODS[FAULTY];
    run_pod(dir, &script, pod, true);
    let results = dir.join("results");
    let first = std::fs::read(results.join(pod).join("sqliosim.log.json")).expect("first json");
    let id = json(&results.join(pod).join("sqliosim.log.json"))["run_id"]
        .as_u64()
        .expect("run_id");
    let second = run_pod(dir, &script, pod, true);
    let said = String::from_utf8_lossy(&second);
    // The run id in hex, as sqliosim names a run (dumps/RUNID, NAME.RUNID.bak).
    let kept = results.join(format!("{pod}.{id:016x}"));
    assert!(said.contains(&kept.display().to_string()), "{said}");
    let kept_json = std::fs::read(kept.join("sqliosim.log.json")).expect("kept json");
    assert!(
        kept_json == first,
        "the earlier start's summary was changed"
    );
    assert!(kept.join("dumps").is_dir(), "its dumps were kept with it");
    assert!(
        results.join(pod).join("sqliosim.log.json").is_file(),
        "the new start's results"
    );
}

/// The Ansible role's keep-aside step (its shell, read out of the role's defaults) moves an
/// earlier run's results to results.RUNID (the id in hex) and deletes nothing; no task of the role deletes a
/// results directory.
#[test]
fn the_ansible_role_keeps_earlier_results_under_their_run_id() {
    if prerequisites().is_none() {
        return;
    }
    let role = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/ansible/roles/sqliosim");
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['sqliosim_keep_aside'], end='')",
        ])
        .arg(role.join("defaults/main.yml"))
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let keep = String::from_utf8_lossy(&out.stdout).into_owned();
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("dumps")).expect("dumps");
    // A run id above 2^63 (beyond sh arithmetic) is named in hex as sqliosim names it.
    let json =
        "{\n  \"schema\": \"x\",\n  \"run_id\": 18446744073709551613,\n  \"findings\": []\n}\n";
    std::fs::write(results.join("sqliosim.log.json"), json).expect("json");
    // The keep-aside shell, after `prelude` (shims of its commands), over the results.
    let keep_aside = |prelude: &str| {
        Command::new("sh")
            .args(["-c", &format!("{prelude}\n{keep}")])
            .env("KEEP", &results)
            .output()
            .expect("sh")
    };
    for expect in ["results.fffffffffffffffd", "results.fffffffffffffffd-2"] {
        let out = keep_aside("");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kept = tmp.path().join(expect);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            kept.display().to_string()
        );
        assert_eq!(
            std::fs::read_to_string(kept.join("sqliosim.log.json")).expect("kept"),
            json
        );
        assert!(kept.join("dumps").is_dir());
        std::fs::create_dir_all(results.join("dumps")).expect("dumps");
        std::fs::write(results.join("sqliosim.log.json"), json).expect("json");
    }
    // A stranger's link appearing at the chosen name between the check and the move (a shim
    // of `mv` plants it just before the real one runs): the results must never go through it
    // into the stranger's directory, and must still be kept, under a name of their own.
    let victim = tmp.path().join("victim");
    std::fs::create_dir(&victim).expect("victim");
    std::fs::write(results.join("sqliosim.log.json"), "{}").expect("json");
    let out = keep_aside(&format!(
        "mv() {{ for last; do :; done; [ -e \"$last\" ] || [ -L \"$last\" ] || ln -s {} \"$last\"; command mv \"$@\"; }}",
        victim.display()
    ));
    let planted: Vec<_> = std::fs::read_dir(&victim)
        .expect("victim")
        .flatten()
        .collect();
    assert!(
        planted.is_empty(),
        "the results went into a stranger's directory through a link planted at the name: {:?}; {}",
        planted.iter().map(|e| e.path()).collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        kept.join("sqliosim.log.json").is_file() && !results.exists(),
        "kept at {}: {}",
        kept.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // An mv without -T (BSD's, on a macOS controller) falls back to perl's rename.
    std::fs::create_dir_all(results.join("dumps")).expect("dumps");
    std::fs::write(results.join("sqliosim.log.json"), json).expect("json");
    let out = keep_aside(
        "mv() { case \"$1\" in -T) echo 'mv: illegal option -- T' >&2; return 64;; esac; command mv \"$@\"; }",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = tmp.path().join("results.fffffffffffffffd-3");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        kept.display().to_string()
    );
    assert!(kept.join("dumps").is_dir() && !results.exists());
    let tasks = std::fs::read_to_string(role.join("tasks/run.yml")).expect("run.yml");
    for block in tasks.split("\n- name:") {
        assert!(
            !(block.contains("state: absent") && block.contains("results_dir")),
            "a task deletes the results: {block}"
        );
    }
}
