//! The allowed-tear rule (issue #21 §3) as a user meets it: `sqliosim verify` on the files a
//! power cut left. The cuts come from the in-memory model (a simulation on the faulty
//! backend with a volatile write cache, cut in its main phase), written out to a directory
//! as a rebooted machine would find them.
//!
//! A device of 4096-byte sectors tearing writes it never acknowledged at 4096: allowed tears,
//! counted, exit 0. The same device tearing inside a sector (at 512): torn writes, exit 1.
//! A lying device tearing writes it acknowledged (the journal holds them): exit 1.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::model_cut_support::{judge, lost_pages, plan, run_and_judge, Cutter, Judged};
use assert_cmd::Command;
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Keep, PowerCut};
use sqliosim::io::FaultyBackend;
use sqliosim::sim::plan::SimPlan;

/// The first cut of a run on a 4096-sector device (flushes lying from the initial
/// checkpoint on when `lie`) that `wanted` accepts, with its judgement.
fn find_cut(
    seed: u64,
    keep: Keep,
    lie: bool,
    wanted: impl Fn(&PowerCut, &Judged) -> bool,
) -> (SimPlan, PowerCut) {
    let plan = plan(seed, Duration::from_millis(600));
    let backend = FaultyBackend::new(seed);
    backend.set_dio_align(4096);
    backend.enable_volatile_cache();
    let mut sink = Cutter::new(&backend, seed, keep, 20, 300);
    if lie {
        let paths = plan.files.iter().map(|f| f.path.clone()).collect();
        sink = sink.lying_from("initial checkpoint", paths);
    }
    let mut found = None;
    run_and_judge(plan.clone(), &backend, Arc::new(sink), |cut| {
        if found.is_none() && wanted(&cut, &judge(&cut.backend, &plan)) {
            found = Some(cut);
        }
    });
    (plan, found.expect("no cut of the run showed the case"))
}

/// Writes the files of a cut into `dir` under their names.
fn write_out(cut: &PowerCut, plan: &SimPlan, dir: &Path) {
    let names = plan
        .files
        .iter()
        .map(|f| f.path.clone())
        .chain([crate::model_cut_support::journal()]);
    for path in names {
        let bytes = cut.backend.contents(&path).expect("file of the cut");
        std::fs::write(dir.join(path.file_name().expect("name")), bytes).expect("write");
    }
}

fn verify(dir: &Path) -> (i32, String) {
    let out = Command::cargo_bin("sqliosim")
        .expect("binary")
        .args(["verify", "--dir"])
        .arg(dir)
        .output()
        .expect("run verify");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

#[test]
fn unacknowledged_writes_torn_at_the_device_sector_are_allowed_counted_and_exit_0() {
    let (plan, cut) = find_cut(0xA1, Keep::Units(4096), false, |_, j| {
        j.allowed_tears > 0 && j.found.is_empty()
    });
    let dir = tempdir();
    write_out(&cut, &plan, dir.path());
    let (code, text) = verify(dir.path());
    assert_eq!(code, 0, "{text}");
    let tears = judge(&cut.backend, &plan).allowed_tears;
    let said = format!("{tears} torn write(s) allowed: writes never acknowledged as durable, torn at 4096-byte device sector boundaries");
    assert!(text.contains(&said), "{said} not in:\n{text}");
}

#[test]
fn a_tear_inside_a_4096_byte_sector_is_a_torn_write_exit_1() {
    let (plan, cut) = find_cut(0xA2, Keep::Units(512), false, |_, j| {
        j.found.iter().any(|f| f.class == FindingClass::TornWrite)
    });
    let dir = tempdir();
    write_out(&cut, &plan, dir.path());
    let (code, text) = verify(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("inside device sector"), "{text}");
}

#[test]
fn a_tear_of_an_acknowledged_write_is_a_finding_exit_1() {
    // A lost page the journal holds, torn (part of it kept): the device tore a write it had
    // acknowledged as durable.
    let (plan, cut) = find_cut(0xA3, Keep::Units(4096), true, |cut, j| {
        let lost = lost_pages(cut, &plan_data());
        j.found
            .iter()
            .any(|f| f.class == FindingClass::TornWrite && lost.contains_key(&f.page))
    });
    let dir = tempdir();
    write_out(&cut, &plan, dir.path());
    let (code, text) = verify(dir.path());
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("torn write at device sector"),
        "a tear at the sector boundary, of an acknowledged write: {text}"
    );
}

fn plan_data() -> std::path::PathBuf {
    Path::new(crate::model_cut_support::DIR).join("t.mdx")
}
