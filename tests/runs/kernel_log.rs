//! The kernel's view in a run's evidence (issue #23 §4): a kernel line written to /dev/kmsg
//! while a run goes on reaches its JSON summary and its bundle's `kernel-log.txt`; the bundle
//! also holds the host facts and says the drives' health is absent and why (here: no
//! smartctl, and disks without SMART). Writing to /dev/kmsg needs root: skipped without it,
//! or when /dev/kmsg cannot be read.

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::crash_support::{assert_exit, bin};

pub fn config(dir: &std::path::Path) -> std::path::PathBuf {
    let text = "[CONFIG]\nTestCycles=1\nTestCycleDuration=3\nMaxMemoryMB=4\nWriteThrough=TRUE\n\
         [RandomUser]\nUserCount=1\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";
    let path = dir.join("kmsg.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

/// /dev/kmsg opened to write, or `None` after saying why the test is skipped (it cannot be
/// read, or written without root).
pub fn kmsg_or_skip() -> Option<std::fs::File> {
    if std::fs::File::open("/dev/kmsg").is_err() {
        eprintln!("skipped: /dev/kmsg cannot be read here");
        return None;
    }
    let kmsg = std::fs::OpenOptions::new().write(true).open("/dev/kmsg");
    if kmsg.is_err() {
        eprintln!("skipped: /dev/kmsg cannot be written here (needs root)");
    }
    kmsg.ok()
}

/// Once the run writing `json` has begun (the summary exists once the evidence has started
/// its window), writes a kernel line naming `what` and this test process; returns the line.
pub fn mark_once_started(kmsg: &mut std::fs::File, json: &std::path::Path, what: &str) -> String {
    let t0 = Instant::now();
    while !json.exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let marker = format!(
        "sqliosim-test loop7: I/O error ({what} {})",
        std::process::id()
    );
    writeln!(kmsg, "{marker}").expect("write /dev/kmsg");
    marker
}

#[test]
fn a_kernel_line_of_the_run_reaches_the_summary_and_the_bundle() {
    let Some(mut kmsg) = kmsg_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).expect("dir");
    let json = tmp.path().join("run.json");
    let bundle = tmp.path().join("bundle.tar.gz");
    let child = bin()
        .args(["run", "--config"])
        .arg(config(tmp.path()))
        .arg("--dir")
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .arg("--bundle")
        .arg(&bundle)
        .args(["--seed", "7"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start run");
    let marker = mark_once_started(&mut kmsg, &json, "marker");
    let out = child.wait_with_output().expect("wait run");
    assert_exit(&out, 0);

    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse json");
    let log = &doc["kernel_log"];
    assert_eq!(log["source"], "/dev/kmsg", "{log:#}");
    let found = log["lines"]
        .as_array()
        .is_some_and(|v| v.iter().any(|l| l["text"] == marker.as_str()));
    assert!(
        found,
        "the marker is not in the summary's kernel log: {log:#}"
    );
    assert!(
        doc["host_facts"]["kernel_command_line"].is_string(),
        "{doc:#}"
    );

    let x = tmp.path().join("x");
    std::fs::create_dir(&x).expect("x");
    let tar = Command::new("tar")
        .arg("xzf")
        .arg(&bundle)
        .arg("-C")
        .arg(&x)
        .status()
        .expect("tar");
    assert!(tar.success());
    let top = std::fs::read_dir(&x)
        .expect("read x")
        .next()
        .expect("top")
        .expect("entry")
        .path();
    let text = std::fs::read_to_string(top.join("kernel-log.txt")).expect("kernel-log.txt");
    assert!(text.contains(&marker), "{text}");
    assert!(top.join("host-facts.json").is_file());
    let absent = std::fs::read_to_string(top.join("health/summary.txt")).expect("summary.txt");
    assert!(absent.contains("absent: "), "{absent}");
}
