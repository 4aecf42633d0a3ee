//! The DBCC User on real files (issue #25 §2): its snapshot file is sparse, and what the
//! filesystem holds of it (`st_blocks`) is its header page and the pages copied on write; a
//! clean check removes it. The snapshot is never durable: a check killed by kill -9 leaves a
//! snapshot file that `verify` does not hold against the run and that a resume recreates, not
//! keeps aside.

use crate::common::number_after;
use crate::crash_support::{assert_success, run_cmd, small_config, start_run, verify};

/// The small configuration with a DBCC User whose check reads 8 pages every 10 ms.
fn config(dir: &std::path::Path, cycle_s: u32) -> std::path::PathBuf {
    let path = small_config(dir, 1, cycle_s, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str("[CheckDbUser]\nUserCount=1\nReadAheadPages=8\nReadDelay=10\nCheckDelay=100\n");
    std::fs::write(&path, text).expect("write config");
    path
}

fn snapshot_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.contains("_MSSQL_DBCC"))
        .collect()
}

#[test]
fn a_clean_check_holds_only_its_copies_and_removes_its_snapshot_then_verify_and_resume_are_clean() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = config(cfg_dir.path(), 4);
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let out = run_cmd(&path, data.path())
        .args(["--seed", "41"])
        .output()
        .expect("run");
    assert_success(&out);
    let log = std::fs::read_to_string(data.path().join("sqliosim.log.xml")).expect("log");
    let checks: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("dbcc user 0: check"))
        .collect();
    // Whole, or ended by the end of the phase (under load): each says what it copied.
    assert!(!checks.is_empty(), "no check in 4 s:\n{log}");
    let mut copied_in_all = 0;
    for line in &checks {
        assert!(
            line.contains("clean; the snapshot's files are removed"),
            "{line}"
        );
        let copied = number_after(line, "_MSSQL_DBCC0:");
        let held_kb = number_after(line, "holds");
        let owed_kb = number_after(line, "copied pages (");
        // The header page and each copied page, 8 KB each: the filesystem holds those, and
        // nothing of the holes (ext4, XFS and btrfs allocate no more than a block past them).
        assert_eq!(owed_kb, (copied + 1) * 8, "{line}");
        assert!(
            held_kb >= owed_kb && held_kb <= owed_kb + 64,
            "st_blocks does not track the pages copied: {line}"
        );
        copied_in_all += copied;
    }
    assert!(copied_in_all > 0, "no page copied on write: {checks:?}");
    assert!(snapshot_files(data.path()).is_empty());
    assert_success(&verify(data.path()));
    let resumed = run_cmd(&path, data.path())
        .args(["--resume", "--seed", "42", "--duration", "1"])
        .output()
        .expect("resume");
    assert_success(&resumed);
}

#[test]
fn a_kill_during_a_check_leaves_nothing_owed_and_a_resume_recreates_the_snapshot() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = config(cfg_dir.path(), 60);
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let snap = data.path().join("sqliosim.mdx_MSSQL_DBCC0");
    let mut child = start_run(&path, data.path(), 43);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // A check under way, with pages copied into its snapshot.
    let copying = || {
        std::fs::metadata(&snap)
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512 > 64 * 1024)
    };
    while !copying() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert!(copying(), "no check copied 64 KB within 60 s");
    let checked = verify(data.path());
    let said = format!(
        "{}{}",
        assert_success(&checked),
        String::from_utf8_lossy(&checked.stderr)
    );
    // The snapshot the kill left is named as this run's and owing nothing, not as a file of
    // "another run than the journal's" (what verify said of it before).
    let line = said
        .lines()
        .find(|l| l.contains("sqliosim.mdx_MSSQL_DBCC0: file"))
        .unwrap_or_else(|| panic!("verify does not name the snapshot left:\n{said}"));
    assert!(
        line.contains("of this run outside its journaled set") && !line.contains("another run"),
        "{line}"
    );
    let resumed = run_cmd(&path, data.path())
        .args(["--resume", "--seed", "44", "--duration", "2"])
        .output()
        .expect("resume");
    assert_success(&resumed);
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(!err.contains("_MSSQL_DBCC"), "{err}");
    assert!(
        snapshot_files(data.path()).is_empty(),
        "snapshot files left or kept aside: {:?}\n{err}",
        snapshot_files(data.path())
    );
}
