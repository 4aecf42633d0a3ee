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
    eight_users_with(dir, seconds, "")
}

/// The same with more `[CONFIG]` lines.
fn eight_users_with(dir: &Path, seconds: u32, general: &str) -> PathBuf {
    let text = format!(
        "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nTestCycleDuration={seconds}\nMaxMemoryMB=8\n{general}\
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
    let start = sqliosim::sim::engine::logblock::LOG_AREA_START as usize;
    bytes
        .get(start..)
        .unwrap_or_default()
        .chunks(512)
        .filter_map(|c| sqliosim::sim::engine::logblock::peek(c).ok())
        .map(|b| (b.len, b.records))
        .collect()
}

/// A 3 s run of eight users under strace with `--engine sync` (each request a system call of
/// its own) in `dir`: the calls traced, or `None` without strace.
fn traced_eight_users(dir: &Path) -> Option<Vec<strace_support::Call>> {
    if !strace_support::available() {
        return None;
    }
    let config = eight_users(dir, 3);
    let mut cmd = run_cmd(&config, dir);
    cmd.args(["--engine", "sync", "--no-json"]);
    let (out, calls) = strace_support::run(&cmd, &dir.join("strace.txt"));
    assert_success(&out);
    Some(calls)
}

#[test]
fn log_writes_are_60_kb_blocks_that_pack_records() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some(calls) = traced_eight_users(dir.path()) else {
        return;
    };
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
    assert!(blocks
        .iter()
        .all(|(len, _)| u64::from(*len) <= MAX_LOG_WRITE));
}

/// The physical sector size of the block device holding `dir`, read from sysfs here (not by
/// the code under test); `None` off a block device.
fn physical_sector(dir: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    if major == 0 {
        return None;
    }
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    [sys.join("queue"), sys.parent()?.join("queue")]
        .iter()
        .find_map(|q| std::fs::read_to_string(q.join("physical_block_size")).ok())
        .and_then(|t| t.trim().parse().ok())
}

/// The log unit the .ldx file's header records.
fn recorded_unit(ldx: &Path) -> u32 {
    let bytes = std::fs::read(ldx).expect("read the log file");
    sqliosim::page::FileHeader::decode(&bytes[..8192])
        .expect("log header")
        .sector_size
}

#[test]
fn the_log_unit_is_the_physical_sector_and_force4klogio_makes_it_4096() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some(physical) = physical_sector(dir.path()) else {
        eprintln!("skipped: {} is not on a block device", dir.path().display());
        return;
    };
    let expected = physical.clamp(512, 8192);
    for (extra, unit) in [("", expected), ("Force4KLogIO=TRUE\n", expected.max(4096))] {
        let config = eight_users_with(dir.path(), 1, extra);
        let out = run_cmd(&config, dir.path())
            .args(["--no-json"])
            .output()
            .expect("run");
        let stdout = assert_success(&out);
        assert!(
            stdout.contains(&format!("log blocks in {unit}-byte units")),
            "{extra:?}, physical sector {physical}: {stdout}"
        );
        let ldx = dir.path().join("sqliosim.ldx");
        assert_eq!(recorded_unit(&ldx), unit, "{extra:?}");
        let blocks = blocks_in(&ldx);
        assert!(!blocks.is_empty());
        assert!(
            blocks.iter().all(|(len, _)| len % unit == 0),
            "{extra:?}: every block a multiple of {unit}"
        );
        if extra.is_empty() {
            continue;
        }
        let saved = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).expect("log");
        assert!(
            saved.contains("Force4KLogIO"),
            "the key is recorded in the log"
        );
    }
}

/// The number after `key = ` in `text`.
fn figure(text: &str, key: &str) -> Option<u64> {
    let (_, rest) = text.split_once(&format!("{key} = "))?;
    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
    n.parse().ok()
}

#[test]
fn the_log_files_summary_counts_its_reads_and_a_running_average_that_moves() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    // A target no device reaches: an average that never moved would still show it.
    let config = eight_users_with(dir.path(), 2, "TargetIODuration=100000\n");
    let out = run_cmd(&config, dir.path())
        .args(["--no-json"])
        .output()
        .expect("run");
    assert_success(&out);
    let xml = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).expect("log");
    let summary: String = xml
        .split("Final Summary for file")
        .skip(1)
        .find(|s| {
            s.split_whitespace()
                .next()
                .is_some_and(|p| p.ends_with("sqliosim.ldx"))
        })
        .expect("the log file's summary")
        .chars()
        .take(1500)
        .collect();
    let reads = figure(&summary, "Reads").expect("Reads");
    let average = figure(&summary, "Running Average IO Duration (ms)").expect("average");
    assert!(reads > 0, "the log's reads are counted: {summary}");
    assert!(
        average < 100_000,
        "the log's running average moved: {summary}"
    );
}

