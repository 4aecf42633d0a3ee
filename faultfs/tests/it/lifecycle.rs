//! Daemon lifecycle: clean stop on SIGTERM, ENOTCONN after SIGKILL, no mount left behind.

use crate::support::*;
use faultfs::mount::is_mounted;
use std::path::Path;
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

#[test]
fn killed_daemon_gives_enotconn_and_guard_still_unmounts() {
    let Some(mut fx) = fixture("killed_daemon_gives_enotconn_and_guard_still_unmounts") else {
        return;
    };
    let f = fx.open_direct("x.dat");
    write_pages(&f, 1, 1);
    fx.mount.kill_daemon().expect("kill");
    assert_eq!(errno(read_page(&f, 0)), libc::ENOTCONN);
    drop(f);
    let mnt = fx.mount.mountpoint().to_path_buf();
    drop(fx);
    assert!(!faultfs::mount::is_mounted(&mnt), "mount left behind");
}

#[test]
fn sigterm_unmounts_and_exits_cleanly() {
    if !faultfs::fuse_or_skip("sigterm_unmounts_and_exits_cleanly") {
        return;
    }
    let dir = test_dir();
    let (backing, mnt) = backing_and_mountpoint(dir.path());
    let mnt = mnt.canonicalize().expect("canonical");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultfs"))
        .args([&backing, &mnt])
        .spawn()
        .expect("start faultfs");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !is_mounted(&mnt) && Instant::now() < deadline {
        sleep(Duration::from_millis(20));
    }
    assert!(is_mounted(&mnt), "mounted");
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(sent.expect("run kill").success());
    let status = child.wait().expect("wait for faultfs");
    assert!(status.success(), "clean exit after SIGTERM: {status}");
    assert!(!is_mounted(Path::new(&mnt)), "SIGTERM unmounted");
}

#[test]
fn daemon_that_cannot_mount_is_reported() {
    if !faultfs::fuse_or_skip("daemon_that_cannot_mount_is_reported") {
        return;
    }
    let dir = test_dir();
    let bin = Path::new(env!("CARGO_BIN_EXE_faultfs"));
    let missing = dir.path().join("no-such-backing");
    let err = faultfs::Mount::start_with_binary(bin, &missing, dir.path()).err();
    assert!(
        matches!(err, Some(faultfs::MountError::Exited(_))),
        "{err:?}"
    );
    assert!(!is_mounted(&dir.path().canonicalize().expect("canonical")));
}
