//! A Kubernetes node that loses power mid burn-in, without a cluster: the pods' run.sh (out of
//! results/configmap.yaml) drives the real sqliosim under the node's hostname, and is SIGKILLed with its
//! whole process group once the run is under way (a power cut ends every process at once, the
//! run's summary still says `running`). Then run.sh starts again, as the restarted pod does.
//! That second start must verify the cut set, then stop (`SQLIOSIM_ON_RESTART=verify-only`,
//! the default) or resume (`resume`), and in both cases leave a verdict between its marker
//! lines that collect.sh reads: that the node was cut, and what verify found.
//!
//! Skips (SKIPPED line) as collect.rs does.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::collect::{fake_kubectl_of, prerequisites, CONFIG};

const NODE: &str = "node1";

/// run.sh NODE --dir DATA under the node's hostname, with `env` added.
fn pod(dir: &Path, env: &[(&str, &str)]) -> Command {
    pod_of(dir, env, false)
}

/// [`pod`], with `--idle` when `idle` (as the DaemonSet starts it).
fn pod_of(dir: &Path, env: &[(&str, &str)], idle: bool) -> Command {
    let data = dir.join("data").join(NODE);
    std::fs::create_dir_all(&data).expect("data dir");
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--uts",
        "--",
        "sh",
        "-c",
        "hostname \"$1\" && shift && exec sh \"$@\"",
        "pod",
        NODE,
    ])
    .arg(dir.join("run.sh"))
    .args(idle.then_some("--idle"))
    .arg(NODE)
    .arg("--dir")
    .arg(&data)
    .env("SQLIOSIM_BIN", env!("CARGO_BIN_EXE_sqliosim"))
    .env("SQLIOSIM_CONFIG", dir.join("small.cfg.ini"))
    .env("SQLIOSIM_RESULTS", dir.join("results"))
    .env_remove("SQLIOSIM_ON_RESTART");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn outcome(json: &Path) -> Option<String> {
    let text = std::fs::read_to_string(json).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["outcome"].as_str().map(str::to_string)
}

/// The first start, cut: run.sh in a process group of its own, SIGKILLed as a whole once the
/// journal holds something and the summary says `running` (polled, with a hang guard).
fn cut_first_start(dir: &Path) {
    let log = std::fs::File::create(dir.join("first.log")).expect("log");
    let mut child = pod(dir, &[("SQLIOSIM_DURATION", "1h")])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("dup"))
        .stderr(log)
        .spawn()
        .expect("run.sh");
    let journal = dir.join("data").join(NODE).join("sqliosim.journal");
    let summary = dir.join("results").join(NODE).join("sqliosim.log.json");
    let start = Instant::now();
    let mut under_way = false;
    while start.elapsed() < Duration::from_secs(300) {
        under_way = std::fs::metadata(&journal).is_ok_and(|m| m.len() > 0)
            && outcome(&summary).as_deref() == Some("running");
        if under_way || child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let killed = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status()
        .expect("kill");
    let status = child.wait().expect("wait");
    let said = std::fs::read_to_string(dir.join("first.log")).unwrap_or_default();
    assert!(
        under_way && killed.success(),
        "the first start never got under way ({status:?}):\n{said}"
    );
    // After a power cut no process of the run is left: wait until its orphans are reaped too
    // (a zombie still holds its PID, which the run's lock names).
    let gone = |pgid: u32| !group_alive(pgid);
    let start = Instant::now();
    while !gone(child.id()) && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        gone(child.id()),
        "the process group of run.sh outlived its SIGKILL"
    );
}

/// Whether any process (a zombie included) is still in process group `pgid`.
fn group_alive(pgid: u32) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let stat = std::fs::read_to_string(p.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid pgrp ...: the fields after the last ')'.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2).map(str::to_string))
            .is_some_and(|g| g == pgid.to_string())
    })
}