#[test]
fn with_the_default_io_service_several_log_writes_are_in_flight_at_once() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = eight_users(dir.path(), 3);
    let out = run_cmd(&config, dir.path()).output().expect("run");
    assert_success(&out);
    let text = std::fs::read_to_string(dir.path().join("sqliosim.log.json")).expect("JSON");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON parses");
    let files = doc["stats"]["files"].as_array().expect("stats.files");
    let log = files
        .iter()
        .find(|f| f["path"].as_str().is_some_and(|p| p.ends_with(".ldx")))
        .expect("the log file's summary");
    let most = log["io_request_blocks"]
        .as_u64()
        .expect("io_request_blocks");
    assert!(
        most > 1,
        "the log file's most requests in flight at once: {most} (the log writer's writes are posted, up to 32)"
    );
    assert!(
        most <= 64,
        "bounded by the log writer's depth (plus its reads): {most}"
    );
}

/// SQL Server's largest forward log read (recovery, log backup): 120 KB.
const MAX_FORWARD_READ: u64 = 122_880;
/// The backward walk's largest read before the forward reader: 7.5 KB.
const OLD_LARGEST_LOG_READ: u64 = 7_680;

#[test]
fn the_log_is_read_forward_in_reads_of_up_to_120_kb() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some(calls) = traced_eight_users(dir.path()) else {
        return;
    };
    // Reads of the log area (past the file header).
    let log_reads: Vec<u64> = calls
        .iter()
        .filter(|c| c.is_read() && c.path.as_deref().is_some_and(|p| p.ends_with(".ldx")))
        .filter(|c| c.offset.is_some_and(|o| o >= 8192))
        .filter_map(|c| c.len)
        .collect();
    assert!(
        log_reads.iter().any(|&n| n > OLD_LARGEST_LOG_READ),
        "forward reads larger than the backward walk's: {log_reads:?}"
    );
    let largest = log_reads.iter().copied().max().unwrap_or_default();
    assert!(
        largest <= MAX_FORWARD_READ,
        "a log read of {largest} bytes (at most {MAX_FORWARD_READ})"
    );
}

/// SQL Server stamps a new log file with 0xC0, not zeros, in writes of about 4 MB (issue #24
/// §2): the traced fill of a 10 MB log is 4 MB writes of 0xC0 bytes (the last one shorter),
/// from the end of the header page to the end of the file, and no zero fill.
#[test]
fn a_new_log_is_stamped_with_0xc0_in_4_mb_writes() {
    if !strace_support::available() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = dir.path().join("stamp.cfg.ini");
    let text = std::fs::read_to_string(eight_users(dir.path(), 1))
        .expect("config")
        .replace(
            "FileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4",
            "FileName=sqliosim.ldx\nInitialSize=10\nMaxSize=10",
        );
    std::fs::write(&config, text).expect("write config");
    let mut cmd = run_cmd(&config, dir.path());
    cmd.args(["--engine", "sync", "--no-json"]);
    let (out, calls) = strace_support::run(&cmd, &dir.path().join("strace.txt"));
    assert_success(&out);
    let fill: Vec<(u64, u64, String)> = calls
        .iter()
        .filter(|c| c.is_write() && c.path.as_deref().is_some_and(|p| p.ends_with(".ldx")))
        .filter(|c| c.data.as_deref() != Some("SQLSIMLG"))
        .filter(|c| c.len.is_some_and(|n| n > 61_440))
        .map(|c| {
            (
                c.offset.unwrap_or(u64::MAX),
                c.len.unwrap_or(0),
                c.data.clone().unwrap_or_default(),
            )
        })
        .collect();
    let stamp = "\\300".repeat(8);
    let mb = 1u64 << 20;
    let page = 8192;
    let want = vec![
        (page, 4 * mb, stamp.clone()),
        (page + 4 * mb, 4 * mb, stamp.clone()),
        (page + 8 * mb, 2 * mb - page, stamp),
    ];
    assert_eq!(
        fill, want,
        "the log's fill writes (offset, bytes, first bytes)"
    );
}
