//! `sqliosim restore` (the offline restore, issue #25 §1) through the kernel on a faultfs mount:
//! a run with a BackupUser leaves its stream on the mount, then faultfs drops the restore's
//! write that covers page 100 of the copy, and the read-back reports lost writes there and
//! nothing anywhere else (exit 1, the copy kept); and on a filesystem that refuses O_DIRECT
//! the restore goes buffered and says so (exit 0). Skipped where FUSE is unavailable, as the
//! other faultfs tests are.

use std::process::Output;

use crate::fuse_support::report::stderr_findings;
use crate::fuse_support::{config_text, describe, Rig, Shape};

const ONE_CYCLE: Shape = Shape {
    scatter_gather: false,
    cycles: 1,
};

const BACKUP: &str = "\n[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay=100\n";

/// A rig whose run left a finished stream on the mount (`config` edited by `edit`): the run
/// goes on until its first backup finished (the stream's name appears only then, renamed from
/// the partial one), however long that takes on a busy machine, and is then stopped by SIGINT.
fn rig_with_stream(name: &str, daemon: &[&str], edit: fn(String) -> String) -> Rig {
    let rig = Rig::with_daemon_args(name, ONE_CYCLE, daemon);
    rig.set_config(&edit(config_text(ONE_CYCLE) + BACKUP));
    // Setup opens the stream's name as the Backup User would and removes it again: a file
    // there for a moment, empty.
    let stream = |r: &Rig| std::fs::metadata(r.backing.join("sqliosim.bak")).map_or(0, |m| m.len());
    let out = rig.run_until(|r| stream(r) > 0);
    assert_eq!(out.status.code(), Some(130), "the run: {}", describe(&out));
    rig
}

fn restore(rig: &Rig) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .arg("restore")
        .arg(rig.data_dir().join("sqliosim.bak"))
        .output()
        .expect("sqliosim restore")
}

#[test]
fn a_lost_write_of_an_offline_restore_through_the_kernel_is_found_on_its_copy() {
    if !faultfs::fuse_or_skip("restore_fuse") {
        return;
    }
    let rig = rig_with_stream("restore-offline-lost", &[], |t| t);
    let id = rig.inject("lost file=sqliosim.bak.file0.restored page=100");
    let out = restore(&rig);
    let status = rig.mount.status().unwrap_or_default();
    let context = || format!("{}\n--- faultfs\n{status}", describe(&out));
    assert_eq!(out.status.code(), Some(1), "{}", context());
    assert!(rig.fired(id) > 0, "the fault never fired: {}", context());
    let found = stderr_findings(&String::from_utf8_lossy(&out.stderr));
    assert!(
        found.iter().any(|f| f.covers(100)),
        "page 100 of the copy went unnoticed: {found:?}\n{}",
        context()
    );
    for f in &found {
        assert_eq!(f.class, "lost_write", "{f:?}\n{}", context());
        assert!(
            f.path.ends_with("sqliosim.bak.file0.restored"),
            "a finding off the copy: {f:?}\n{}",
            context()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{} bad page(s)", found.len())),
        "{}",
        context()
    );
    assert!(
        rig.backing.join("sqliosim.bak.file0.restored").is_file(),
        "the copy was not kept"
    );
}

#[test]
fn an_offline_restore_where_direct_io_is_refused_goes_buffered_and_says_so() {
    if !faultfs::fuse_or_skip("restore_fuse") {
        return;
    }
    let buffered = |t: String| t.replace("NoBuffering=TRUE", "NoBuffering=FALSE");
    let rig = rig_with_stream("restore-offline-nodirect", &["--refuse-direct"], buffered);
    let out = restore(&rig);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("refuses direct I/O") && stdout.contains("clean"),
        "{}",
        describe(&out)
    );
    assert!(rig.backing.join("sqliosim.bak.file0.restored").is_file());
}
