//! Outputs a configuration or an option names, kept where the run's files are (issue #36 §3
//! and §4): a `BackupFile=` with a directory part, absolute or climbing out with `..`, is
//! placed in `--dir` as `FileName` and `ErrorFile` are (its `.bak` and `.trn` never land in a
//! directory outside, and `--force` never overwrites a file there); `restore --to` refuses
//! `/dev`, `/proc`, `/sys` (named directly or through a symlink) and a path that is no
//! directory, exit 2 naming it, before anything is written.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::crash_support::{assert_exit, assert_success, bin, run_cmd, small_config};

const VICTIM: &[u8] = b"root's own file, nothing of sqliosim's\n";

/// The entries of `dir`, sorted (empty when it does not exist).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A run's configuration in `dir` with a BackupUser (full and log backups) writing to
/// `backup_file`.
fn config_with_backup(dir: &Path, backup_file: &str) -> PathBuf {
    let config = small_config(dir, 1, 2, true);
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(&format!(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay=100\nLogBackupInterval=100\nBackupFile={backup_file}\n"
    ));
    std::fs::write(&config, text).expect("config");
    config
}

/// A directory only root may enter, holding a root file at `x.bak` (the victim).
fn private_dir(base: &Path) -> PathBuf {
    let private = base.join("private");
    std::fs::create_dir(&private).expect("mkdir");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::write(private.join("x.bak"), VICTIM).expect("victim");
    private
}

#[test]
fn an_absolute_backup_file_is_placed_in_dir_and_never_overwrites_a_file_outside() {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let private = private_dir(base.path());
    let run_dir = base.path().join("run");
    std::fs::create_dir(&run_dir).expect("mkdir");
    let target = private.join("x.bak");
    let config = config_with_backup(base.path(), &target.to_string_lossy());
    let before = listing(&private);
    let out = run_cmd(&config, &run_dir)
        .args(["--seed", "7", "--force"])
        .output()
        .expect("run");
    assert_success(&out);
    assert_eq!(
        listing(&private),
        before,
        "a file was created outside --dir"
    );
    assert_eq!(
        std::fs::read(&target).expect("victim"),
        VICTIM,
        "--force overwrote a file outside --dir"
    );
    let inside = listing(&run_dir);
    assert!(
        inside.iter().any(|n| n == "x.bak"),
        "the stream is in --dir under its name: {inside:?}"
    );
}

#[test]
fn a_backup_file_climbing_out_of_dir_is_placed_in_it() {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let run_dir = base.path().join("run");
    std::fs::create_dir(&run_dir).expect("mkdir");
    let config = config_with_backup(base.path(), "../escaped.bak");
    let out = run_cmd(&config, &run_dir)
        .args(["--seed", "8"])
        .output()
        .expect("run");
    assert_success(&out);
    let outside = listing(base.path());
    assert!(
        !outside.iter().any(|n| n.starts_with("escaped")),
        "a stream was written beside --dir: {outside:?}"
    );
    assert!(
        listing(&run_dir).iter().any(|n| n == "escaped.bak"),
        "{:?}",
        listing(&run_dir)
    );
}

#[test]
fn a_backup_file_naming_no_file_is_refused_naming_the_key_and_line() {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let run_dir = base.path().join("run");
    std::fs::create_dir(&run_dir).expect("mkdir");
    let config = config_with_backup(base.path(), "/tmp/..");
    let out = run_cmd(&config, &run_dir).output().expect("run");
    assert_exit(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    let line = std::fs::read_to_string(&config)
        .expect("config")
        .lines()
        .position(|l| l.starts_with("BackupFile="))
        .expect("the key")
        + 1;
    assert!(
        err.contains("BackupFile") && err.contains(&format!(":{line}")),
        "{err}"
    );
    assert!(listing(&run_dir).is_empty(), "{:?}", listing(&run_dir));
}

/// The stream of one short run, under a name of this process's own (the copies are named
/// after it, so any left in /dev by the unfixed tool can be found and removed).
fn stream(base: &Path) -> PathBuf {
    let run_dir = base.join("made");
    std::fs::create_dir(&run_dir).expect("mkdir");
    let config = config_with_backup(base, "");
    let out = run_cmd(&config, &run_dir)
        .args(["--seed", "9"])
        .output()
        .expect("run");
    assert_success(&out);
    let named = base.join(format!("h1-restore-{}.bak", std::process::id()));
    std::fs::rename(run_dir.join("sqliosim.bak"), &named).expect("the stream");
    named
}

fn restore_to(stream: &Path, to: &Path) -> Output {
    bin()
        .arg("restore")
        .arg(stream)
        .arg("--to")
        .arg(to)
        .output()
        .expect("restore")
}

/// The copies of `stream` in `dir`, removed (a test on the unfixed tool must not leave
/// them in /dev).
fn take_copies(stream: &Path, dir: &Path) -> Vec<String> {
    let prefix = stream
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let found: Vec<String> = listing(dir)
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect();
    for n in &found {
        let _ = std::fs::remove_file(dir.join(n));
    }
    found
}

#[test]
fn restore_to_dev_proc_sys_or_a_file_is_refused_and_writes_nothing() {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let stream = stream(base.path());
    let link = base.path().join("devices");
    std::os::unix::fs::symlink("/dev", &link).expect("symlink");
    let file = base.path().join("plain");
    std::fs::write(&file, VICTIM).expect("file");
    for to in [
        PathBuf::from("/dev"),
        link.clone(),
        PathBuf::from("/dev/../dev/."),
        PathBuf::from("/proc"),
        PathBuf::from("/sys/kernel"),
        file.clone(),
    ] {
        let out = restore_to(&stream, &to);
        let written = take_copies(&stream, Path::new("/dev"));
        assert!(
            written.is_empty(),
            "--to {}: {written:?} in /dev",
            to.display()
        );
        assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&*to.to_string_lossy()),
            "--to {}: {err}",
            to.display()
        );
    }
    assert_eq!(std::fs::read(&file).expect("file"), VICTIM);
    let out = restore_to(&stream, base.path());
    assert_success(&out);
    assert_eq!(
        take_copies(&stream, base.path()).len(),
        2,
        "a copy per file"
    );
}
