//! A resume cut where it moves the killed run's backup streams aside, and a resume that
//! refuses, on real loop devices (issue #35): XFS with 4096-byte sectors and ext4 with
//! 512-byte ones, direct I/O on. A run with a Backup User (a full backup every 300 ms, a log
//! backup every 100 ms) is killed in its main phase once both streams are in place; then:
//!
//! - `run --resume` is SIGKILLed 0 to 80 ms after the first stream appears under its kept
//!   name (`sqliosim.RUNID.bak`): the journal of the killed run may still name the streams at
//!   their old names. `verify`, a short resume and `verify` again must be clean (exit 0, no
//!   finding) every time: a false `lost_file` for a stream was the defect.
//! - `run --resume` with a configuration naming a file the set lacks refuses (exit 2) and moves
//!   nothing: both streams stay at their names, and the same three steps are clean.
//!
//! Needs root (losetup, mkfs, mount); fails instead of skipping with SQLIOSIM_REQUIRE_LOOP=1.

use std::time::Duration;

use crate::crash_depth::{describe, device_with, say, Device};
use crate::cut_support::{cut, kept_stream, CutAt, Step, Trigger};
use rand::{Rng, SeedableRng};

/// Small files, a Backup User with frequent full and log backups.
const CONFIG: &str = "[CONFIG]\nStopOnError=TRUE\nTestCycles=1\nTestCycleDuration=60\n\
MaxMemoryMB=16\nNoBuffering=TRUE\nWriteThrough=FALSE\nDeleteFilesAtStartup=FALSE\n\
[RandomUser]\nUserCount=2\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
[BulkUpdateUser]\nUserCount=1\n\
[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay=300\nLogBackupInterval=100\n\
[File1]\nFileName=sqliosim.mdx\nInitialSize=16\nMaxSize=16\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
[File2]\nFileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

/// Resume cuts per device.
const CUTS: u64 = 4;

/// Kills a run of the set in its main phase once both streams are in place:
/// returns how it went.
fn killed_with_streams(dev: &Device, name: &str, seed: u64) -> String {
    let rig = &dev.rig;
    rig.clear();
    let mut child = rig.spawn(name, seed, &[], &[]);
    // Both streams in place in the main phase (a log backup of the initial update may come
    // and go before), however slow the machine.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !(crate::cut_support::log_text(&rig.log(name))
        .contains("Phase 'initial checkpoint' done")
        && rig.data.join("sqliosim.bak").is_file()
        && rig.data.join("sqliosim.trn").is_file())
    {
        assert!(
            std::time::Instant::now() < deadline && child.try_wait().ok().flatten().is_none(),
            "{}: the run never had both streams in its main phase",
            dev.name
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let at = CutAt {
        trigger: Trigger::File("sqliosim.trn"),
        delay: Duration::from_millis(100),
    };
    let c = cut(&mut child, &rig.log(name), &rig.data, at);
    for stream in ["sqliosim.bak", "sqliosim.trn"] {
        assert!(
            rig.data.join(stream).is_file(),
            "{}: no {stream} at the cut ({})",
            dev.name,
            describe(&c)
        );
    }
    describe(&c)
}

fn suite(fs: &str, sector: u32) {
    let Some(dev) = device_with(fs, sector, CONFIG) else {
        return;
    };
    let rig = &dev.rig;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(u64::from(sector));
    let mut failed = Vec::new();
    for i in 0..CUTS {
        let name = format!("streams{i}");
        let mut report = format!("resume streams: {} / cut at the rename {i}: ", dev.name);
        report += &killed_with_streams(&dev, &name, 100 + i);
        let resumed = format!("{name}-resume");
        let mut child = rig.spawn(
            &resumed,
            200 + i,
            &["--resume", "--cycles", "1", "--duration", "2"],
            &[],
        );
        let at = CutAt {
            trigger: Trigger::Kept("bak"),
            delay: Duration::from_millis(rng.random_range(0..=80)),
        };
        let c = cut(&mut child, &rig.log(&resumed), &rig.data, at);
        report += &format!("; resume {}", describe(&c));
        let mut steps = vec![rig.verify("verify")];
        steps.extend(rig.follow_up(&name, 300 + i));
        for s in &steps {
            report += &format!(" → {s}");
        }
        say(&report);
        if let Some(bad) = steps.iter().find(|s| !s.clean()) {
            failed.push(format!("{}: cut {i}: {bad}", dev.name));
        }
    }
    // A resume that refuses: a configuration that names a file the set lacks.
    killed_with_streams(&dev, "refused", 400);
    let wrong = rig.config.with_extension("wrong.ini");
    let text = std::fs::read_to_string(&rig.config).expect("config")
        + "[File3]\nFileName=extra.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n";
    std::fs::write(&wrong, text).expect("wrong config");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .args(["run", "--resume", "--config"])
        .arg(&wrong)
        .arg("--dir")
        .arg(&rig.data)
        .args(["--cycles", "1", "--duration", "1"])
        .output()
        .expect("run sqliosim");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}: the resume with a wrong configuration: {}",
        dev.name,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        kept_stream(&rig.data, "bak"),
        None,
        "a refused resume moved a stream"
    );
    let mut steps: Vec<Step> = vec![rig.verify("verify after the refusal")];
    steps.extend(rig.follow_up("refused", 500));
    say(&format!(
        "resume streams: {} / refused resume: {}",
        dev.name,
        steps
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" → ")
    ));
    if let Some(bad) = steps.iter().find(|s| !s.clean()) {
        failed.push(format!("{}: refused resume: {bad}", dev.name));
    }
    drop(dev);
    assert!(failed.is_empty(), "not clean:\n{}", failed.join("\n"));
}

#[test]
fn xfs_4k_a_resume_cut_at_its_stream_rename_and_a_refused_one_leave_verify_clean() {
    suite("xfs", 4096);
}

#[test]
fn ext4_512_a_resume_cut_at_its_stream_rename_and_a_refused_one_leave_verify_clean() {
    suite("ext4", 512);
}
