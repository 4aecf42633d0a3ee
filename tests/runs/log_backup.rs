//! The Backup User's log backups on real files (issue #25 §1): a run with them is clean and
//! leaves `sqliosim.trn` beside the data, which `verify` checks by name and in the directory
//! (a byte flipped in it is a `backup_corruption` finding there); under strace the log is read
//! forward in requests of at most 120 KB and the `.trn` written sequentially under its
//! `.partial` name, made durable before it is renamed into place; and a kill -9 among the log
//! backups leaves a directory that `verify` finds clean and a resume runs on clean.

use std::path::Path;

use crate::crash_support::{assert_exit, assert_success, bin, run_cmd, small_config, verify};

/// The small crash config with log backups every 100 ms (full backups every 100 s) in
/// 256 KB transfers.
fn log_backup_config(dir: &Path, cycle_s: u32) -> std::path::PathBuf {
    let path = small_config(dir, 1, cycle_s, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay=100000\nLogBackupInterval=100\n",
    );
    std::fs::write(&path, text).expect("write config");
    path
}

fn verify_file(path: &Path) -> std::process::Output {
    bin().arg("verify").arg(path).output().expect("verify FILE")
}

fn all_text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn a_run_with_log_backups_is_clean_and_its_trn_verifies_by_name_and_in_the_directory() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = log_backup_config(cfg_dir.path(), 3);
    let out = run_cmd(&config, data.path())
        .args(["--seed", "31"])
        .output()
        .expect("run");
    let stdout = assert_success(&out);
    assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
    let log = std::fs::read_to_string(data.path().join("sqliosim.log.xml")).expect("log");
    assert!(log.contains("log backup 2: "), "{log}");
    assert!(
        log.contains("sqliosim.trn: ") || log.contains("sqliosim.trn,"),
        "{log}"
    );
    let trn = data.path().join("sqliosim.trn");
    let v = verify_file(&trn);
    let text = assert_success(&v);
    assert!(
        text.contains("log backup stream of run") && text.contains(", finished, 0 problem(s)"),
        "{text}"
    );
    let dir = verify(data.path());
    let text = assert_success(&dir);
    assert!(
        text.contains("sqliosim.trn: log backup stream of run"),
        "{text}"
    );
    // A byte of the first log block the stream carries (after its 4 KB header).
    let mut bytes = std::fs::read(&trn).expect("trn");
    assert!(bytes.len() > 8192, "the last log backup carried log");
    bytes[4096 + 300] ^= 0x08;
    std::fs::write(&trn, &bytes).expect("damage");
    for out in [verify_file(&trn), verify(data.path())] {
        assert_exit(&out, 1);
        let text = all_text(&out);
        assert!(
            text.contains("backup_corruption") && text.contains("sqliosim.trn"),
            "the damage is a finding on the .trn: {text}"
        );
    }
}

#[test]
fn under_strace_the_log_is_read_forward_and_the_trn_written_sequentially() {
    if !crate::strace_support::available() {
        return;
    }
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = log_backup_config(cfg_dir.path(), 2);
    let mut cmd = run_cmd(&config, data.path());
    cmd.args(["--engine", "sync", "--no-json", "--seed", "82"]);
    let (out, calls) = crate::strace_support::run(&cmd, &data.path().join("strace.txt"));
    assert_success(&out);
    let on = |c: &crate::strace_support::Call, suffix: &str| {
        c.path.as_deref().is_some_and(|p| p.ends_with(suffix))
    };
    // The log's reads: the forward reader's (log backups, the audit) are at most 120 KB, and
    // several log backups read more than one 60 KB block in one request.
    let reads: Vec<u64> = calls
        .iter()
        .filter(|c| c.is_read() && on(c, "sqliosim.ldx"))
        .filter_map(|c| c.len)
        .collect();
    assert!(reads.iter().all(|&n| n <= 120 * 1024), "{reads:?}");
    assert!(
        reads.iter().filter(|&&n| n > 60 * 1024).count() >= 2,
        "{reads:?}"
    );
    // The .trn: written only under its .partial name, each log backup from offset 0 on,
    // sequentially, in blocks of a 4 KB header and up to 256 KB of log, then fdatasync'ed.
    assert!(
        !calls.iter().any(|c| c.is_write() && on(c, "sqliosim.trn")),
        "a write went to the finished log backup's name"
    );
    let (mut next, mut writes, mut synced) = (0, 0, 0);
    for c in calls.iter().filter(|c| on(c, "sqliosim.trn.partial")) {
        if c.is_write() {
            let (off, len) = (c.offset.expect("offset"), c.len.expect("len"));
            if off == 0 {
                next = 0;
            }
            assert_eq!(off, next, "a .trn write out of sequence: {c:?}");
            assert!(len <= 4096 + 262_144, "a block of {len} bytes");
            next = off + len;
            writes += 1;
        } else if c.syscall == "fdatasync" {
            synced += 1;
        }
    }
    assert!(writes >= 4, "the .trn had {writes} writes");
    assert!(synced >= 2, "each log backup is made durable: {synced}");
}

