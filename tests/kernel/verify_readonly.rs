//! `sqliosim verify` of a file set it may not write, as a user meets it: a copy whose files and
//! directory are read-only to the user verifying it, and a real read-only mount (ext4 on a
//! loop device, `mount -o remount,ro`). Both are verified CLEAN without a lock, saying why, and
//! nothing is created there. Before, verify opened the files read-write, skipped every one it
//! could not, and said `no file created by sqliosim found in DIR` (exit 2).
//!
//! The copy is verified as `nobody` when the tests run as root (root ignores permissions), as
//! the user running the tests otherwise. The mount needs root and a loop device: skipped
//! without them unless SQLIOSIM_REQUIRE_LOOP is set.
//!
//! Writing nothing unless asked also covers `verify --json -`: the summary goes to stdout
//! (the console to stderr), and no file named `-` appears.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::crash_support::{assert_exit, bin};

/// A one-second run's configuration in `dir`: a 2 MB data file and a 1 MB log (also the
/// device-LBA test's).
pub fn config(dir: &Path) -> std::path::PathBuf {
    let text = "[CONFIG]\nTestCycles=1\nTestCycleDuration=1\nMaxMemoryMB=4\nWriteThrough=TRUE\n\
         [RandomUser]\nUserCount=1\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";
    let path = dir.join("small.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

fn run_in(dir: &Path, config: &Path) {
    let out = bin()
        .args(["run", "--config"])
        .arg(config)
        .arg("--dir")
        .arg(dir)
        .args(["--seed", "4"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Asserts a clean verify of a read-only file set.
fn assert_clean_read_only(out: &Output) {
    let t = text(out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("Verdict: CLEAN"), "{t}");
    assert!(t.contains("sqliosim.mdx: 255 pages checked"), "{t}");
    assert!(t.contains("log blocks found"), "{t}");
    // No lock file is created: verify takes its shared lock on the run's existing lock files,
    // opened read-only (docs/security.md), so a read-only file set needs no "without a lock".
    assert!(!t.contains("warning"), "{t}");
}

#[test]
fn a_copy_read_only_to_the_user_verifies_clean_without_a_lock() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg_dir = tmp.path().join("cfg");
    let dir = tmp.path().join("set");
    std::fs::create_dir_all(&cfg_dir).expect("dir");
    std::fs::create_dir_all(&dir).expect("dir");
    run_in(&dir, &config(&cfg_dir));
    // A copy as it would be handed over: no lock files, nothing writable.
    for n in names(&dir) {
        let p = dir.join(&n);
        if n.ends_with(".lock") {
            std::fs::remove_file(&p).expect("rm lock");
        } else {
            chmod(&p, 0o444);
        }
    }
    chmod(tmp.path(), 0o755);
    chmod(&dir, 0o555);
    let before = names(&dir);
    let mut cmd = bin();
    cmd.args(["verify", "--dir"]).arg(&dir);
    if crate::loop_support::is_root() {
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().expect("verify");
    chmod(&dir, 0o755);
    assert_clean_read_only(&out);
    assert_eq!(names(&dir), before, "verify created nothing");
}

#[test]
fn a_read_only_mount_verifies_clean_without_a_lock() {
    if !crate::loop_support::is_root() {
        crate::loop_support::skip("a read-only mount needs root");
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let image = crate::loop_support::sparse_image(tmp.path(), "ro.img", 64 << 20);
    let Some(dev) = crate::loop_support::LoopDev::attach(&image, true, 4096) else {
        return;
    };
    let mnt = tmp.path().join("mnt");
    let Some(m) = crate::loop_support::Mounted::new(dev, "ext4", &mnt) else {
        return;
    };
    run_in(m.dir(), &config(tmp.path()));
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(m.dir())
        .output()
        .expect("mount");
    assert!(remount.status.success(), "{remount:?}");
    let before = names(m.dir());
    let out = bin()
        .args(["verify", "--dir"])
        .arg(m.dir())
        .output()
        .expect("verify");
    assert_clean_read_only(&out);
    assert_eq!(names(m.dir()), before);
}

/// A copy made with hard links (`cp -al` without the lock files): every file, the journal
/// included, has two links. Reading is all verify does, so the copy verifies clean. The
/// journal used to be refused ("has 2 hard links"), and verify went on without it.
#[test]
fn a_hard_linked_copy_verifies_clean() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path().join("set");
    let copy = tmp.path().join("copy");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(&copy).expect("dir");
    run_in(&dir, &config(tmp.path()));
    for n in names(&dir).iter().filter(|n| !n.ends_with(".lock")) {
        std::fs::hard_link(dir.join(n), copy.join(n)).expect("link");
    }
    let out = bin()
        .args(["verify", "--dir"])
        .arg(&copy)
        .output()
        .expect("verify");
    let t = text(&out);
    assert_clean_read_only(&out);
    assert!(t.contains("Journal ") && !t.contains("hard links"), "{t}");
}

#[test]
fn verify_json_dash_is_stdout_and_creates_no_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(dir.path());
    run_in(dir.path(), &cfg);
    let before = names(dir.path());
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .current_dir(dir.path())
        .args(["verify", "--dir", ".", "--json", "-"])
        .output()
        .expect("verify");
    assert_exit(&out, 0);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not the JSON alone ({e}): {}", text(&out)));
    assert_eq!(json["schema"], "sqliosim-summary/2", "{json}");
    assert_eq!(json["outcome"], "clean", "{json}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Verdict: CLEAN"),
        "the console goes to stderr: {}",
        text(&out)
    );
    assert!(!dir.path().join("-").exists(), "a file named - was written");
    assert_eq!(
        names(dir.path()),
        before,
        "verify --json - wrote into the directory"
    );
}