/// The JSON printed between the marker lines named `name` in `out`, None without them.
fn summary(out: &str, name: &str) -> Option<serde_json::Value> {
    let begin = format!("----- BEGIN sqliosim summary {name} -----\n");
    let end = format!("----- END sqliosim summary {name} -----");
    let from = out.find(&begin)? + begin.len();
    let to = from + out[from..].find(&end)?;
    let body = &out[from..to];
    Some(
        serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("no JSON between the markers of {name} ({e}):\n{out}")),
    )
}

/// collect.sh over the restarted pod's log, through the stand-in kubectl.
fn collect(dir: &Path, log: &[u8]) -> Output {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).expect("logs");
    std::fs::write(logs.join(format!("{NODE}-x7k2p")), log).expect("log");
    let bin = fake_kubectl_of(dir, &[NODE]);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let collect = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/kubernetes/collect.sh");
    Command::new("bash")
        .arg(&collect)
        .arg("--out")
        .arg(dir.join("collected"))
        .args(["--sqliosim", env!("CARGO_BIN_EXE_sqliosim")])
        .env("PATH", path)
        .output()
        .expect("collect.sh")
}

/// Cuts the first start, starts run.sh again with `policy`; returns the second start's
/// output and collect.sh's over its log.
fn cut_and_restart(policy: Option<&str>) -> Option<(Output, Output)> {
    let run_sh = prerequisites()?;
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    std::fs::write(dir.join("run.sh"), run_sh).expect("run.sh");
    cut_first_start(dir);
    let mut env = vec![("SQLIOSIM_DURATION", "3s")];
    if let Some(p) = policy {
        env.push(("SQLIOSIM_ON_RESTART", p));
    }
    let second = pod(dir, &env).output().expect("run.sh");
    let said = text(&second);
    // Every summary it prints is there, or named as missing: never a shell's error.
    assert!(!said.contains("cat:"), "{said}");
    let collected = collect(dir, &second.stdout);
    Some((second, collected))
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// By default the restarted pod verifies the cut set and stops there: it prints the cut run's
/// last summary (`running`) and verify's (CLEAN on an honest disk, with the journal's word that
/// the run did not shut down cleanly) and exits 2 (the burn-in did not run to its end: no
/// pass); collect.sh reads both: the node is UNFINISHED, its cut set CLEAN, exit 2.
#[test]
fn a_pod_restarted_after_a_cut_verifies_the_cut_set_and_leaves_its_verdict() {
    let Some((second, collected)) = cut_and_restart(None) else {
        return;
    };
    let said = text(&second);
    let log = String::from_utf8_lossy(&second.stdout);
    assert!(
        said.contains(&format!("{NODE} was cut; verify: CLEAN")),
        "{said}"
    );
    assert_eq!(second.status.code(), Some(2), "{said}");
    let verify = summary(&log, &format!("{NODE}.verify")).expect("verify's summary");
    assert_eq!(verify["outcome"], "clean", "{verify}");
    assert_eq!(
        verify["judgement"]["journal"]["clean_shutdown"], false,
        "{verify}"
    );
    let cut = summary(&log, &format!("{NODE}.cut")).expect("the cut run's summary");
    assert_eq!(cut["outcome"], "running", "{cut}");
    let report = text(&collected);
    assert!(!report.contains("UNREADABLE"), "{report}");
    assert!(
        report.contains(&format!("UNFINISHED on {NODE} ")),
        "{report}"
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with(NODE) && l.contains(" CLEAN ")),
        "{report}"
    );
    assert_eq!(collected.status.code(), Some(2), "{report}");
}

