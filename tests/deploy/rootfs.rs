//! The image of deploy/Containerfile without a registry or a container engine: its root
//! filesystem laid out by the script its build stage runs (deploy/rootfs.sh), with Debian's
//! busybox-static, then the pods' own commands (read out of daemonset.yaml and
//! storageclass-job.yaml, with run.sh out of configmap.yaml) run in it the way a container
//! runtime runs them: `chroot` into the tree, as PID 1 of a new PID namespace with its own
//! /proc and hostname. A pod delete or a node drain sends SIGTERM to that PID 1; the run must
//! end with its summary (not `outcome: running`), its bundle and its exit code, before the
//! SIGKILL that follows.
//!
//! The image's binary is a static musl build; this machine has no musl target, so the test
//! puts the glibc release binary in the tree with the libraries `ldd` names (the only step the
//! image does not have). Skips (SKIPPED line) unless root with unshare, chroot, busybox (static,
//! Debian's busybox-static: /bin/busybox, or SQLIOSIM_BUSYBOX) and python3 with PyYAML; fails
//! instead when SQLIOSIM_REQUIRE_ROOTFS=1, as in CI.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A small simulation that runs until it is stopped: only the signal ends it.
const CONFIG: &str = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nMaxMemoryMB=8\n\
    [AuditUser]\nUserCount=1\n[RandomUser]\nUserCount=2\n[BulkUpdateUser]\nUserCount=0\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn busybox() -> PathBuf {
    std::env::var_os("SQLIOSIM_BUSYBOX")
        .map_or_else(|| PathBuf::from("/bin/busybox"), PathBuf::from)
}

/// PyYAML reads `expr` (Python, over `doc`, the YAML file) and prints it as JSON.
fn yaml(file: &str, expr: &str) -> Result<serde_json::Value, String> {
    let path = repo().join("deploy/kubernetes").join(file);
    let code = format!(
        "import sys, json, yaml; doc = yaml.safe_load(open(sys.argv[1])); print(json.dumps({expr}))"
    );
    let out = Command::new("python3")
        .args(["-c", &code])
        .arg(&path)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 with PyYAML on {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{file}: {e}"))
}

fn prerequisites_met() -> bool {
    let why = (|| {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err("not root (chroot and PID namespaces need it)".to_string());
        }
        for tool in ["unshare", "chroot", "ldd"] {
            let ok = Command::new(tool).arg("--help").output().is_ok();
            if !ok {
                return Err(format!("`{tool}` does not run"));
            }
        }
        let bb = Command::new(busybox()).arg("--list").output();
        if !bb.is_ok_and(|o| o.status.success()) {
            return Err(format!(
                "{} does not run (Debian package busybox-static, or set SQLIOSIM_BUSYBOX)",
                busybox().display()
            ));
        }
        yaml("results/configmap.yaml", "doc['data']['run.sh']").map(|_| ())
    })();
    let Err(why) = why else {
        return true;
    };
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_ROOTFS").is_none(),
        "SQLIOSIM_REQUIRE_ROOTFS is set but the image's tree cannot be tested: {why}"
    );
    eprintln!("SKIPPED deploy_rootfs: {why}");
    false
}

