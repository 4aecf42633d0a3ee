//! The control file itself: replies, errors, status, clear, seed.

use crate::support::*;
use faultfs::MountError;
use std::io::Write;

#[test]
fn bad_commands_are_rejected_with_a_reason() {
    let Some(fx) = fixture("bad_commands_are_rejected_with_a_reason") else {
        return;
    };
    let err = fx.mount.inject("melt file=x").expect_err("unknown kind");
    assert!(
        matches!(&err, MountError::Rejected { reply, .. } if reply.contains("unknown fault kind")),
        "{err}"
    );
    let err = fx
        .mount
        .command("inject flip file=nothere byte=0")
        .expect_err("no such file");
    assert!(err.to_string().contains("nothere"), "{err}");
    // A shell-style `echo bad > .faultfs-control` sees EINVAL from write(2).
    let mut ctl = std::fs::OpenOptions::new()
        .write(true)
        .open(fx.mount.path(".faultfs-control"))
        .expect("open control");
    let r = ctl.write_all(b"frobnicate\n");
    assert_eq!(errno(r), libc::EINVAL);
    assert!(
        fx.mount
            .status()
            .expect("status")
            .starts_with("seed=0 faults=0"),
        "nothing armed"
    );
}

#[test]
fn status_lists_faults_and_clear_removes_them() {
    let Some(fx) = fixture("status_lists_faults_and_clear_removes_them") else {
        return;
    };
    assert_eq!(fx.mount.command("seed 42").expect("seed"), "ok seed=42\n");
    let a = fx.mount.inject("lost file=a page=1").expect("inject");
    let b = fx
        .mount
        .inject("inject torn file=b off=0 len=16384 keep=512 count=always")
        .expect("inject");
    assert_eq!((a, b), (1, 2));
    let status = fx.mount.status().expect("status");
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines[0], "seed=42 faults=2");
    assert!(
        lines[1].starts_with("id=1 kind=lost file=a off=8192 len=8192 count=1"),
        "{status}"
    );
    assert!(
        lines[2].contains("keep=512 count=always skip=0 prob=1 matched=0 fired=0"),
        "{status}"
    );
    assert_eq!(
        fx.mount.command("clear 1").expect("clear"),
        "ok cleared=1\n"
    );
    assert!(fx
        .mount
        .status()
        .expect("status")
        .starts_with("seed=42 faults=1"));
    fx.mount.clear().expect("clear");
    assert!(fx
        .mount
        .status()
        .expect("status")
        .starts_with("seed=42 faults=0"));
}

#[test]
fn mount_start_finds_the_built_binary() {
    if !faultfs::fuse_or_skip("mount_start_finds_the_built_binary") {
        return;
    }
    let dir = test_dir();
    let (backing, mnt) = backing_and_mountpoint(dir.path());
    let mount = faultfs::Mount::start(&backing, &mnt).expect("binary found beside the test");
    assert_eq!(mount.inject("lost page=0").expect("inject"), 1);
    let canonical = mount.mountpoint().to_path_buf();
    mount.unmount().expect("unmount reports success");
    assert!(!faultfs::mount::is_mounted(&canonical));
}
