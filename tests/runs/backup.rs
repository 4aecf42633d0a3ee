//! The BackupUser on real files (issue #25 §1): a run with it on is clean and leaves a stream
//! beside the data, `verify` of the directory afterwards is clean with the stream in it, and a
//! symlink planted at the stream's name is refused, its target untouched.

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
    assert_success(&out);
    assert_eq!(std::fs::read(&victim).expect("victim"), b"not yours");
    let log = log_text(data.path());
    assert!(log.contains("cannot open the backup stream"), "{log}");
}
