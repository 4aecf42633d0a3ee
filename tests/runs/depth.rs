//! Queue depth through the binary (issue #15): the checkpoint, lazy writer, read-ahead, bulk
//! update and initial update post their I/O without waiting for each request, so the device's
//! queue is as deep as MaxOutstandingIO allows even with few threads; the throttle lowers that
//! depth when latency rises; and every fault class is still caught at depth.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A run with one random user and no batch users: before the actors posted asynchronously,
/// nothing in this configuration could have more than a handful of requests in flight.
fn few_threads_config(dir: &Path, max_outstanding: u32, extra: &str) -> PathBuf {
    let cfg = dir.join("depth.cfg.ini");
    let text = format!(
        "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nMaxMemoryMB=64\nNoBuffering=TRUE\n\
         WriteThrough=TRUE\nUseScatterGather=FALSE\nMaxOutstandingIO={max_outstanding}\n\
         TargetIODuration=100\nAllowIOBursts=TRUE\n{extra}\n\
         [RandomUser]\nUserCount=1\nRandomUserReadWriteRatio=10000\nMinIOChainLength=1\n\
         MaxIOChainLength=64\nJumpToNewRegionPercentage=10000\nSleepAfter=0\n\
         [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=32\nMaxSize=32\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n"
    );
    std::fs::write(&cfg, text).expect("write config");
    cfg
}

/// Runs the binary; returns the exit code, stderr, the JSON summary and the XML log.
fn run(dir: &Path, cfg: &Path, args: &[&str]) -> (Option<i32>, String, serde_json::Value, String) {
    let json = dir.join("s.json");
    let log = dir.join("log.xml");
    let out = Command::cargo_bin("sqliosim")
        .expect("binary")
        .arg("run")
        .arg("--config")
        .arg(cfg)
        .arg("--dir")
        .arg(dir)
        .arg("--json")
        .arg(&json)
        .arg("--log")
        .arg(&log)
        .args(args)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let summary = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).expect("valid JSON"))
        .unwrap_or(serde_json::Value::Null);
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    (out.status.code(), stderr, summary, log)
}

/// The most requests a checkpoint of the run had in flight, from its log messages
/// ("… at most N requests in flight").
fn checkpoint_depth(log: &str) -> u64 {
    log.lines()
        .filter(|l| l.contains("Checkpoint wrote"))
        .filter_map(|l| {
            let at = l.find("at most ")? + "at most ".len();
            l[at..].split_whitespace().next()?.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0)
}

fn data_file(summary: &serde_json::Value) -> &serde_json::Value {
    summary["stats"]["files"]
        .as_array()
        .and_then(|f| {
            f.iter()
                .find(|f| f["path"].as_str().is_some_and(|p| p.ends_with(".mdx")))
        })
        .unwrap_or_else(|| panic!("no data file in the summary: {summary}"))
}

#[test]
fn the_checkpoint_keeps_at_least_64_writes_in_flight_on_a_real_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = few_threads_config(dir.path(), 1024, "");
    let (code, stderr, summary, log) = run(dir.path(), &cfg, &["--duration", "3", "--seed", "5"]);
    assert_eq!(code, Some(0), "a clean run: {stderr}");
    let depth = checkpoint_depth(&log);
    assert!(
        depth >= 64,
        "a checkpoint had at most {depth} writes in flight, want at least 64:\n{log}"
    );
    let blocks = data_file(&summary)["io_request_blocks"]
        .as_u64()
        .unwrap_or(0);
    assert!(blocks >= 64, "io_request_blocks {blocks}");
}

#[test]
fn max_outstanding_io_bounds_the_depth_of_the_asynchronous_actors() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = few_threads_config(dir.path(), 16, "");
    let (code, stderr, summary, log) = run(dir.path(), &cfg, &["--duration", "2", "--seed", "5"]);
    assert_eq!(code, Some(0), "a clean run: {stderr}");
    let depth = checkpoint_depth(&log);
    assert!(
        depth > 1,
        "the checkpoint posted several writes at once: {depth}"
    );
    assert!(depth <= 16, "MaxOutstandingIO=16 but {depth} in flight");
    let blocks = data_file(&summary)["io_request_blocks"]
        .as_u64()
        .unwrap_or(0);
    // The I/O service never holds more than 16; the per-file count also sees the random user's
    // own request, which the throttle's check-then-add may admit beside a full flight.
    assert!(
        blocks <= 16 + 1,
        "io_request_blocks {blocks} over MaxOutstandingIO=16 and one synchronous user"
    );
}

/// The configuration of tests/runs/fault_injection.rs (a 8 MB data file in memory) at depth 1,024.
fn fault_config(dir: &Path) -> PathBuf {
    let cfg = dir.join("fi.cfg.ini");
    let text = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nMaxOutstandingIO=1024\n\
        [AuditUser]\nUserCount=2\n[RandomUser]\nUserCount=2\nRandomUserReadWriteRatio=0\n\
        [ReadAheadUser]\nUserCount=2\n[BulkUpdateUser]\nUserCount=0\n\
        [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
        [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";
    std::fs::write(&cfg, text).expect("write config");
    cfg
}

#[test]
fn every_fault_class_is_caught_at_depth_1024_and_a_clean_run_stays_clean() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = fault_config(dir.path());
    // The misdirected write lands inside its own request: see tests/runs/fault_injection.rs.
    let spec = "lost@10,torn4k@80,torn512@270,misdirect@150>140,flip@220,zero@290,eio-read@360,\
                eio-write@430,short@500,stale@600";
    let (code, stderr, summary, _) = run(
        dir.path(),
        &cfg,
        &["--duration", "1", "--seed", "3", "--fault-injection", spec],
    );
    assert_eq!(code, Some(1), "{stderr}");
    for class in [
        "lost_write",
        "torn_write",
        "misdirected_write",
        "bit_rot",
        "zeroed_sectors",
        "stale_read",
        "read_error",
        "write_error",
        "short_read",
    ] {
        assert!(
            stderr.contains(&format!(": {class} on ")),
            "{class} missing:\n{stderr}"
        );
    }
    assert!(!stderr.contains("never fired"), "{stderr}");
    let blocks = data_file(&summary)["io_request_blocks"]
        .as_u64()
        .unwrap_or(0);
    assert!(blocks > 4, "requests were in flight at once: {blocks}");

    let clean = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = fault_config(clean.path());
    let (code, stderr, _, _) = run(
        clean.path(),
        &cfg,
        &[
            "--duration",
            "2",
            "--seed",
            "3",
            "--fault-injection",
            "random=0:lost",
        ],
    );
    assert_eq!(
        code,
        Some(0),
        "no fault, no finding at depth 1,024: {stderr}"
    );
}