/// The image's tree in `dir/root`, by deploy/rootfs.sh, plus the glibc binary's libraries.
fn build_root(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    let out = Command::new("sh")
        .arg(repo().join("deploy/rootfs.sh"))
        .arg(&root)
        .arg(env!("CARGO_BIN_EXE_sqliosim"))
        .arg(busybox())
        .output()
        .expect("sh deploy/rootfs.sh");
    assert!(
        out.status.success(),
        "rootfs.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    copy_libraries(&root);
    root
}

/// The shared libraries of /sqliosim (none for the image's static build), at their paths.
fn copy_libraries(root: &Path) {
    let out = Command::new("ldd")
        .arg(root.join("sqliosim"))
        .output()
        .expect("ldd");
    let text = String::from_utf8_lossy(&out.stdout);
    for lib in text
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(Path::new)
    {
        let dest = root.join(lib.strip_prefix("/").expect("absolute"));
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("lib dir");
        std::fs::copy(lib, &dest).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
    }
}

#[test]
fn every_link_of_the_images_bin_resolves_inside_the_image() {
    if !prerequisites_met() {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let root = build_root(tmp.path());
    let mut broken = Vec::new();
    for entry in std::fs::read_dir(root.join("bin")).expect("bin") {
        let path = entry.expect("entry").path();
        let Ok(target) = std::fs::read_link(&path) else {
            continue;
        };
        // Resolved as the container sees it: an absolute target is under the image's root.
        let inside = match target.strip_prefix("/") {
            Ok(rel) => root.join(rel),
            Err(_) => root.join("bin").join(&target),
        };
        if !inside.is_file() {
            broken.push(format!("{} -> {}", path.display(), target.display()));
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing in the image: {broken:?}"
    );
    // What the pods and `kubectl cp` run, in the image's tree (no /dev there: no /dev/null).
    let out = Command::new(host_tool("chroot"))
        .arg(&root)
        .args([
            "/bin/sh",
            "-c",
            "for t in sh sleep tar sed cat head date mv mkdir hostname kill; do \
             command -v $t >/tmp/found || { echo no $t; exit 1; }; done; \
             tar -cf - -C /bin busybox | tar -tf -",
        ])
        .env_clear()
        .env("PATH", "/bin:/")
        .output()
        .expect("chroot");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("busybox"),
        "in the image: {:?} {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A tool of the host by its full path (the commands run with the image's PATH).
fn host_tool(name: &str) -> PathBuf {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// The source of the filesystem holding `dir`, as df(1) reads it from the mount table.
fn mount_source(dir: &Path) -> String {
    let out = Command::new("df")
        .arg("--output=source")
        .arg(dir)
        .output()
        .expect("df");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1).unwrap_or_default().trim().to_string()
}

/// A pod: the manifest's container command, as PID 1 of a new PID namespace, chrooted into
/// the image's tree, with the pod's hostname, /proc and /dev.
struct Pod {
    child: Child,
    log: PathBuf,
}

fn start_pod(root: &Path, dir: &Path, manifest: &str, hostname: &str) -> Pod {
    let spec = yaml(
        manifest,
        "[c for c in doc['spec']['template']['spec']['containers'] if c['name'] == 'sqliosim'][0]",
    )
    .expect("the manifest's container");
    let argv: Vec<String> = spec["command"]
        .as_array()
        .expect("command")
        .iter()
        .chain(spec["args"].as_array().expect("args"))
        .map(|v| v.as_str().expect("string").to_string())
        .collect();
    let run_sh = yaml("results/configmap.yaml", "doc['data']['run.sh']").expect("run.sh");
    for sub in ["config", "results", "data/disk0", "proc", "dev"] {
        std::fs::create_dir_all(root.join(sub)).expect("mount point");
    }
    std::fs::write(root.join("config/run.sh"), run_sh.as_str().expect("text")).expect("run.sh");
    std::fs::write(root.join("config/sqliosim.cfg.ini"), CONFIG).expect("config");
    let log = dir.join(format!("{hostname}.log"));
    let stdout = std::fs::File::create(&log).expect("pod log");
    let mut cmd = Command::new("unshare");
    cmd.args(["--pid", "--fork", "--uts", "--mount"])
        .arg(format!("--mount-proc={}", root.join("proc").display()))
        .args([
            "sh",
            "-c",
            // The image's PATH (deploy/Containerfile) inside; chroot found with the host's.
            // /data/disk0 a mount point of its own, as the burn-in disk mounted there.
            "hostname \"$1\" && mount --bind /dev \"$2/dev\" \
             && mount --bind \"$2/data/disk0\" \"$2/data/disk0\" && shift && c=$(command -v chroot) \
             && PATH=/bin:/ exec \"$c\" \"$@\"",
            "pod",
            hostname,
        ])
        .arg(root)
        .args(&argv)
        .env_clear()
        .env("NODE_NAME", hostname);
    // The device the burn-in disk is mounted from, as the operator sets it: here the
    // filesystem the test's tree is on.
    let source = mount_source(root);
    for var in spec["env"].as_array().into_iter().flatten() {
        if let Some(value) = var["value"].as_str() {
            let name = var["name"].as_str().expect("name");
            let value = if name == "SQLIOSIM_REQUIRE_MOUNT" {
                source.as_str()
            } else {
                value
            };
            cmd.env(name, value);
        }
    }
    // Long enough that only the signal ends it; no bench (the manifests' are gigabytes).
    cmd.env("SQLIOSIM_DURATION", "1h").env("SQLIOSIM_BENCH", "");
    let child = cmd
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().expect("dup"))
        .stderr(stdout)
        .spawn()
        .expect("unshare");
    Pod { child, log }
}

/// Waits (bounded: a hang guard) until `ok` holds; false when the guard expires.
fn wait_until(limit: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

fn outcome(json: &Path) -> Option<String> {
    let text = std::fs::read_to_string(json).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["outcome"].as_str().map(str::to_string)
}

/// The namespace's PID 1: the one child of the `unshare --fork` process.
fn namespace_init(unshare: u32) -> u32 {
    let children = format!("/proc/{unshare}/task/{unshare}/children");
    let mut pid = None;
    assert!(
        wait_until(Duration::from_secs(30), || {
            pid = std::fs::read_to_string(&children)
                .ok()
                .and_then(|t| t.split_whitespace().next().and_then(|p| p.parse().ok()));
            pid.is_some()
        }),
        "unshare {unshare} has no child"
    );
    pid.expect("pid")
}

fn sigterm_ends_the_run_with_its_summary(manifest: &str, hostname: &str) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let root = build_root(tmp.path());
    let mut pod = start_pod(&root, tmp.path(), manifest, hostname);
    let results = root.join("results").join(hostname);
    let json = results.join("sqliosim.log.json");
    let log = |pod: &Pod| std::fs::read_to_string(&pod.log).unwrap_or_default();
    // Until the run is under way, or the pod has ended without one (a shell that does not run).
    wait_until(Duration::from_secs(300), || {
        outcome(&json).as_deref() == Some("running")
            || pod.child.try_wait().expect("wait").is_some()
    });
    if outcome(&json).as_deref() != Some("running") {
        let _ = pod.child.kill();
        panic!(
            "{manifest}: no running heartbeat in {}:\n{}",
            json.display(),
            log(&pod)
        );
    }
    let init = namespace_init(pod.child.id());
    let term = Command::new("kill")
        .args(["-TERM", &init.to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    // The kubelet sends SIGKILL after the grace period; this guard is looser (a hang guard on
    // a shared machine, not a timing check): a signal that never arrives never ends the run.
    let ended = wait_until(Duration::from_secs(120), || {
        pod.child.try_wait().expect("wait").is_some()
    });
    if !ended {
        let _ = Command::new("kill")
            .args(["-KILL", &init.to_string()])
            .status();
        let _ = pod.child.wait();
    }
    let said = log(&pod);
    assert!(
        ended,
        "{manifest}: SIGTERM to the pod's PID 1 did not end it; killed:\n{said}"
    );
    let outcome = outcome(&json);
    assert!(
        outcome.as_deref().is_some_and(|o| o != "running"),
        "{manifest}: the run's JSON says {outcome:?} after SIGTERM:\n{said}"
    );
    assert!(
        results.join("bundle.tar.gz").is_file(),
        "{manifest}: no bundle:\n{said}"
    );
    assert!(
        results.join("exit-code").is_file(),
        "{manifest}: no exit code:\n{said}"
    );
    assert!(
        said.contains(&format!("----- END sqliosim summary {hostname} -----")),
        "{manifest}: no summary in the pod's log:\n{said}"
    );
}

#[test]
fn a_daemonset_pods_sigterm_reaches_sqliosim_and_the_run_ends_with_its_summary() {
    if !prerequisites_met() {
        return;
    }
    sigterm_ends_the_run_with_its_summary("daemonset.yaml", "burnin-node1");
}

#[test]
fn a_storageclass_jobs_sigterm_reaches_sqliosim_and_the_run_ends_with_its_summary() {
    if !prerequisites_met() {
        return;
    }
    sigterm_ends_the_run_with_its_summary(
        "storageclass/storageclass-job.yaml",
        "sqliosim-storageclass-0",
    );
}