/// With `SQLIOSIM_ON_RESTART=resume`, a CLEAN verify is followed by `run --resume` of the same
/// set: verify's summary and the resumed run's are printed, both CLEAN, and collect.sh passes.
#[test]
fn a_pod_restarted_after_a_cut_resumes_after_a_clean_verify_when_told_to() {
    let Some((second, collected)) = cut_and_restart(Some("resume")) else {
        return;
    };
    let said = text(&second);
    let log = String::from_utf8_lossy(&second.stdout);
    assert!(
        said.contains(&format!("{NODE} was cut; verify: CLEAN")),
        "{said}"
    );
    assert_eq!(second.status.code(), Some(0), "{said}");
    let verify = summary(&log, &format!("{NODE}.verify")).expect("verify's summary");
    assert_eq!(verify["outcome"], "clean", "{verify}");
    let resumed = summary(&log, NODE).expect("the resumed run's summary");
    assert_eq!(resumed["outcome"], "clean", "{resumed}");
    assert!(summary(&log, &format!("{NODE}.cut")).is_none(), "{log}");
    let report = text(&collected);
    assert!(!report.contains("UNREADABLE"), "{report}");
    assert_eq!(collected.status.code(), Some(0), "{report}");
}

/// A cut whose set is gone (the fresh volume of a StorageClass Job's retried pod: every --dir
/// empty) cannot be verified: the start runs afresh, the earlier results kept beside.
#[test]
fn a_pod_restarted_after_a_cut_whose_set_is_gone_starts_a_new_run() {
    let Some(run_sh) = prerequisites() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    std::fs::write(dir.join("run.sh"), run_sh).expect("run.sh");
    // What a cut start leaves on the results volume: a summary still `running`, no exit code.
    let earlier = dir.join("results").join(NODE);
    std::fs::create_dir_all(&earlier).expect("results");
    let running = "{\n  \"schema\": \"sqliosim-summary/2\",\n  \"run_id\": 77,\n  \"outcome\": \"running\"\n}\n";
    std::fs::write(earlier.join("sqliosim.log.json"), running).expect("json");
    let out = pod(dir, &[("SQLIOSIM_DURATION", "3s")])
        .output()
        .expect("run.sh");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("its set is gone"), "{said}");
    let log = String::from_utf8_lossy(&out.stdout);
    let run = summary(&log, NODE).expect("the new run's summary");
    assert_eq!(run["outcome"], "clean", "{run}");
    // Named by the run id in hex, as sqliosim names a run (77 = 0x4d).
    let kept = dir.join("results").join(format!("{NODE}.000000000000004d"));
    assert_eq!(
        std::fs::read_to_string(kept.join("sqliosim.log.json")).expect("kept"),
        running
    );
}

/// A policy that is neither value is refused before anything is moved or run: exit 2, the
/// setting named.
#[test]
fn an_unknown_restart_policy_is_refused_by_name_before_anything_moves() {
    let Some(run_sh) = prerequisites() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    std::fs::write(dir.join("run.sh"), run_sh).expect("run.sh");
    let earlier = dir.join("results").join(NODE);
    std::fs::create_dir_all(&earlier).expect("results");
    let out = pod(dir, &[("SQLIOSIM_ON_RESTART", "verify")])
        .output()
        .expect("run.sh");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("SQLIOSIM_ON_RESTART=verify: must be"),
        "{said}"
    );
    assert!(earlier.is_dir(), "the earlier results were moved: {said}");
}

/// The source of the filesystem holding `dir`, as df(1) reads it from the mount table.
fn mount_source(dir: &Path) -> String {
    let out = Command::new("df")
        .args(["--output=source"])
        .arg(dir)
        .output()
        .expect("df");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().nth(1).unwrap_or_default().trim().to_string()
}

