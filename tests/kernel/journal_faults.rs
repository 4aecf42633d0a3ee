//! The journal itself on a faulty disk: the real `sqliosim` binary keeps its journal on a
//! faultfs mount that loses or tears one of the journal's own writes, and `sqliosim verify`
//! must say so — name the journal, the offset and what is wrong there, and that the durability
//! check is only partial from there — instead of trusting what is left of it, without
//! accusing the data files.
//!
//! (a) A lost journal write, the journal on its own device (`--journal-dir` on the mount, the
//!     data files elsewhere): not a finding against the data, exit 0, the check partial.
//! (b) A torn journal write, the journal on the device under test (beside the data files on
//!     the mount): the device tore a write it acknowledged as durable, which is a finding
//!     against the device (exit 1) — but not against any data page.
//!
//! Skipped, with a SKIPPED line, where FUSE is unavailable (failing instead when
//! SQLIOSIM_REQUIRE_FUSE=1, as in CI).

use std::path::Path;
use std::process::Output;

use crate::crash_support::{bin, small_config};
use crate::fuse_support::{describe, Rig, Shape};

const JOURNAL: &str = "sqliosim.journal";

/// `sqliosim run` of one 3-second cycle with O_DSYNC data writes, so the journal thread
/// appends a batch every few milliseconds.
fn run(config: &Path, data: &Path, journal_dir: Option<&Path>) -> Output {
    let mut cmd = crate::crash_support::run_cmd(config, data);
    // The error log outside the data directory (faultfs has no subdirectories for dumps).
    cmd.args(["--seed", "31", "--log"])
        .arg(data.with_extension("run.log.xml"));
    if let Some(j) = journal_dir {
        cmd.arg("--journal-dir").arg(j);
    }
    cmd.output().expect("run sqliosim")
}

fn verify(data: &Path, journal_dir: Option<&Path>) -> Output {
    let mut cmd = bin();
    cmd.args(["verify", "--dir"]).arg(data);
    cmd.arg("--log").arg(data.with_extension("verify.log.xml"));
    if let Some(j) = journal_dir {
        cmd.arg("--journal-dir").arg(j);
    }
    cmd.output().expect("run sqliosim verify")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What every damaged-journal verdict must say: the journal by name, the offset, that the
/// check is partial from there; and never that the damage is an ordinary torn tail.
fn assert_journal_damage_told(out: &Output, what: &[&str]) {
    let text = stdout(out);
    // Shown with --nocapture: what a user sees.
    println!("{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("JOURNAL DAMAGED"))
        .unwrap_or_else(|| panic!("no JOURNAL DAMAGED line:\n{}", describe(out)));
    assert!(line.contains(JOURNAL), "{line}");
    assert!(line.contains(" at offset "), "{line}");
    assert!(
        what.iter().any(|w| line.contains(w)),
        "want one of {what:?} in: {line}"
    );
    assert!(
        text.contains("The durability check is PARTIAL"),
        "{}",
        describe(out)
    );
    assert!(!text.contains("torn tail ignored"), "{}", describe(out));
    // No page of a data or log file is accused.
    let accused = crate::crash_support::findings(out);
    assert!(accused.is_empty(), "{accused:?}\n{}", describe(out));
}

#[test]
fn a_lost_journal_write_off_the_device_under_test_makes_verify_partial_not_a_finding() {
    if !faultfs::fuse_or_skip("journal_faults::lost") {
        return;
    }
    let rig = Rig::new("journal-lost", Shape::default());
    let data = rig.log_dir().join("data");
    std::fs::create_dir(&data).expect("mkdir data");
    let config = small_config(&data, 1, 3, true);
    // The Start record and three batches land; the fourth batch is acknowledged and lost.
    let id = rig.inject(&format!("lost file={JOURNAL} skip=4"));
    let out = run(&config, &data, Some(rig.data_dir()));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(rig.fired(id), 1, "the journal's lost write never happened");
    let out = verify(&data, Some(rig.data_dir()));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_journal_damage_told(&out, &["zeros", "lost"]);
    let text = stdout(&out);
    assert!(
        text.contains("not on the device under test"),
        "{}",
        describe(&out)
    );
    assert!(text.contains("Verdict: CLEAN"), "{}", describe(&out));
}

#[test]
fn a_torn_journal_write_on_the_device_under_test_is_a_finding_against_the_device_only() {
    if !faultfs::fuse_or_skip("journal_faults::torn") {
        return;
    }
    let rig = Rig::new("journal-torn", Shape::default());
    let config = small_config(rig.log_dir(), 1, 3, true);
    // A batch of more than 512 bytes keeps only its first 512; appends go on after it.
    let id = rig.inject(&format!("torn file={JOURNAL} keep=512 skip=2"));
    let out = run(&config, rig.data_dir(), None);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(rig.fired(id), 1, "the journal's torn write never happened");
    let out = verify(rig.data_dir(), None);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_journal_damage_told(&out, &["checksum", "zeros", "not a record"]);
    let text = stdout(&out);
    assert!(
        text.contains("on the device under test"),
        "{}",
        describe(&out)
    );
    assert!(
        text.contains("Verdict: 1 INTEGRITY ERROR(S) found"),
        "{}",
        describe(&out)
    );
}
