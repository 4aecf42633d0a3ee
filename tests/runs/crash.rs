//! Crash consistency: `sqliosim run` killed with SIGKILL at random moments, then
//! `sqliosim verify` against the journal — no false alarm; and after damage done from outside
//! (a flipped bit, a page copied over another, an old copy restored, a page zeroed) exactly
//! the damaged pages are reported, with the right class.

use std::time::Duration;

use crate::crash_support::*;
use rand::{Rng, SeedableRng};

/// Kills per run of the suite (more with SQLIOSIM_CRASH_ITERATIONS, for the long mode).
fn iterations() -> usize {
    std::env::var("SQLIOSIM_CRASH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

#[test]
fn sigkill_at_random_moments_then_verify_finds_nothing() {
    let n = iterations();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5EED);
    for i in 0..n {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let config = small_config(dir.path(), 0, 2, i % 2 == 0);
        let mut child = start_run(&config, dir.path(), i as u64 + 1);
        let wait = Duration::from_millis(rng.random_range(300..3000));
        std::thread::sleep(wait);
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("wait");
        assert!(!status.success(), "the run was killed");
        let out = verify(dir.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "false alarm after a kill at {wait:?} (iteration {i}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Straight to fd 2, past the harness's capture: CI logs show the count of a passing run.
    let line =
        format!("crash suite: {n} SIGKILLs at random moments, each verified: 0 false alarms\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}

#[test]
fn external_damage_is_reported_at_exactly_the_damaged_pages() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 2, false);
    // A first, clean run, and a copy of a page as it was then.
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "3"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let data = dir.path().join("sqliosim.mdx");
    let old_copy = read_page(&data, 50);
    let clean = verify(dir.path());
    assert_eq!(clean.status.code(), Some(0), "clean after a clean run");
    // A second run rewrites every page (new generations), then the damage.
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "4"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let mut flipped = read_page(&data, 10);
    flipped[4000] ^= 0x04;
    write_page(&data, 10, &flipped);
    let other = read_page(&data, 20);
    write_page(&data, 30, &other);
    write_page(&data, 40, &vec![0u8; PAGE as usize]);
    let out = verify(dir.path());
    assert_eq!(out.status.code(), Some(1));
    let mut got = findings(&out);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("bit_rot".to_string(), 10),
            ("lost_write".to_string(), 40),
            ("misdirected_write".to_string(), 30)
        ],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // An old copy restored: a page of the first run's file set is a page of another run.
    write_page(&data, 50, &old_copy);
    let got = findings(&verify(dir.path()));
    assert!(got.contains(&("foreign_run".to_string(), 50)), "{got:?}");
}

#[test]
fn an_old_generation_restored_is_a_lost_write() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let data = dir.path().join("sqliosim.mdx");
    let mut child = start_run(&config, dir.path(), 11);
    // Wait for the initial update and a first checkpoint, keep a copy of some pages, let the
    // run go on rewriting them, then kill it.
    std::thread::sleep(Duration::from_millis(1500));
    let copies: Vec<(u64, Vec<u8>)> = (1..200).map(|p| (p, read_page(&data, p))).collect();
    std::thread::sleep(Duration::from_millis(4000));
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert_eq!(
        verify(dir.path()).status.code(),
        Some(0),
        "clean after the kill"
    );
    let journal = sqliosim::sim::engine::journal::JournalState::load(
        &sqliosim::io::BufferedBackend::new(),
        &dir.path().join("sqliosim.journal"),
    )
    .expect("journal");
    let header = sqliosim::page::FileHeader::decode(&read_page(&data, 0)).expect("header");
    // Restore the old copy of a page whose journaled durable generation is newer than it.
    let (page, bytes) = copies
        .into_iter()
        .find(|(p, b)| {
            let old = sqliosim::page::layout::read_stamp(b).map_or(0, |s| s.generation);
            old > 0 && journal.durable_gen(header.file_id, *p) > old
        })
        .expect("a page rewritten durably since the copy");
    write_page(&data, page, &bytes);
    let out = verify(dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        findings(&out),
        vec![("lost_write".to_string(), page)],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The verification that opens a resumed run knows the journal too.
    let out = bin()
        .args([
            "run",
            "--resume",
            "--cycles",
            "1",
            "--duration",
            "1",
            "--config",
        ])
        .arg(&config)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .expect("resume");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        findings(&out),
        vec![("lost_write".to_string(), page)],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn resume_after_a_kill_verifies_first_then_carries_on_cleanly() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let mut child = start_run(&config, dir.path(), 21);
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().expect("kill");
    child.wait().expect("wait");
    let data = dir.path().join("sqliosim.mdx");
    let before = sqliosim::page::FileHeader::decode(&read_page(&data, 0)).expect("header");
    let resume = |seed: &str| {
        run_cmd(&config, dir.path())
            .args(["--resume", "--cycles", "1", "--duration", "2"])
            .args(["--seed", seed])
            .output()
            .expect("resume")
    };
    let out = resume("22");
    assert_exit(&out, 0);
    let after = sqliosim::page::FileHeader::decode(&read_page(&data, 0)).expect("header");
    assert_eq!(before.run_id, after.run_id, "the same file set carried on");
    assert_eq!(verify(dir.path()).status.code(), Some(0));
    // Damage found by the verification that opens a resumed run.
    let mut page = read_page(&data, 12);
    page[100] ^= 1;
    write_page(&data, 12, &page);
    let out = resume("23");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        findings(&out),
        vec![("bit_rot".to_string(), 12)],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A kill -9 at any moment of a resume, again and again: each `--resume` of the run before is
/// killed at a moment across its whole life (verifying the files, replacing the journal,
/// its initial update, the main phase with the log writer and a backup, the end), then
/// `verify` must find nothing, and the next resume carries on from what the killed one left.
/// After the chain, a resume runs to its end, clean. The same command after each kill is
/// what a tired operator types.
#[test]
fn sigkill_at_any_moment_of_a_resume_again_and_again_then_verify_finds_nothing() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBufferCount=4\nBackupDelay=50\n",
    );
    std::fs::write(&config, text).expect("write config");
    let mut child = start_run(&config, dir.path(), 31);
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x2E5);
    // Early moments (the verification and the journal's replacement take tens of ms here)
    // and later ones, interleaved.
    let waits: Vec<u64> = (0..10u64)
        .map(|i| {
            if i % 2 == 0 {
                rng.random_range(0..120)
            } else {
                rng.random_range(120..2500)
            }
        })
        .collect();
    for (i, &ms) in waits.iter().enumerate() {
        let mut child = run_cmd(&config, dir.path())
            .args(["--resume", "--seed", &(40 + i).to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start the resume");
        std::thread::sleep(Duration::from_millis(ms));
        child.kill().expect("SIGKILL");
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked"),
            "kill {i} at {ms} ms: {stderr}"
        );
        let v = verify(dir.path());
        assert_eq!(
            v.status.code(),
            Some(0),
            "false alarm after kill {i} of a resume at {ms} ms:\n{}\n{}\nthe resume said: {stderr}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
    }
    let out = run_cmd(&config, dir.path())
        .args([
            "--resume",
            "--cycles",
            "1",
            "--duration",
            "1",
            "--seed",
            "60",
        ])
        .output()
        .expect("the last resume");
    assert_success(&out);
    assert_eq!(verify(dir.path()).status.code(), Some(0));
}

#[test]
fn resume_refuses_a_missing_file_set() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, false);
    let out = run_cmd(&config, dir.path())
        .arg("--resume")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot resume"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_killed_run_leaves_a_log_and_json_that_report_reads() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let json = dir.path().join("summary.json");
    let mut child = run_cmd(&config, dir.path())
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start");
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    for input in [dir.path().join("sqliosim.log.xml"), json] {
        let out = bin().arg("report").arg(&input).output().expect("report");
        // Killed: its process is gone, so not RUNNING; and never a pass (exit 2).
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: {}",
            input.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("Verdict: UNFINISHED: no integrity errors found before it ended"),
            "{said}"
        );
    }
}

#[test]
fn ctrl_c_stops_the_users_and_still_writes_the_summary_and_log() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 60, false);
    let child = run_cmd(&config, dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    std::thread::sleep(Duration::from_millis(2500));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT");
    let out = child.wait_with_output().expect("wait");
    assert_exit(&out, 130);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("CLEAN so far — stopped by SIGINT"),
        "{stdout}"
    );
    let log = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).expect("log");
    let doc = roxmltree::Document::parse(&log).expect("the log is well-formed XML");
    let summaries = doc
        .descendants()
        .filter(|n| n.has_tag_name("EXTENDED_DESCRIPTION"))
        .filter(|n| {
            n.text()
                .is_some_and(|t| t.starts_with("********** Final Summary for file"))
        })
        .count();
    assert_eq!(summaries, 2, "a final summary for each file");
}