/// `SQLIOSIM_REQUIRE_MOUNT`: a --dir on another filesystem than the one named (the node's root
/// disk, when the burn-in disk was not mounted) is refused before anything moves or runs,
/// exit 2, naming the directory and the filesystem it is on; on the filesystem named, the run
/// goes on.
#[test]
fn a_dir_not_on_the_required_mount_is_refused_before_anything_runs() {
    let Some(run_sh) = prerequisites() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    std::fs::write(dir.join("run.sh"), run_sh).expect("run.sh");
    let earlier = dir.join("results").join(NODE);
    std::fs::create_dir_all(&earlier).expect("results");
    let out = pod(dir, &[("SQLIOSIM_REQUIRE_MOUNT", "/dev/burnin-disk")])
        .output()
        .expect("run.sh");
    let said = text(&out);
    let source = mount_source(dir);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!(
            "is on {source}, not on /dev/burnin-disk (SQLIOSIM_REQUIRE_MOUNT)"
        )),
        "{said}"
    );
    assert!(earlier.is_dir(), "the earlier results were moved: {said}");
    let data = dir.join("data").join(NODE);
    assert_eq!(
        std::fs::read_dir(&data).expect("data").count(),
        0,
        "something ran: {said}"
    );
    std::fs::remove_dir_all(&earlier).expect("clear");
    let out = pod(
        dir,
        &[
            ("SQLIOSIM_REQUIRE_MOUNT", source.as_str()),
            ("SQLIOSIM_DURATION", "2s"),
        ],
    )
    .output()
    .expect("run.sh");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "on {source}: {said}");
    assert!(summary(&said, NODE).is_some(), "{said}");
}

/// A DaemonSet pod (`--idle`) until it says it idles; its output so far, then ended as a pod
/// delete ends it (SIGTERM to run.sh, which stops its sleep).
fn start_until_idle(dir: &Path, env: &[(&str, &str)], log: &Path) -> String {
    let file = std::fs::File::create(log).expect("log");
    let mut child = pod_of(dir, env, true)
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("run.sh");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let said = std::fs::read_to_string(log).unwrap_or_default();
        if said.contains("idle until the pod is deleted") {
            break;
        }
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("run.sh ended ({status}) instead of idling:\n{said}");
        }
        assert!(Instant::now() < deadline, "run.sh never idled:\n{said}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // SIGTERM to run.sh: its trap passes it to the sleep it waits for.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::TERM,
    )
    .expect("kill");
    child.wait().expect("wait");
    std::fs::read_to_string(log).expect("log")
}

/// A node that reboots after its burn-in finished: the DaemonSet starts the pod again, which
/// must not burn the disk again: it prints the finished run's summary again (collect.sh reads
/// the new start's log) and idles, the results where they were. SQLIOSIM_AGAIN=1 runs another.
#[test]
fn a_pod_started_again_after_its_burn_in_finished_does_not_run_it_again() {
    let Some(run_sh) = prerequisites() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("small.cfg.ini"), CONFIG).expect("config");
    std::fs::write(dir.join("run.sh"), run_sh).expect("run.sh");
    let env = [("SQLIOSIM_DURATION", "2s")];
    let first = start_until_idle(dir, &env, &dir.join("first.log"));
    let ran = summary(&first, NODE).expect("the first start's summary");
    let results = dir.join("results");
    let entries = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .expect("results")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(entries(&results), [NODE], "{first}");
    let second = start_until_idle(dir, &env, &dir.join("second.log"));
    assert!(second.contains("had already finished (exit 0)"), "{second}");
    let again = summary(&second, NODE).expect("the summary printed again");
    assert_eq!(again["run_id"], ran["run_id"], "{second}");
    assert!(
        !second.contains("sqliosim exited with"),
        "it ran again: {second}"
    );
    assert_eq!(entries(&results), [NODE], "results moved: {second}");
    let third = start_until_idle(
        dir,
        &[("SQLIOSIM_DURATION", "2s"), ("SQLIOSIM_AGAIN", "1")],
        &dir.join("third.log"),
    );
    let new = summary(&third, NODE).expect("a new run's summary");
    assert_ne!(new["run_id"], ran["run_id"], "{third}");
    assert_eq!(
        entries(&results).len(),
        2,
        "the earlier results kept aside: {third}"
    );
}
