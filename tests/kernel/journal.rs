//! The durability journal through the binary: acknowledged O_DSYNC writes are journaled within
//! milliseconds (not only at checkpoints), `verify --dir` checks the files the journal names and
//! only names copies, compaction keeps the journal bounded and survives SIGKILL at any moment,
//! and a journal that cannot be written voids the durability check without failing the run.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::crash_support::*;
use rand::{Rng, SeedableRng};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn verify_args(args: &[&str], dir: &Path) -> Output {
    bin()
        .arg("verify")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sqliosim verify")
}

#[test]
fn a_copy_of_the_data_file_is_named_not_counted_and_can_be_checked_alone() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 2, true);
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "5"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let data = dir.path().join("sqliosim.mdx");
    let copy = dir.path().join("old.copy");
    std::fs::copy(&data, &copy).expect("copy");
    // A second run writes new generations: the copy is now stale.
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "6", "--resume"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let out = verify(dir.path());
    let text = stdout(&out);
    assert_success(&out);
    assert!(
        text.contains("old.copy: a copy of file 0 of this run"),
        "{text}"
    );
    assert!(findings(&out).is_empty());
    // Checked alone, the stale copy owes the journal the second run's writes.
    let out = verify_args(&["--file", "old.copy"], dir.path());
    assert_exit(&out, 1);
    let got = findings(&out);
    assert!(
        !got.is_empty() && got.iter().all(|(c, _)| c == "lost_write"),
        "{got:?}"
    );
}

#[test]
fn an_acknowledged_dsync_write_rolled_back_before_any_checkpoint_is_a_lost_write() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    // WriteThrough=TRUE: every data write is O_DSYNC. The main phase checkpoints every 5 s;
    // the copy and the kill both fall within its first 3 s.
    let config = small_config(dir.path(), 0, 60, true);
    let data = dir.path().join("sqliosim.mdx");
    let mut child = start_run(&config, dir.path(), 21);
    std::thread::sleep(Duration::from_millis(1500));
    let before = std::fs::read(&data).expect("copy before");
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    // The device "loses" every write acknowledged in the last 1.5 s.
    std::fs::write(&data, &before).expect("restore");
    let out = verify(dir.path());
    let got = findings(&out);
    assert_exit(&out, 1);
    assert!(
        got.iter().any(|(c, _)| c == "lost_write"),
        "{got:?}\n{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("up to the last journal batch at"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn sigkill_during_frequent_compactions_leaves_a_journal_verify_reads() {
    let n: usize = std::env::var("SQLIOSIM_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0xC0A7);
    for i in 0..n {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let config = small_config(dir.path(), 0, 60, i % 2 == 0);
        // Compact whenever the journal outgrows twice its snapshot: every few batches.
        let mut child = run_cmd(&config, dir.path())
            .args(["--seed", &(100 + i).to_string()])
            .env("SQLIOSIM_JOURNAL_COMPACT_BYTES", "0")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start");
        let wait = Duration::from_millis(rng.random_range(500..4000));
        std::thread::sleep(wait);
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        let out = verify(dir.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "false alarm after a kill at {wait:?} (iteration {i}):\n{}\n{}",
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout(&out).contains("Journal "), "{}", stdout(&out));
    }
}

#[test]
fn the_journal_stays_within_twice_its_snapshot_over_many_compactions() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 8, true);
    let json = dir.path().join("summary.json");
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "9", "--json"])
        .arg(&json)
        .env("SQLIOSIM_JOURNAL_COMPACT_BYTES", "0")
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    let j = summary
        .pointer("/stats/journal")
        .unwrap_or_else(|| panic!("no journal in the summary: {summary}"));
    let num = |k: &str| j[k].as_u64().unwrap_or_else(|| panic!("{k} in {j}"));
    let (bytes, max, snap, compactions) = (
        num("bytes"),
        num("max_bytes"),
        num("snapshot_bytes"),
        num("compactions"),
    );
    assert!(compactions >= 3, "{j}");
    let on_disk = std::fs::metadata(dir.path().join("sqliosim.journal"))
        .expect("journal")
        .len();
    assert_eq!(on_disk, bytes, "{j}");
    // Twice the snapshot, plus the one batch that crossed the limit.
    let slack = 64 * 1024;
    assert!(max <= 2 * snap + slack, "{j}");
    assert!(stdout(&out).contains("compaction(s)"), "{}", stdout(&out));
    assert_success(&verify(dir.path()));
}

/// A tiny tmpfs, unmounted (and its directory removed) when dropped.
struct TinyFs(tempfile::TempDir);

impl TinyFs {
    fn mount() -> Option<TinyFs> {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=8k", "tmpfs"])
            .arg(dir.path())
            .status()
            .ok()?
            .success();
        ok.then_some(TinyFs(dir))
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        crate::loop_support::unmount(self.0.path());
    }
}

#[test]
fn a_journal_that_cannot_be_written_voids_the_check_without_failing_the_run() {
    let Some(tiny) = TinyFs::mount() else {
        eprintln!("skipped: cannot mount a tmpfs (not root?)");
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 3, true);
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "12", "--journal-dir"])
        .arg(tiny.0.path())
        .output()
        .expect("run");
    let text = stdout(&out);
    assert_exit(&out, 0);
    assert!(text.contains("Durability check VOID"), "{text}");
    assert!(text.contains("Verdict: CLEAN"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("the durability check is void").count(),
        1,
        "said once: {err}"
    );
    // The Void record fitted once the partial append was cut off: verify says from when.
    let out = bin()
        .args(["verify", "--dir"])
        .arg(dir.path())
        .arg("--journal-dir")
        .arg(tiny.0.path())
        .output()
        .expect("verify");
    let text = stdout(&out);
    assert_success(&out);
    assert!(
        text.contains("The journal could not be written from"),
        "{text}"
    );
}
