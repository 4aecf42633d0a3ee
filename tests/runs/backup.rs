//! The BackupUser on real files (issue #25 §1): a run with it on is clean and leaves a stream
//! beside the data, `verify` of the directory afterwards is clean with the stream in it, a
//! symlink planted at the stream's name stops the run before it starts (exit 2), its target
//! untouched, and a rerun keeps the stream of a run that found corruption.

use std::path::Path;

use crate::crash_support::{assert_success, run_cmd, small_config, verify};

/// The small crash config with a BackupUser backing up every 100 ms in 256 KB transfers.
fn backup_config(dir: &Path) -> std::path::PathBuf {
    let path = small_config(dir, 1, 3, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBufferCount=4\nBackupDelay=100\n",
    );
    std::fs::write(&path, text).expect("write config");
    path
}

fn log_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("sqliosim.log.xml")).expect("XML log")
}

#[test]
fn a_run_with_a_backup_is_clean_and_its_stream_verifies_offline_too() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let out = run_cmd(&config, data.path()).output().expect("run");
    let stdout = assert_success(&out);
    assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
    let stream = data.path().join("sqliosim.bak");
    assert!(stream.is_file(), "no stream beside the data file");
    let log = log_text(data.path());
    assert!(log.contains("User='Backup User'"), "{log}");
    assert!(log.contains("verify-only of"), "no verify-only pass: {log}");
    let v = verify(data.path());
    let vout = assert_success(&v);
    assert!(!vout.contains("CORRUPT"), "{vout}");
}

#[test]
fn a_symlink_planted_at_the_stream_is_refused_and_its_target_untouched() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let victim = cfg_dir.path().join("victim.txt");
    std::fs::write(&victim, b"not yours").expect("victim");
    std::os::unix::fs::symlink(&victim, data.path().join("sqliosim.bak")).expect("symlink");
    let config = backup_config(cfg_dir.path());
    let out = run_cmd(&config, data.path()).output().expect("run");
    crate::crash_support::assert_exit(&out, 2);
    assert_eq!(std::fs::read(&victim).expect("victim"), b"not yours");
    let err = String::from_utf8_lossy(&out.stderr);
    let stream = data.path().join("sqliosim.bak");
    assert!(
        err.contains("cannot open the backup stream")
            && err.contains(&stream.display().to_string()),
        "the refusal names the stream: {err}"
    );
    assert!(
        stream
            .symlink_metadata()
            .expect("planted")
            .file_type()
            .is_symlink(),
        "the planted link was left as it was"
    );
}

/// A rerun after a run that found corruption keeps that run's backup stream, as it keeps its
/// log and JSON: the stream holds the pages as the backup read them, which is evidence of the
/// device. Met the way a user meets it: a clean run with a backup, a data page damaged at
/// rest, a `--resume` that finds the damage (exit 1), then the same command again. It used to
/// write its own backup over the stream.
#[test]
fn a_rerun_after_a_run_that_found_corruption_keeps_its_backup_stream() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let first = run_cmd(&config, data.path())
        .args(["--seed", "51"])
        .output()
        .expect("run");
    assert_success(&first);
    let stream = data.path().join("sqliosim.bak");
    let mdx = data.path().join("sqliosim.mdx");
    crate::crash_support::write_page(&mdx, 40, &[0xA5; 8192]);
    let resumed = run_cmd(&config, data.path())
        .args(["--resume", "--seed", "52"])
        .output()
        .expect("resume");
    crate::crash_support::assert_exit(&resumed, 1);
    let json = std::fs::read(data.path().join("sqliosim.log.json")).expect("json");
    let doc: serde_json::Value = serde_json::from_slice(&json).expect("json");
    let id = format!("{:016X}", doc["run_id"].as_u64().expect("run_id"));
    let evidence = std::fs::read(&stream).expect("the stream the corrupt run left");
    let rerun = run_cmd(&config, data.path())
        .args(["--seed", "53"])
        .output()
        .expect("rerun");
    assert_success(&rerun);
    let err = String::from_utf8_lossy(&rerun.stderr);
    let kept = data.path().join(format!("sqliosim.{id}.bak"));
    assert!(
        err.contains("its evidence is kept") && err.contains(&kept.display().to_string()),
        "the note names the kept stream: {err}"
    );
    assert!(
        std::fs::read(&kept).expect("kept stream") == evidence,
        "the corrupt run's stream was not kept as it was"
    );
    assert!(stream.is_file(), "the rerun wrote its own stream");
}

/// `sqliosim verify FILE.bak` checks a stream by itself, and `verify --dir` checks the stream
/// beside the data: clean as the run left it; with a byte of a carried page flipped on disk
/// (the device damaged the stream at rest), a `backup_corruption` finding on the stream, exit 1.
#[test]
fn verify_checks_a_backup_stream_given_by_name_or_in_the_directory() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let out = run_cmd(&config, data.path())
        .args(["--seed", "61"])
        .output()
        .expect("run");
    assert_success(&out);
    let stream = data.path().join("sqliosim.bak");
    let by_name = |path: &Path| {
        crate::crash_support::bin()
            .arg("verify")
            .arg(path)
            .output()
            .expect("verify FILE.bak")
    };
    let clean = by_name(&stream);
    let text = assert_success(&clean);
    assert!(
        text.contains("backup stream of run") && text.contains("0 problem(s)"),
        "{text}"
    );
    // The first block's first carried page: 16 KB of header, then the page.
    let mut bytes = std::fs::read(&stream).expect("stream");
    bytes[16384 + 4000] ^= 0x10;
    std::fs::write(&stream, &bytes).expect("damage the stream");
    for out in [by_name(&stream), verify(data.path())] {
        crate::crash_support::assert_exit(&out, 1);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("backup_corruption") && text.contains("sqliosim.bak"),
            "the damage is a finding on the stream: {text}"
        );
    }
}
