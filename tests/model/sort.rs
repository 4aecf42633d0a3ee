//! The Sort User through the simulation (issue #25 §3): sorts spilled to its tempdb file beside
//! the first data file, merged and their extents freed and reused, report nothing on a clean
//! device and remove the file; a write of a run that the device drops is found when the run is
//! merged back, a finding of the Sort User on the tempdb file, which is then kept.

use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Fault, Trigger};
use sqliosim::io::{Backend, FaultyBackend};
use sqliosim::page::ActorKind;
use sqliosim::sim::driver::simulate;
use sqliosim::sim::plan::SimPlan;

/// A small plan with one Sort User (4 MB tempdb file, runs of 16 pages, 3 runs a sort).
fn sort_plan() -> SimPlan {
    let mut plan = small_plan("/so".as_ref(), 4, Duration::from_millis(600));
    plan.journal = false;
    plan.stop_on_error = false;
    let s = &mut plan.sections.sort;
    s.user_count = 1;
    s.run_pages = 16;
    s.runs_per_merge = 3;
    s.temp_file_mb = 4;
    s.sort_delay_ms = 1;
    plan
}

fn said(sink: &MemorySink) -> Vec<String> {
    sink.messages()
        .into_iter()
        .filter(|m| m.user == "Sort User")
        .map(|m| m.text)
        .collect()
}

#[test]
fn clean_sorts_reuse_their_extents_report_nothing_and_remove_the_file() {
    let plan = sort_plan();
    let file = plan.tempdb_path(0).expect("a data file");
    let backend = FaultyBackend::stepped(11);
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    assert_eq!(sink.findings(), vec![], "clean sorts report nothing");
    let said = said(&sink);
    let end = said
        .iter()
        .find(|t| t.starts_with("sort user 0: "))
        .unwrap_or_else(|| panic!("no end line: {said:?}"));
    assert!(end.ends_with("clean; the file is removed"), "{end}");
    assert!(!end.contains(" 0 sorts"), "{end}");
    assert!(
        !end.contains(" 0 extents reused"),
        "no extent was reused: {end}"
    );
    assert!(!backend.exists(&file), "the clean tempdb file was left");
}

#[test]
fn a_run_write_the_device_drops_is_found_at_the_merge_and_the_file_kept() {
    let plan = sort_plan();
    let file = plan.tempdb_path(0).expect("a data file");
    let backend = FaultyBackend::stepped(12);
    backend.inject(
        Fault::LostWrite,
        Trigger::Page {
            path: file.clone(),
            page: 5,
        },
    );
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    assert_eq!(backend.fired().len(), 1, "the lost write fired");
    let found = sink.findings();
    assert!(
        found.iter().any(|f| f.page_id == 5),
        "page 5 of the tempdb file went unnoticed: {found:?}"
    );
    for f in &found {
        assert_eq!(f.path, file, "{f:?}");
        assert_eq!(f.actor, ActorKind::SortUser, "{f:?}");
        assert!(
            matches!(f.class, FindingClass::LostWrite | FindingClass::StaleRead),
            "{f:?}"
        );
    }
    assert!(
        backend.exists(&file),
        "the tempdb file with the finding was removed"
    );
}

/// A run write the device fails (EIO on the tempdb file) is a `write_error` finding of the Sort
/// User at that run, and the file is kept.
#[test]
fn a_run_write_the_device_fails_is_a_write_error_of_the_sort_user() {
    let plan = sort_plan();
    let file = plan.tempdb_path(0).expect("a data file");
    let backend = FaultyBackend::stepped(13);
    backend.inject(
        Fault::WriteEio,
        Trigger::Page {
            path: file.clone(),
            page: 5,
        },
    );
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    let found = sink.findings();
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(f.class, FindingClass::WriteError, "{f:?}");
    assert_eq!((f.actor, &f.path), (ActorKind::SortUser, &file), "{f:?}");
    assert_eq!(f.errno, Some(libc::EIO), "{f:?}");
    assert!(
        f.page_id <= 5 && 5 < f.page_id + u64::from(f.page_count),
        "{f:?}"
    );
    assert!(
        backend.exists(&file),
        "the tempdb file with the finding was removed"
    );
}

/// A page of the tempdb file read once as its earlier version (the device's stale read: the
/// zeros of its allocation, or the previous tenant of a reused extent) is a `stale_read` of the
/// Sort User there: the merge re-reads the page, as every reader does, and the re-read is
/// right, so the problem is transient. Before, the merge did not re-read, and called it a
/// lost write.
#[test]
fn a_tempdb_page_read_once_as_its_earlier_version_is_a_transient_stale_read() {
    let plan = sort_plan();
    let file = plan.tempdb_path(0).expect("a data file");
    let backend = FaultyBackend::stepped(14);
    for page in [3, 20, 40] {
        backend.inject(
            Fault::StaleRead,
            Trigger::Page {
                path: file.clone(),
                page,
            },
        );
    }
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    let fired = backend.fired();
    assert!(!fired.is_empty(), "no extent was reused under a stale read");
    let found = sink.findings();
    assert_eq!(found.len(), fired.len(), "{found:?} {fired:?}");
    for f in &found {
        assert_eq!((f.actor, &f.path), (ActorKind::SortUser, &file), "{f:?}");
        assert_eq!(f.class, FindingClass::StaleRead, "{f:?}");
        assert!(!f.persistent && !f.retries.is_empty(), "{f:?}");
        assert!(fired.iter().any(|x| x.page == f.page_id), "{f:?} {fired:?}");
    }
}

/// The Sort User's I/O is in the run's statistics: its own line among the actors, with the
/// bytes it wrote and read, and in the run's totals; in no file's line (the tempdb file is not
/// of the set). Before, it was in none of them.
#[test]
fn the_sort_users_io_is_in_the_actors_statistics_and_the_run_totals() {
    let mut plan = sort_plan();
    plan.random.users = 0;
    let backend = FaultyBackend::stepped(15);
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &backend, sink.clone()).expect("simulate");
    let s = &out.summary;
    let sort = s
        .actors
        .iter()
        .find(|a| a.actor == ActorKind::SortUser)
        .unwrap_or_else(|| panic!("no Sort User among {:?}", s.actors));
    assert!(sort.io.writes > 0 && sort.io.reads > 0, "{sort:?}");
    assert!(
        sort.io.bytes_written >= sort.io.writes * 16 * 8192,
        "{sort:?}"
    );
    let by_actors: u64 = s.actors.iter().map(|a| a.io.bytes_written).sum();
    assert_eq!(
        s.total.bytes_written, by_actors,
        "the totals miss an actor's writes"
    );
    let by_files: u64 = s.files.iter().map(|f| f.io.bytes_written).sum();
    assert_eq!(
        by_files + sort.io.bytes_written,
        s.total.bytes_written,
        "a file's line holds the tempdb file's writes"
    );
}
