//! Helpers for tests that run the real binary on real files: a small configuration, running
//! and killing `sqliosim run`, its exit codes and findings. Shared by the `runs` and `kernel`
//! binaries; the page-level helpers only `runs` uses are in tests/runs/crash_support.rs.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// Writes a small configuration into `dir` (files in `dir`) and returns its path.
pub fn small_config(dir: &Path, cycles: u32, cycle_s: u32, write_through: bool) -> PathBuf {
    let text = format!(
        "[CONFIG]\nStopOnError=FALSE\nTestCycles={cycles}\nTestCycleDuration={cycle_s}\nMaxMemoryMB=4\nWriteThrough={write_through}\n\
         [RandomUser]\nUserCount=2\nMinIOChainLength=4\nMaxIOChainLength=32\nSleepAfter=1\n\
         [AuditUser]\nUserCount=1\nAuditDelay=10\n[ReadAheadUser]\nUserCount=1\nRADelay=10\n\
         [BulkUpdateUser]\nUserCount=1\nBUDelay=5\n\
         [ShrinkUser]\nMinShrinkInterval=1\nMaxShrinkInterval=2\nMinExtends=1\nMaxExtends=2\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=12\nIncrement=1\nShrinkable=TRUE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n"
    );
    let path = dir.join("crash.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

/// The sqliosim binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sqliosim"))
}

/// `sqliosim run --config config --dir dir`, ready for more arguments.
pub fn run_cmd(config: &Path, dir: &Path) -> Command {
    let mut cmd = bin();
    cmd.args(["run", "--config"])
        .arg(config)
        .arg("--dir")
        .arg(dir);
    cmd
}

/// Asserts the exit code of `out`, showing its stderr when it differs.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts that `out` exited 0, showing its stdout and stderr when not; returns its stdout.
pub fn assert_success(out: &Output) -> Cow<'_, str> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Starts `sqliosim run` with `config` in `dir`, output discarded.
pub fn start_run(config: &Path, dir: &Path, seed: u64) -> Child {
    run_cmd(config, dir)
        .args(["--seed", &seed.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sqliosim run")
}

/// Runs `sqliosim verify --dir dir`.
pub fn verify(dir: &Path) -> Output {
    bin()
        .args(["verify", "--dir"])
        .arg(dir)
        .output()
        .expect("run sqliosim verify")
}

/// Findings printed on stderr as (class, page).
pub fn findings(out: &Output) -> Vec<(String, u64)> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("ERROR #")?;
            let (_, rest) = rest.split_once(": ")?;
            let (class, rest) = rest.split_once(" on ")?;
            let page = rest
                .split(" page ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            Some((class.to_string(), page))
        })
        .collect()
}
