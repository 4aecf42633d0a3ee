//! SQL Server on Linux's durability modes (issue #24 §3), seen from outside under strace with
//! `--engine sync` (each write its own system call, on the thread that made it): forced flush
//! opens the data files without O_DSYNC and follows every data write with an `fdatasync` of
//! its file that starts after the write returned and succeeds (one shared by several writes,
//! issue #39, or with `ForcedFlushPerWrite` one each, on the writer's thread for a synchronous
//! writer, before that thread does anything else with the file), and opens
//! the log without O_DSYNC too, each group commit's log writes followed by an `fdatasync` of
//! the log before the thread that wrote them writes a data page; FUA opens them all O_DSYNC
//! and syncs only at sync points.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::crash_support::{assert_success, run_cmd};
use crate::strace_support;

/// Random users and a bulk updater (whose writes are posted through a flight) over one data
/// and one log file, for `seconds`, in durability mode `mode`.
fn config(dir: &Path, seconds: u32, mode: &str) -> PathBuf {
    let text = format!(
        "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nTestCycleDuration={seconds}\nMaxMemoryMB=8\n\
         WriteThrough=TRUE\nDurabilityMode={mode}\n\
         [RandomUser]\nUserCount=4\nMinIOChainLength=4\nMaxIOChainLength=32\nSleepAfter=0\n\
         [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
         [BulkUpdateUser]\nUserCount=1\nBuffersBUMin=4\nBuffersBUMax=16\nBUDelay=10\n\
         [ShrinkUser]\nMinShrinkInterval=100000\nMaxShrinkInterval=100000\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=16\nMaxSize=16\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n"
    );
    let path = dir.join("durability.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

/// One traced call on a file, in the order its thread made it.
#[derive(Debug)]
struct Op {
    pid: String,
    write: bool,
    log_block: bool,
}

/// What the trace says of the file whose name ends with `suffix`: the open flags of every
/// `openat` of it, and its writes and fdatasyncs in trace order (a call split by another
/// thread's is placed where it started: a thread makes one call at a time).
fn ops_on(trace: &str, suffix: &str) -> (Vec<String>, Vec<Op>) {
    let fd = format!("{suffix}>");
    let (mut opens, mut ops) = (Vec::new(), Vec::new());
    for line in trace.lines() {
        let (pid, rest) = line.split_once(' ').unwrap_or(("", line));
        let rest = rest.trim_start();
        let rest = rest.strip_suffix(" <unfinished ...>").unwrap_or(rest);
        if rest.starts_with("<...") {
            continue;
        }
        let Some((name, args)) = rest.split_once('(') else {
            continue;
        };
        let on_file = args
            .split([',', ')'])
            .next()
            .is_some_and(|a| a.ends_with(&fd));
        match name {
            "openat" if line.trim_end().ends_with(&fd) => opens.push(args.to_string()),
            "pwrite64" | "pwritev" | "pwritev2" | "fdatasync" if on_file => ops.push(Op {
                pid: pid.to_string(),
                write: name != "fdatasync",
                log_block: args.contains("\"SQLSIMLG\""),
            }),
            _ => {}
        }
    }
    (opens, ops)
}

/// Runs the configuration in `mode` under strace; the trace's text.
fn traced_run(mode: &str) -> Option<String> {
    traced_run_with(mode, &[])
}

/// The same, with more options on the command line.
fn traced_run_with(mode: &str, extra: &[&str]) -> Option<String> {
    if !strace_support::available() {
        return None;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = config(dir.path(), 3, mode);
    let mut cmd = run_cmd(&config, dir.path());
    cmd.args(["--engine", "sync", "--no-json"]).args(extra);
    let trace = dir.path().join("strace.txt");
    let (out, _) = strace_support::run(&cmd, &trace);
    let stdout = assert_success(&out);
    assert!(
        stdout.contains(&format!("Durability: {mode} (")),
        "the run header names the mode:\n{stdout}"
    );
    Some(std::fs::read_to_string(&trace).expect("read the trace"))
}

/// The writes on the file not followed, on their own thread, by an fdatasync of it before
/// that thread's next call on the file; and how many writes there were.
fn unflushed_writes(ops: &[Op]) -> (usize, usize) {
    let mut last: HashMap<&str, bool> = HashMap::new();
    let (mut writes, mut unflushed) = (0, 0);
    for op in ops {
        if last.insert(op.pid.as_str(), op.write) == Some(true) && op.write {
            unflushed += 1;
        }
        writes += usize::from(op.write);
    }
    unflushed += last.values().filter(|w| **w).count();
    (writes, unflushed)
}

/// The writes of the file whose name ends with `suffix`, and those no successful `fdatasync` of
/// it that started after the write returned follows (by any thread), in trace order: a call on
/// one line started and ended there, a split one started at its `<unfinished ...>` line and
/// ended at its `resumed` line.
fn uncovered_writes(trace: &str, suffix: &str) -> (usize, usize) {
    let fd = format!("{suffix}>");
    let on_file = |args: &str| {
        args.split([',', ')'])
            .next()
            .is_some_and(|a| a.ends_with(&fd))
    };
    let ok = |line: &str| {
        line.rsplit_once(" = ")
            .is_some_and(|(_, r)| r.trim().starts_with('0'))
    };
    // Per thread: the call it has started (a write or a flush of the file) and, for a flush,
    // the writes that had returned, uncovered, when it started.
    let mut open: HashMap<&str, (bool, usize)> = HashMap::new();
    let (mut writes, mut uncovered) = (0, 0);
    for line in trace.lines() {
        let (pid, rest) = line.split_once(' ').unwrap_or(("", line));
        let rest = rest.trim_start();
        if let Some(tail) = rest.strip_prefix("<... ") {
            match open.remove(pid) {
                Some((true, _)) => uncovered += 1,
                Some((false, held)) if !ok(tail) => uncovered += held,
                _ => {}
            }
            continue;
        }
        let Some((name, args)) = rest.split_once('(') else {
            continue;
        };
        if !on_file(args) {
            continue;
        }
        let write = matches!(name, "pwrite64" | "pwritev" | "pwritev2");
        if !write && name != "fdatasync" {
            continue;
        }
        writes += usize::from(write);
        let held = if write {
            0
        } else {
            std::mem::take(&mut uncovered)
        };
        if rest.ends_with(" <unfinished ...>") {
            open.insert(pid, (write, held));
        } else if write {
            uncovered += 1;
        } else if !ok(rest) {
            uncovered += held;
        }
    }
    // Writes still in a call, or held by a flush that never ended, are not covered.
    uncovered += open
        .values()
        .map(|&(w, held)| usize::from(w) + held)
        .sum::<usize>();
    (writes, uncovered)
}

/// Data writes, and those a thread made while a log block it had written was not yet
/// followed by an `fdatasync` of the log (by any thread: in a group commit the thread that
/// takes the written blocks syncs them), in trace order.
fn data_writes_before_log_sync(trace: &str) -> (usize, usize) {
    let mut order = merged(trace);
    let mut unsynced: HashMap<String, bool> = HashMap::new();
    let (mut writes, mut early) = (0, 0);
    for (pid, on_log, write) in order.drain(..) {
        match (on_log, write) {
            (true, true) => {
                unsynced.insert(pid, true);
            }
            (true, false) => unsynced.values_mut().for_each(|u| *u = false),
            (false, true) => {
                writes += 1;
                early += usize::from(unsynced.get(&pid) == Some(&true));
            }
            (false, false) => {}
        }
    }
    (writes, early)
}

/// The writes and fdatasyncs of the data file and the log, in trace order: (thread, on the
/// log, a write).
fn merged(trace: &str) -> Vec<(String, bool, bool)> {
    let mut out = Vec::new();
    for line in trace.lines() {
        let one = |suffix: &str| ops_on(line, suffix).1.into_iter().next();
        if let Some(op) = one("sqliosim.ldx") {
            out.push((op.pid, true, op.write));
        } else if let Some(op) = one("sqliosim.mdx") {
            out.push((op.pid, false, op.write));
        }
    }
    out
}

#[test]
fn forced_flush_opens_without_o_dsync_and_fdatasyncs_after_every_write() {
    // The data files and the log (issue #24 §3: the log used to stay O_DSYNC).
    let Some(trace) = traced_run("ForcedFlush") else {
        return;
    };
    forced_flush_holds(&trace);
    // Shared flushes: each write still followed by one started after it returned.
    every_data_write_covered(&trace);
}

/// Asserts every traced data write was followed by a successful `fdatasync` of the data file
/// started after it returned; returns (writes, fdatasyncs) of the data file.
fn every_data_write_covered(trace: &str) -> (usize, usize) {
    let (_, data) = ops_on(trace, "sqliosim.mdx");
    let syncs = data.iter().filter(|o| !o.write).count();
    let (writes, uncovered) = uncovered_writes(trace, "sqliosim.mdx");
    assert!(writes > 20, "data writes traced: {writes}");
    assert_eq!(
        uncovered, 0,
        "{uncovered} of {writes} data writes not followed by a successful fdatasync of the file started after them ({syncs} fdatasyncs)"
    );
    (writes, syncs)
}

#[test]
fn forced_flush_per_write_fdatasyncs_after_every_write() {
    let Some(trace) = traced_run_with("ForcedFlush", &["--forced-flush-per-write"]) else {
        return;
    };
    forced_flush_holds(&trace);
    let (writes, syncs) = every_data_write_covered(&trace);
    assert!(
        syncs >= writes,
        "{syncs} fdatasyncs of the data file for {writes} writes with ForcedFlushPerWrite"
    );
}

/// What forced flush does whichever way data writes share their flushes: no file opened
/// O_DSYNC, the log synced per group commit before its writer writes a data page.
fn forced_flush_holds(trace: &str) {
    let (opens, _) = ops_on(trace, "sqliosim.mdx");
    assert!(!opens.is_empty(), "no openat of the data file traced");
    assert!(
        opens
            .iter()
            .all(|o| !o.contains("O_DSYNC") && !o.contains("O_SYNC")),
        "the data file opened with O_DSYNC in forced-flush mode: {opens:?}"
    );
    assert!(opens.iter().any(|o| o.contains("O_DIRECT")), "{opens:?}");
    let (log_opens, log) = ops_on(trace, "sqliosim.ldx");
    assert!(!log_opens.is_empty(), "no openat of the log traced");
    assert!(
        log_opens
            .iter()
            .all(|o| !o.contains("O_DSYNC") && !o.contains("O_SYNC")),
        "the log opened with O_DSYNC in forced-flush mode: {log_opens:?}"
    );
    let blocks = log.iter().filter(|o| o.write && o.log_block).count();
    assert!(blocks > 5, "log block writes traced: {blocks}");
    let syncs = log.iter().filter(|o| !o.write).count();
    assert!(syncs > 5, "fdatasyncs of the log traced: {syncs}");
    let (data_writes, early) = data_writes_before_log_sync(trace);
    assert!(data_writes > 20, "data writes traced: {data_writes}");
    assert_eq!(
        early, 0,
        "{early} of {data_writes} data writes made by a thread whose log write no fdatasync of the log had followed yet"
    );
}

#[test]
fn fua_opens_with_o_dsync_and_syncs_only_at_sync_points() {
    let Some(trace) = traced_run("FUA") else {
        return;
    };
    for suffix in ["sqliosim.mdx", "sqliosim.ldx"] {
        let (opens, _) = ops_on(&trace, suffix);
        assert!(
            opens.iter().any(|o| o.contains("O_DSYNC")),
            "{suffix} never opened with O_DSYNC in FUA mode: {opens:?}"
        );
    }
    // The log's O_DSYNC writes are their own sync: none is followed by an fdatasync of it
    // but at sync points.
    let (_, log) = ops_on(&trace, "sqliosim.ldx");
    let (log_writes, log_unflushed) = unflushed_writes(&log);
    assert!(
        log_unflushed * 2 > log_writes,
        "only {log_unflushed} of {log_writes} log writes without an fdatasync after them in FUA mode"
    );
    let (_, data) = ops_on(&trace, "sqliosim.mdx");
    let (writes, unflushed) = unflushed_writes(&data);
    assert!(writes > 20, "data writes traced: {writes}");
    assert!(
        unflushed * 2 > writes,
        "only {unflushed} of {writes} data writes without an fdatasync after them: FUA mode should not sync each"
    );
}
