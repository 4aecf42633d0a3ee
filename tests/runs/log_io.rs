//! The log as SQL Server writes it (issue #24 §1), seen from outside: under strace, no log
//! write is larger than a 60 KB log block, and the blocks in the .ldx file pack several
//! records; the log file's summary line counts its reads and a running average that moves.

use std::path::{Path, PathBuf};

use crate::crash_support::{assert_success, run_cmd};
use crate::strace_support;

/// SQL Server's largest log write: one 60 KB log block.
const MAX_LOG_WRITE: u64 = 61_440;

/// A configuration of 8 random users over one data file and one log file.
fn eight_users(dir: &Path, seconds: u32) -> PathBuf {
    let text = format!(
        "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nTestCycleDuration={seconds}\nMaxMemoryMB=8\n\
         [RandomUser]\nUserCount=8\nMinIOChainLength=4\nMaxIOChainLength=64\nSleepAfter=0\n\
         MinLogPerBuffer=64\nMaxLogPerBuffer=8192\n\
         [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=16\nMaxSize=16\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n"
    );
    let path = dir.join("log.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

/// Every valid log block header in the .ldx file: (length, records).
fn blocks_in(ldx: &Path) -> Vec<(u32, u32)> {
    let bytes = std::fs::read(ldx).expect("read the log file");
    let start = sqliosim::engine::logblock::LOG_AREA_START as usize;
    bytes
        .get(start..)
        .unwrap_or_default()
        .chunks(512)
        .filter_map(|c| sqliosim::engine::logblock::peek(c).ok())
        .map(|b| (b.len, b.records))
        .collect()
}

#[test]
fn log_writes_are_60_kb_blocks_that_pack_records() {
    if !strace_support::available() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = eight_users(dir.path(), 3);
    let mut cmd = run_cmd(&config, dir.path());
    cmd.args(["--engine", "sync", "--no-json"]);
    let (out, calls) = strace_support::run(&cmd, &dir.path().join("strace.txt"));
    assert_success(&out);
    // The log's blocks, told by their magic from the zero fill that creates the file.
    let log_writes: Vec<u64> = calls
        .iter()
        .filter(|c| c.is_write() && c.path.as_deref().is_some_and(|p| p.ends_with(".ldx")))
        .filter(|c| c.data.as_deref() == Some("SQLSIMLG"))
        .filter_map(|c| c.len)
        .collect();
    assert!(log_writes.len() > 10, "log writes traced: {log_writes:?}");
    let largest = log_writes.iter().copied().max().unwrap_or_default();
    assert!(
        largest <= MAX_LOG_WRITE,
        "a log write of {largest} bytes (at most {MAX_LOG_WRITE})"
    );
    let blocks = blocks_in(&dir.path().join("sqliosim.ldx"));
    let packed = blocks.iter().filter(|(_, records)| *records > 1).count();
    assert!(
        packed * 10 >= blocks.len(),
        "{packed} of {} log blocks pack several records",
        blocks.len()
    );
    assert!(blocks.iter().all(|(len, _)| u64::from(*len) <= MAX_LOG_WRITE));
}
