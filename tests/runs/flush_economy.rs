//! Forced flush with SQL Server's economy (issue #39), seen from outside under strace: with
//! sixteen random users dirtying pages, the checkpoint and the lazy writer writing them (and a
//! bulk updater), one `fdatasync` of the data file covers several writes — far fewer flushes
//! than writes — while `--forced-flush-per-write` gives each write its own, as before. Run on a
//! real file with the io_uring engine (the default) and with psync. Only counts are asserted,
//! never durations; the bound of the economy holds with room on a loaded 2-core machine
//! (measured 0.27–0.36 flushes per write idle, 0.19–0.27 beside `scripts/under-load.sh --spinners 6`;
//! docs/performance.md, "Forced flush").

use std::path::{Path, PathBuf};

use crate::crash_support::{assert_success, run_cmd};
use crate::strace_support;

const DATA: &str = "sqliosim.mdx";

/// Random users writing most of what they touch, a bulk updater, the checkpoint and the lazy
/// writer over one data and one log file, in forced flush.
fn config(dir: &Path) -> PathBuf {
    let text = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nTestCycleDuration=4\nMaxMemoryMB=8\n\
         WriteThrough=TRUE\nDurabilityMode=ForcedFlush\n\
         [RandomUser]\nUserCount=16\nMinIOChainLength=4\nMaxIOChainLength=32\n\
         RandomUserReadWriteRatio=1000\nSleepAfter=0\n\
         [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
         [BulkUpdateUser]\nUserCount=1\nBuffersBUMin=32\nBuffersBUMax=128\nBUDelay=50\n\
         [ShrinkUser]\nMinShrinkInterval=100000\nMaxShrinkInterval=100000\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=32\nMaxSize=32\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";
    let path = dir.join("economy.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

/// Runs the configuration under strace with `engine` (and `extra` options); returns the
/// data file's writes (the JSON summary's count: io_uring writes are no system call of their
/// own) and its `fdatasync`s (the trace's, by the path strace `-y` gives the descriptor).
fn traced(engine: &str, extra: &[&str]) -> Option<(u64, u64)> {
    if !strace_support::available() {
        return None;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = config(dir.path());
    let mut cmd = run_cmd(&config, dir.path());
    cmd.args(["--engine", engine]).args(extra);
    let trace = dir.path().join("strace.txt");
    let (out, calls) = strace_support::run_tracing(&cmd, &trace, "trace=fdatasync,openat");
    let stdout = assert_success(&out);
    let per_write = !extra.is_empty();
    let says = if per_write {
        "an fdatasync of its own (ForcedFlushPerWrite)"
    } else {
        "one shared by the writes completed before it"
    };
    assert!(
        stdout.contains("Durability: ForcedFlush (") && stdout.contains(says),
        "the run header says how data writes are flushed:\n{stdout}"
    );
    let syncs = calls
        .iter()
        .filter(|c| c.syscall == "fdatasync" && c.result == Some(0))
        .filter(|c| c.path.as_deref().is_some_and(|p| p.ends_with(DATA)))
        .count() as u64;
    Some((data_writes(dir.path()), syncs))
}

/// The data file's write requests, single-page and gathered, from the run's JSON summary.
fn data_writes(dir: &Path) -> u64 {
    let text = std::fs::read_to_string(dir.join("sqliosim.log.json")).expect("JSON summary");
    let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let file = json["stats"]["files"]
        .as_array()
        .and_then(|files| {
            files
                .iter()
                .find(|f| f["path"].as_str().is_some_and(|p| p.ends_with(DATA)))
        })
        .unwrap_or_else(|| panic!("no statistics of {DATA}: {}", json["stats"]["files"]));
    let count = |k: &str| file["io"][k].as_u64().unwrap_or(0);
    count("writes") + count("gather_writes")
}

/// The floor of writes that makes a ratio mean something. Not higher: four seconds of psync
/// with an `fdatasync` per write beside a disk writer and six spinners made 263–360 writes,
/// where an idle machine makes well over 500 (an earlier floor of 500 failed there and in CI).
fn enough(engine: &str, writes: u64) {
    assert!(
        writes >= 100,
        "{engine}: only {writes} data writes in four seconds: too few to judge how they are flushed"
    );
}

fn economy(engine: &str) {
    let Some((writes, syncs)) = traced(engine, &[]) else {
        return;
    };
    enough(engine, writes);
    let ratio = syncs as f64 / writes as f64;
    eprintln!("{engine}, shared flushes: {syncs} fdatasyncs of the data file for {writes} writes ({ratio:.3})");
    assert!(
        ratio < 0.5,
        "{engine}: {syncs} fdatasyncs of the data file for {writes} writes ({ratio:.3}): flushes not shared"
    );
}

fn per_write(engine: &str) {
    let Some((writes, syncs)) = traced(engine, &["--forced-flush-per-write"]) else {
        return;
    };
    enough(engine, writes);
    let ratio = syncs as f64 / writes as f64;
    eprintln!(
        "{engine}, per write: {syncs} fdatasyncs of the data file for {writes} writes ({ratio:.3})"
    );
    assert!(
        ratio >= 0.9,
        "{engine}: {syncs} fdatasyncs of the data file for {writes} writes ({ratio:.3}) with --forced-flush-per-write"
    );
}

#[test]
fn forced_flush_shares_an_fdatasync_among_writes_on_io_uring() {
    economy("uring");
}

#[test]
fn forced_flush_shares_an_fdatasync_among_writes_on_psync() {
    economy("psync");
}

#[test]
fn forced_flush_per_write_gives_each_write_its_fdatasync_on_io_uring() {
    per_write("uring");
}

#[test]
fn forced_flush_per_write_gives_each_write_its_fdatasync_on_psync() {
    per_write("psync");
}
