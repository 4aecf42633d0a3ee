//! The host's tools that the evidence asks at the start and the end of a run (`lsblk`,
//! `smartctl`, `nvme`, `journalctl`) are bounded in time: a tool that hangs, as `smartctl` does
//! on a drive that is failing, is killed after `SQLIOSIM_TOOL_TIMEOUT` seconds and named in
//! the evidence, and the run ends with its summary. Here a `lsblk` that never answers is put
//! first on the PATH; before the bound the run waited for it for ever.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use crate::crash_support::{assert_exit, bin};

/// A tool named `name` in `dir` that never answers.
fn hanging_tool(dir: &std::path::Path, name: &str) {
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\nexec sleep 600\n").expect("write tool");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn a_host_tool_that_never_answers_is_killed_named_and_the_run_ends_with_its_summary() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let tools = tmp.path().join("bin");
    std::fs::create_dir(&tools).expect("bin");
    for t in ["lsblk", "smartctl", "nvme", "journalctl"] {
        hanging_tool(&tools, t);
    }
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).expect("dir");
    let json = tmp.path().join("run.json");
    let bundle = tmp.path().join("bundle.tar.gz");
    let mut child = bin()
        .args(["run", "--config"])
        .arg(crate::kernel_log::config(tmp.path()))
        .arg("--dir")
        .arg(&dir)
        .arg("--json")
        .arg(&json)
        .arg("--bundle")
        .arg(&bundle)
        .args(["--seed", "11"])
        .env("PATH", path)
        .env("SQLIOSIM_TOOL_TIMEOUT", "2")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start run");
    // A 3 s run with two 2 s bounds ends in well under this; waiting for the hung tool
    // (600 s) does not.
    let t0 = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if t0.elapsed() > Duration::from_secs(150) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not end: it waits for a host tool that never answers");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    assert_exit(&out, 0);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse json");
    assert_eq!(doc["outcome"], "clean", "{doc:#}");
    let why = doc["host_facts"]["lsblk_absent"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        why, "lsblk did not answer in 2 s and was killed (a device that hangs its queries?)",
        "{:#}",
        doc["host_facts"]
    );
    assert!(bundle.exists(), "no bundle");
}
