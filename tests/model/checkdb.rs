//! The DBCC User through the simulation (issue #25 §2): DBCC CHECKDB against a sparse
//! copy-on-write snapshot of the data file. A clean check over a busy file copies pre-images
//! on write, reads the pages written during the check from their copies at their snapshot-time
//! generation, reports nothing and removes the snapshot file; a hole of the snapshot file that
//! does not read as zeros is `hole_not_zeros`, and a copy the device drops a lost write, each a
//! finding of the DBCC User on the snapshot file, which is then kept.

use std::sync::Arc;
use std::time::Duration;

use crate::common::number_after;
use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Fault, Trigger};
use sqliosim::io::{Backend, FaultyBackend};
use sqliosim::page::ActorKind;
use sqliosim::sim::driver::simulate;
use sqliosim::sim::plan::SimPlan;

/// A small plan (1 MB data file) with one DBCC User whose check reads 8 pages every 20 ms, so
/// that the other users write while it runs.
fn check_plan() -> SimPlan {
    let mut plan = small_plan("/db".as_ref(), 1, Duration::from_millis(1500));
    plan.journal = false;
    plan.stop_on_error = false;
    let s = &mut plan.sections.check_db;
    s.user_count = 1;
    s.read_ahead_pages = 8;
    s.read_delay_ms = 20;
    s.check_delay_ms = 10;
    plan
}

fn said(sink: &MemorySink) -> Vec<String> {
    sink.messages()
        .into_iter()
        .filter(|m| m.user == "DBCC User")
        .map(|m| m.text)
        .collect()
}

#[test]
fn a_clean_check_sees_pages_written_meanwhile_at_their_snapshot_generation_and_removes_its_file() {
    let plan = check_plan();
    let snap = plan.snapshot_path(0, 0);
    let backend = FaultyBackend::stepped(21);
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    assert_eq!(sink.findings(), vec![], "a clean check reports nothing");
    let said = said(&sink);
    let ends: Vec<&String> = said
        .iter()
        .filter(|t| t.starts_with("dbcc user 0: check"))
        .collect();
    assert!(!ends.is_empty(), "no check ended: {said:?}");
    let whole = ends
        .iter()
        .find(|t| !t.contains("ended by the end of the phase"))
        .unwrap_or_else(|| panic!("no check ran whole: {ends:?}"));
    assert!(
        whole.ends_with("clean; the snapshot's files are removed"),
        "{whole}"
    );
    assert_eq!(
        number_after(whole, "read"),
        127,
        "every page of the 1 MB file: {whole}"
    );
    // Pages written during the check were copied first, and the check read them from their
    // copies at the generation they had when it began (a newer one on the source would be a
    // finding).
    assert!(
        number_after(whole, "(") > 0,
        "no page read from its copy: {whole}"
    );
    assert!(
        number_after(whole, "t.mdx_MSSQL_DBCC0:") > 0,
        "nothing copied on write: {whole}"
    );
    assert!(!backend.exists(&snap), "the clean snapshot file was left");
}

#[test]
fn a_hole_of_the_snapshot_that_reads_as_non_zero_is_found_and_the_file_kept() {
    let mut plan = check_plan();
    // Nothing writes the data file during the check: every page of the snapshot is a hole.
    plan.random.users = 0;
    plan.bulk.users = 0;
    plan.files[0].shrinkable = false;
    let snap = plan.snapshot_path(0, 0);
    let backend = FaultyBackend::stepped(22);
    backend.inject(
        Fault::BitFlip(Some(5000 * 8)),
        Trigger::Page {
            path: snap.clone(),
            page: 40,
        },
    );
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    assert_eq!(backend.fired().len(), 1, "the flip fired");
    let found = sink.findings();
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(f.class, FindingClass::HoleNotZeros, "{f:?}");
    assert_eq!(
        (f.actor, &f.path, f.page_id),
        (ActorKind::DbccUser, &snap, 40),
        "{f:?}"
    );
    assert!(
        backend.exists(&snap),
        "the snapshot file with the finding was removed"
    );
    let said = said(&sink);
    assert!(
        said.iter().any(|t| t.contains("checks no more")),
        "the user went on checking over its evidence: {said:?}"
    );
}

#[test]
fn a_copy_the_device_drops_is_a_lost_write_of_the_dbcc_user_on_the_snapshot() {
    let plan = check_plan();
    let snap = plan.snapshot_path(0, 0);
    let backend = FaultyBackend::stepped(23);
    for page in 1..128 {
        backend.inject(
            Fault::LostWrite,
            Trigger::Page {
                path: snap.clone(),
                page,
            },
        );
    }
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    let fired = backend.fired();
    assert!(!fired.is_empty(), "no copy was written");
    let found = sink.findings();
    assert!(
        !found.is_empty(),
        "{} dropped copies went unnoticed",
        fired.len()
    );
    for f in &found {
        assert_eq!((f.actor, &f.path), (ActorKind::DbccUser, &snap), "{f:?}");
        assert_eq!(f.class, FindingClass::LostWrite, "{f:?}");
        assert!(
            fired.iter().any(|x| x.page == f.page_id),
            "a finding where no fault fired: {f:?} {fired:?}"
        );
    }
    assert!(
        backend.exists(&snap),
        "the snapshot file with the finding was removed"
    );
}

/// The DBCC User's reads are in the statistics: the reads of the data file in its line, those
/// of the snapshot file in the run's totals only; the writers' copies into the snapshot too.
#[test]
fn the_checks_reads_and_the_copies_are_in_the_statistics() {
    let plan = check_plan();
    let backend = FaultyBackend::stepped(24);
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &backend, sink.clone()).expect("simulate");
    let s = &out.summary;
    let dbcc = s
        .actors
        .iter()
        .find(|a| a.actor == ActorKind::DbccUser)
        .unwrap_or_else(|| panic!("no DBCC User among {:?}", s.actors));
    // At least one whole check: 127 pages of the data file, in reads of 8 pages.
    assert!(
        dbcc.io.reads >= 16 && dbcc.io.bytes_read >= 127 * 8192,
        "{dbcc:?}"
    );
    let copies = said(&sink)
        .iter()
        .filter(|t| t.starts_with("dbcc user 0: check"))
        .map(|t| number_after(t, "t.mdx_MSSQL_DBCC0:"))
        .sum::<u64>();
    let written_by_actors: u64 = s.actors.iter().map(|a| a.io.bytes_written).sum();
    let written_to_files: u64 = s.files.iter().map(|f| f.io.bytes_written).sum();
    assert!(copies > 0);
    assert!(
        written_by_actors >= written_to_files + copies * 8192,
        "the copies' {copies} pages are not in the actors' writes: {written_by_actors} of which {written_to_files} to the files"
    );
    assert_eq!(s.total.bytes_written, written_by_actors);
}