#[test]
fn a_kill_among_the_log_backups_leaves_a_directory_verify_finds_clean_and_a_resume_runs_on() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = log_backup_config(cfg_dir.path(), 30);
    let mut child = crate::crash_support::start_run(&config, data.path(), 33);
    let xml = data.path().join("sqliosim.log.xml");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    while !std::fs::read_to_string(&xml).is_ok_and(|t| t.contains("log backup 3: "))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(130));
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    let trn = data.path().join("sqliosim.trn");
    let by_name = verify_file(&trn);
    let text = assert_success(&by_name);
    assert!(text.contains(", finished, 0 problem(s)"), "{text}");
    let v = verify(data.path());
    let vout = assert_success(&v);
    assert!(vout.contains("sqliosim.trn: log backup stream"), "{vout}");
    let resumed = run_cmd(&config, data.path())
        .args(["--resume", "--duration", "2", "--seed", "34"])
        .output()
        .expect("resume");
    let rout = assert_success(&resumed);
    assert!(rout.contains("Verdict: CLEAN"), "{rout}");
    // The resumed run's log (a resume writes its own) has log backups of its own.
    let log = std::fs::read_to_string(&xml).expect("log");
    assert!(
        log.contains("log backup 1: "),
        "the resumed run backs the log up too"
    );
}

/// The finished backups are journaled (issue #25 §1): after a clean run `verify` says each
/// stream is the finished backup the journal holds; a `.bak` that lost its END block (what a
/// device that drops the last acknowledged writes leaves) is a `lost_write` on it, a `.trn`
/// gone is a `lost_file`.
#[test]
fn verify_holds_the_device_to_the_finished_backups_the_journal_holds() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = log_backup_config(cfg_dir.path(), 2);
    let out = run_cmd(&config, data.path())
        .args(["--seed", "35"])
        .output()
        .expect("run");
    assert_success(&out);
    let clean = verify(data.path());
    let text = assert_success(&clean);
    for name in ["sqliosim.bak", "sqliosim.trn"] {
        assert!(
            text.lines().any(|l| l.contains(name)
                && l.contains("the journal holds finished")
                && l.ends_with(": as journaled")),
            "{name}: {text}"
        );
    }
    let bak = data.path().join("sqliosim.bak");
    let len = std::fs::metadata(&bak).expect("bak").len();
    // The END block is a 16 KB header carrying no page.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&bak)
        .and_then(|f| f.set_len(len - 16384))
        .expect("cut the END block");
    std::fs::remove_file(data.path().join("sqliosim.trn")).expect("remove the .trn");
    let lost = verify(data.path());
    assert_exit(&lost, 1);
    let text = all_text(&lost);
    assert!(
        text.contains("lost_write") && text.contains("without its END block"),
        "{text}"
    );
    assert!(
        text.contains("lost_file") && text.contains("is gone"),
        "{text}"
    );
}
