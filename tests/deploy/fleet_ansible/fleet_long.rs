//! The playbook over a run that outlives its controller, as a 48-hour burn-in does: a
//! controller that drops mid-run, then reruns the play, must attach to the host's run (not
//! move its results aside nor start a second one), print the host's status line instead of
//! "FAILED - RETRYING" lines, and fetch that same run; the time limit is derived from the
//! duration, and a shorter one is refused at pre-flight, as a directory on another device is,
//! with the host left as it was. `--tags report` only reports. A run that ended while no play
//! was there is collected by the rerun, not run again, unless the rerun says to start afresh.

use super::{prerequisites_met, python_interpreter, spawn_playbook, wait_bounded, CONFIG};
use crate::fleet_support::{Fleet, Host};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// Seconds of the run: long enough that the rerun finds it still going after the first play
/// is killed, on a loaded 2-core machine where each task takes seconds.
const DURATION: u64 = 60;

fn inventory(fleet: &Fleet, remote: &Path) -> String {
    format!(
        "[sqliosim]\nnode1 ansible_host={addr}\n[sqliosim:vars]\nansible_user=root\n\
         ansible_ssh_private_key_file={key}\n\
         ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n\
         ansible_python_interpreter={python}\nsqliosim_remote_dir={remote}\n\
         sqliosim_data_dirs=['{remote}/data']\nsqliosim_allow_root_fs=true\nsqliosim_duration={DURATION}s\nsqliosim_poll=2\n",
        addr = fleet.hosts[0].addr,
        key = fleet.key.display(),
        remote = remote.display(),
        python = python_interpreter(),
    )
}

fn said(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The host's own results directory, and the ones moved aside beside it.
fn results(host: &Host) -> (PathBuf, Vec<String>) {
    let remote = host.dir.join("root/sqliosim");
    let aside = std::fs::read_dir(&remote)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("results."))
                .collect()
        })
        .unwrap_or_default();
    (remote.join("results"), aside)
}

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    fleet: Fleet,
    inv: PathBuf,
    config: PathBuf,
    out: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let dir = tmp.path().to_path_buf();
        let fleet = Fleet::start(&dir, 1);
        let remote = fleet.shared_path.join("sqliosim");
        let inv = dir.join("inventory.ini");
        std::fs::write(&inv, inventory(&fleet, &remote)).expect("inventory");
        let config = dir.join("small.cfg.ini");
        std::fs::write(&config, CONFIG).expect("config");
        let out = dir.join("out");
        Setup {
            _tmp: tmp,
            dir,
            fleet,
            inv,
            config,
            out,
        }
    }

    fn play(&self, extra: &[&str]) -> Output {
        let child = spawn_playbook(&self.dir, &self.inv, &self.out, &self.config, extra);
        wait_bounded(child, Duration::from_secs(600))
    }

    /// A rerun of the play that must succeed; what it printed.
    fn rerun(&self, extra: &[&str]) -> String {
        let played = self.play(extra);
        let log = said(&played);
        assert!(played.status.success(), "the rerun failed:\n{log}");
        log
    }
}

/// Play 1, killed (a dropped controller) once the host's run is under way; its run id.
fn start_and_drop(s: &Setup) -> u64 {
    start_and_drop_with(s, &[])
}

/// [`start_and_drop`] with `extra` arguments to the play.
fn start_and_drop_with(s: &Setup, extra: &[&str]) -> u64 {
    let mut child = spawn_playbook(&s.dir, &s.inv, &s.out, &s.config, extra);
    let (res, _) = results(&s.fleet.hosts[0]);
    let json_path = res.join("sqliosim.log.json");
    let start = Instant::now();
    let run_id = loop {
        let running = json(&json_path).filter(|j| j["outcome"] == "running");
        if let Some(id) = running.and_then(|j| j["run_id"].as_u64()) {
            break id;
        }
        if let Some(status) = child.try_wait().expect("wait") {
            panic!("the first play ended ({status}) before its run was seen running");
        }
        assert!(start.elapsed() < Duration::from_secs(300), "no running run");
        std::thread::sleep(Duration::from_millis(200));
    };
    child.kill().expect("kill ansible-playbook");
    let _ = child.wait();
    run_id
}

