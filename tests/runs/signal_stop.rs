//! A run that a signal cuts short says so, the way a user meets it: Ctrl-C (SIGINT) or a
//! service manager's SIGTERM a few seconds into the main phase of a 30 s run. The verdict says
//! "so far" and when it stopped, the exit code follows the shell convention (130, 143), and the
//! JSON summary and the XML log record the stop.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::crash_support::{run_cmd, small_config};

/// Waits until the run's XML log says the initial checkpoint is done (the main phase began).
fn wait_for_main_phase(child: &mut Child, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains("Phase 'initial checkpoint' done") {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended before its main phase: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "no main phase in the log:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

struct Stopped {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: serde_json::Value,
    log: String,
    /// `sqliosim report` of the JSON summary and of the XML log: (exit code, stdout).
    reports: Vec<(Option<i32>, String)>,
}

/// Starts a 30 s run on a temporary directory, sends `sig` two seconds into its main phase,
/// and collects what it left.
fn run_and_signal(sig: rustix::process::Signal) -> Stopped {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 30, false);
    let json = dir.path().join("run.json");
    let log = dir.path().join("sqliosim.log.xml");
    let mut child = run_cmd(&config, dir.path())
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sqliosim run");
    wait_for_main_phase(&mut child, &log);
    std::thread::sleep(Duration::from_secs(2));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, sig).expect("send the signal");
    let out = child.wait_with_output().expect("wait");
    let text = std::fs::read_to_string(&json).expect("the JSON summary");
    let reports = [&json, &log]
        .iter()
        .map(|input| {
            let r = crate::crash_support::bin()
                .arg("report")
                .arg(input)
                .output()
                .expect("sqliosim report");
            (
                r.status.code(),
                String::from_utf8_lossy(&r.stdout).into_owned(),
            )
        })
        .collect();
    Stopped {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json: serde_json::from_str(&text).expect("valid JSON"),
        log: std::fs::read_to_string(&log).expect("the XML log"),
        reports,
    }
}

fn assert_stopped_by(s: &Stopped, name: &str, code: i32) {
    assert_eq!(s.code, Some(code), "{}\n{}", s.stdout, s.stderr);
    let verdict = format!("CLEAN so far — stopped by {name} after ");
    assert!(s.stdout.contains(&verdict), "{}", s.stdout);
    assert!(s.stdout.contains(" of 30 s"), "{}", s.stdout);
    assert!(!s.stdout.contains("Verdict: CLEAN -"), "{}", s.stdout);
    let j = &s.json;
    assert_eq!(j["schema"], "sqliosim-summary/2");
    assert_eq!(j["complete"], false, "{j:#}");
    assert_eq!(j["outcome"], "interrupted");
    assert_eq!(j["stop"]["reason"], "signal");
    assert_eq!(j["stop"]["signal"], name);
    assert_eq!(j["stop"]["planned_s"].as_f64(), Some(30.0));
    let after = j["stop"]["after_s"].as_f64().expect("after_s");
    assert!(after > 0.0 && after < 30.0, "stopped early: {after}");
    let started = j["started_us"].as_u64().expect("started_us");
    let ended = j["ended_us"].as_u64().expect("ended_us");
    assert!(ended > started, "{ended} after {started}");
    // The XML log says it too, as a SQLIOSim-style warning entry.
    let doc = roxmltree::Document::parse(&s.log).expect("well-formed log");
    let stop_entry = doc
        .descendants()
        .filter(|n| n.has_tag_name("ENTRY"))
        .find(|n| n.attribute("Func") == Some("Stop::Signal"))
        .expect("a Stop::Signal entry in the log");
    assert_eq!(stop_entry.attribute("TYPE"), Some("WARNING"));
    let text: String = stop_entry
        .descendants()
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains(name), "{text}");
    // `sqliosim report` reads the stop back from either file: nothing found, but not a pass
    // (UNFINISHED, exit 2).
    for (code, out) in &s.reports {
        assert_eq!(*code, Some(2), "{out}");
        let said = format!(
            "Verdict: UNFINISHED: no integrity errors found before it ended (stopped by {name} after "
        );
        assert!(out.contains(&said), "{out}");
        assert!(!out.contains("PASSED") && !out.contains("CLEAN"), "{out}");
    }
}

#[test]
fn sigint_in_the_main_phase_says_clean_so_far_and_exits_130() {
    let s = run_and_signal(rustix::process::Signal::INT);
    assert_stopped_by(&s, "SIGINT", 130);
}

#[test]
fn sigterm_in_the_main_phase_says_clean_so_far_and_exits_143() {
    let s = run_and_signal(rustix::process::Signal::TERM);
    assert_stopped_by(&s, "SIGTERM", 143);
}

/// A SIGTERM that comes as the run starts (a pod deleted as it starts: met by the rootfs
/// test under load), at any moment from the JSON summary's first "running" heartbeat on,
/// ends the run with its summary: the JSON never stays "running" once the process is gone.
#[test]
fn a_sigterm_as_the_run_starts_never_leaves_the_json_running() {
    for attempt in 0..12u64 {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let config = small_config(dir.path(), 1, 30, false);
        let json = dir.path().join("run.json");
        let mut child = run_cmd(&config, dir.path())
            .arg("--json")
            .arg(&json)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sqliosim run");
        // As soon as the JSON exists, then a little later each attempt: the header, the
        // engine probe and the files' creation all come after the first heartbeat.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !json.exists() && Instant::now() < deadline {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(attempt * 15));
        let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let status = child.wait().expect("wait");
        let text = std::fs::read_to_string(&json).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_ne!(
            v["outcome"], "running",
            "attempt {attempt}: exit {status}, the JSON says running:\n{text}"
        );
    }
}