#[test]
fn a_rerun_after_a_dropped_controller_attaches_to_the_run_and_shows_its_status() {
    if !prerequisites_met() {
        return;
    }
    let s = Setup::new();
    let host = &s.fleet.hosts[0];
    let run_id = start_and_drop(&s);

    let log = s.rerun(&[]);
    assert!(log.contains("attached to it"), "no attach:\n{log}");
    assert!(!log.contains("FAILED - RETRYING"), "{log}");
    assert!(
        log.contains("sqliosim status: phase="),
        "no status line:\n{log}"
    );
    let (res, aside) = results(host);
    assert!(
        aside.is_empty(),
        "the running run's results were moved aside: {aside:?}"
    );
    // The one run, fetched: the same run id, ended clean, under the derived time limit
    // (planned + planned / 10 + the 1800 s margin).
    let node = s.out.join("hosts/node1");
    let fetched = json(&node.join("sqliosim.log.json")).expect("fetched summary");
    assert_eq!(fetched["run_id"].as_u64(), Some(run_id), "{fetched}");
    assert_eq!(fetched["complete"], true, "{fetched}");
    let run = std::fs::read_to_string(node.join("run.txt")).expect("run.txt");
    assert!(run.starts_with("exit code: 0\n"), "{run}");
    let limit = format!(" {} ", DURATION + DURATION / 10 + 1800);
    assert!(
        run.contains(&limit),
        "timeout not derived from the duration: {run}"
    );
    let rc = std::fs::read_to_string(s.out.join("fleet-report.rc")).expect("rc");
    assert_eq!(rc.trim(), "0", "{log}");

    // Report only: the fleet report over what the controller holds, no host contacted.
    std::fs::remove_file(s.out.join("fleet-report.rc")).expect("rm rc");
    let report = s.play(&["--tags", "report"]);
    let log = said(&report);
    assert!(report.status.success(), "{log}");
    assert!(!log.contains("Pre-flight"), "{log}");
    let rc = std::fs::read_to_string(s.out.join("fleet-report.rc")).expect("rc");
    assert_eq!(rc.trim(), "0", "{log}");

    // A limit shorter than the run is refused before the host is touched.
    let short = s.play(&["-e", "sqliosim_timeout=5s"]);
    let log = said(&short);
    assert!(!short.status.success(), "{log}");
    assert!(log.contains("is shorter than the run it limits"), "{log}");
    // That play moved the controller's earlier results aside before its pre-flight: hosts/ to
    // hosts.ID and the fleet report with it to fleet.ID, none of it overwritten or lost.
    let kept: Vec<PathBuf> = std::fs::read_dir(&s.out)
        .expect("output dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("fleet."))
                && p.is_dir()
        })
        .collect();
    assert_eq!(
        kept.len(),
        1,
        "the earlier fleet report kept once: {kept:?}\n{log}"
    );
    let rc = std::fs::read_to_string(kept[0].join("fleet-report.rc")).expect("kept rc");
    assert_eq!(rc.trim(), "0", "the earlier run's verdict kept");
    for f in [
        "fleet.html",
        "fleet.json",
        "fleet-junit.xml",
        "fleet-report.txt",
    ] {
        assert!(
            kept[0].join(f).is_file(),
            "{f} not kept in {}",
            kept[0].display()
        );
    }
    let suffix = kept[0].file_name().expect("name").to_string_lossy()["fleet.".len()..].to_string();
    assert!(
        s.out.join(format!("hosts.{suffix}/node1")).is_dir(),
        "the fleet report is not kept beside its hosts ({suffix})"
    );
    // So is a data directory on another device than the one named.
    let other = s.play(&["-e", r#"{"sqliosim_data_devices": ["/dev/null"]}"#]);
    let log = said(&other);
    assert!(!other.status.success(), "{log}");
    assert!(log.contains("not on /dev/null"), "{log}");
    // The defaults refuse a data directory on the root filesystem (no device named).
    let on_root = {
        use std::os::unix::fs::MetadataExt;
        let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
        dev(&s.dir) == dev(Path::new("/"))
    };
    if on_root {
        let root = s.play(&["-e", "sqliosim_allow_root_fs=false"]);
        let log = said(&root);
        assert!(!root.status.success(), "{log}");
        assert!(log.contains("is on the root filesystem"), "{log}");
    } else {
        eprintln!("the hosts' data directory is not on the root filesystem: its refusal not tried");
    }
    let (res_now, aside) = results(host);
    assert!(
        aside.is_empty(),
        "a refused play moved results aside: {aside:?}"
    );
    let kept = json(&res_now.join("sqliosim.log.json")).expect("host summary");
    assert_eq!(kept["run_id"].as_u64(), Some(run_id), "{kept}");
    assert_eq!(res, res_now);
}

/// Waits until the host's run (its wrapper) wrote its exit code: the run ended.
fn wait_ended(host: &Host) {
    let (res, _) = results(host);
    let start = Instant::now();
    while !res.join("exit-code").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "the host's run never ended"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_rerun_after_the_run_ended_unfetched_collects_it_unless_told_to_start_afresh() {
    if !prerequisites_met() {
        return;
    }
    let s = Setup::new();
    let host = &s.fleet.hosts[0];
    let fetched_id = || {
        json(&s.out.join("hosts/node1/sqliosim.log.json"))
            .and_then(|j| j["run_id"].as_u64())
            .expect("fetched summary")
    };
    // Told to start afresh: the ended run's results are moved aside, a new run fetched.
    let first = start_and_drop_with(&s, &["-e", "sqliosim_duration=10s"]);
    wait_ended(host);
    let log = s.rerun(&[
        "-e",
        "sqliosim_start_afresh=true",
        "-e",
        "sqliosim_duration=5s",
    ]);
    assert!(!log.contains("collecting it"), "{log}");
    let (_, aside) = results(host);
    // Named by the run id in hex, as sqliosim names a run.
    assert_eq!(aside, vec![format!("results.{first:016x}")], "{log}");
    assert_ne!(fetched_id(), first, "{log}");

    // By default: the run that ended while the controller was away is the one fetched, and
    // nothing is moved aside or started.
    let second = start_and_drop_with(&s, &["-e", "sqliosim_duration=10s"]);
    wait_ended(host);
    let log = s.rerun(&[]);
    assert!(
        log.contains(&format!(
            "sqliosim's run {second:016x}, exit code 0 on this host ended"
        )) && log.contains("collecting it"),
        "the ended run not named:\n{log}"
    );
    assert_eq!(fetched_id(), second, "{log}");
    let (res, mut aside) = results(host);
    aside.sort();
    assert_eq!(aside.len(), 2, "{aside:?}\n{log}");
    let kept = json(&res.join("sqliosim.log.json")).expect("host summary");
    assert_eq!(
        kept["run_id"].as_u64(),
        Some(second),
        "nothing else ran: {kept}"
    );
    let node = s.out.join("hosts/node1");
    let run = std::fs::read_to_string(node.join("run.txt")).expect("run.txt");
    assert!(run.starts_with("exit code: 0\n"), "{run}");
    assert!(
        res.join("collected.txt").is_file(),
        "the fetch not noted on the host"
    );
}
