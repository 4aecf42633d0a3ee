//! The simulation through its real actors: clean runs stay clean, and faults injected by the
//! faulty backend are each reported with the right class at the right page.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Fault, Misdirect, Tear, Trigger};
use sqliosim::io::{Backend, DirectBackend, FaultyBackend};
use sqliosim::sim::driver::simulate;

/// Runs the simulation and checks that no worker thread panicked.
fn run(
    plan: sqliosim::sim::plan::SimPlan,
    backend: &dyn Backend,
    sink: Arc<MemorySink>,
) -> sqliosim::sim::driver::SimOutcome {
    let out = simulate(plan, backend, sink).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    out
}

#[test]
fn clean_run_on_a_real_file_has_no_findings_and_every_actor_does_io() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let plan = small_plan(dir.path(), 4, Duration::from_secs(2));
    let sink = Arc::new(MemorySink::default());
    let out = run(plan, &DirectBackend::new(), sink.clone());
    assert_eq!(sink.findings(), vec![], "a clean disk gives no finding");
    assert_eq!(out.findings, 0);
    let names: BTreeSet<String> = out
        .summary
        .actors
        .iter()
        .filter(|a| a.io.data_ops() > 0)
        .map(|a| a.name.clone())
        .collect();
    for actor in [
        "Random User",
        "Audit User",
        "Read Ahead User",
        "Bulk Update User",
        "Checkpoint",
        "Log Writer",
        "Initial Update",
    ] {
        assert!(names.contains(actor), "{actor} did no I/O: {names:?}");
    }
    let summaries = sink
        .messages()
        .iter()
        .filter(|m| m.text.starts_with("********** Final Summary for file"))
        .count();
    assert_eq!(summaries, 2, "one final summary per file");
}

fn page_target(path: &std::path::Path, page: u64) -> Trigger {
    Trigger::Page {
        path: path.to_path_buf(),
        page,
    }
}

/// A plan whose main phase only reads, so a fault hitting the initial update stays visible.
fn read_only_plan(dir: &std::path::Path) -> sqliosim::sim::plan::SimPlan {
    let mut plan = small_plan(dir, 8, Duration::from_millis(500));
    plan.journal = false;
    plan.random.write_ratio = 0.0;
    plan.bulk.users = 0;
    plan.files[0].shrinkable = false;
    plan
}

#[test]
fn every_injected_fault_is_reported_with_its_class_at_its_page() {
    let dir = PathBuf::from("/virtual");
    let plan = read_only_plan(&dir);
    let data = plan.files[0].path.clone();
    let backend = FaultyBackend::stepped(7);
    // One fault per 64-page request of the initial update, so none hides another.
    let faults = [
        (10, Fault::LostWrite, FindingClass::LostWrite),
        (80, Fault::TornWrite(Tear::At4096), FindingClass::TornWrite),
        (
            150,
            // Lands inside its own request: see tests/runs/fault_injection.rs.
            Fault::MisdirectedWrite(Misdirect::Page(140)),
            FindingClass::LostWrite,
        ),
        (220, Fault::BitFlip(None), FindingClass::BitRot),
        (
            290,
            Fault::ZeroedSector(Some(3)),
            FindingClass::ZeroedSectors,
        ),
        (360, Fault::ReadEio, FindingClass::ReadError),
        (430, Fault::WriteEio, FindingClass::WriteError),
        (
            500,
            Fault::ShortRead { silent: true },
            FindingClass::ShortRead,
        ),
    ];
    for (page, fault, _) in &faults {
        backend.inject(fault.clone(), page_target(&data, *page));
    }
    let sink = Arc::new(MemorySink::default());
    run(plan, &backend, sink.clone());
    // A finding about a whole request counts for the injected page inside it.
    let found: BTreeSet<(u64, FindingClass)> = sink
        .findings()
        .iter()
        .map(|f| {
            let page = faults
                .iter()
                .map(|(p, _, _)| *p)
                .find(|p| {
                    f.page_count > 1 && *p >= f.page_id && *p < f.page_id + u64::from(f.page_count)
                })
                .unwrap_or(f.page_id);
            (page, f.class)
        })
        .collect();
    let mut expected: BTreeSet<(u64, FindingClass)> =
        faults.iter().map(|(p, _, c)| (*p, *c)).collect();
    expected.insert((140, FindingClass::MisdirectedWrite));
    assert_eq!(found, expected, "fired: {:#?}", backend.fired());
    assert_eq!(backend.armed(), 0, "every armed fault fired");
}

#[test]
fn stop_on_error_stops_at_the_first_finding() {
    let dir = PathBuf::from("/virtual");
    let mut plan = read_only_plan(&dir);
    plan.stop_on_error = true;
    plan.cycles = 3;
    plan.cycle_duration = Duration::from_secs(30);
    let data = plan.files[0].path.clone();
    let backend = FaultyBackend::stepped(9);
    backend.inject(Fault::BitFlip(None), page_target(&data, 33));
    let sink = Arc::new(MemorySink::default());
    let out = run(plan, &backend, sink.clone());
    assert!(out.findings >= 1);
    assert_eq!(out.cycles, 1, "no further cycle starts after the error");
    assert_eq!(out.stopped, sqliosim::sim::control::stop::StopReason::Error);
    let phases: Vec<String> = sink
        .messages()
        .iter()
        .filter(|m| m.func == "Cycle::Phase")
        .map(|m| m.text.clone())
        .collect();
    assert!(
        !phases
            .iter()
            .any(|p| p.contains("final checkpoint") || p.contains("audit")),
        "the cycle did not go on after the error: {phases:?}"
    );
}

#[test]
fn shrink_and_grow_change_the_file_size_without_false_alarms() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let plan = small_plan(dir.path(), 2, Duration::from_secs(3));
    let path = plan.files[0].path.clone();
    let sink = Arc::new(MemorySink::default());
    let out = run(plan, &DirectBackend::new(), sink.clone());
    assert_eq!(out.findings, 0, "{:#?}", sink.findings());
    let resizes: Vec<String> = sink
        .messages()
        .iter()
        .filter(|m| m.user == "Shrink User")
        .map(|m| m.text.clone())
        .collect();
    assert!(!resizes.is_empty(), "the shrink user resized the file");
    let len = std::fs::metadata(&path).expect("stat").len();
    assert!(
        resizes.iter().any(|r| r.contains("grew")) || len != 2 * 1024 * 1024,
        "{resizes:?}"
    );
    let _ = DirectBackend::new().exists(&path);
}

#[test]
fn slow_ios_are_throttled_and_reported_once_as_long() {
    let dir = PathBuf::from("/virtual");
    let mut plan = small_plan(&dir, 2, Duration::from_secs(2));
    plan.journal = false;
    plan.target_io = Duration::from_millis(1);
    plan.long_io = Duration::from_millis(300);
    let data = plan.files[0].path.clone();
    let backend = FaultyBackend::stepped(3);
    // Every request is slow: the running average rises above the 1 ms target.
    backend.set_random(1.0, vec![Fault::Latency(Duration::from_millis(5))]);
    // One request is stuck for much longer than the long-I/O limit.
    backend.inject(
        Fault::Latency(Duration::from_millis(1500)),
        page_target(&data, 40),
    );
    let sink = Arc::new(MemorySink::default());
    let out = run(plan, &backend, sink.clone());
    assert_eq!(out.findings, 0, "slowness is not corruption");
    let throttled: u64 = out.summary.files.iter().map(|f| f.throttled).sum();
    assert!(throttled > 0, "I/O was throttled");
    let long: Vec<String> = sink
        .messages()
        .iter()
        .filter(|m| m.func == "CheckForLongIO")
        .map(|m| m.text.clone())
        .collect();
    // SQLIOSim's view shows these as `Error: 0x00000000`: the XML log writes errno 0 so.
    assert!(sink
        .messages()
        .iter()
        .filter(|m| m.func == "CheckForLongIO")
        .all(|m| m.errno == Some(0)));
    assert!(
        long.iter()
            .any(|t| t.contains("outstanding for more than 0.3 sec")),
        "{long:?}"
    );
}

#[test]
fn max_outstanding_io_caps_concurrency_and_scatter_gather_decides_request_shape() {
    for scatter in [true, false] {
        let dir = PathBuf::from("/virtual");
        let mut plan = small_plan(&dir, 2, Duration::from_millis(800));
        plan.journal = false;
        plan.max_outstanding_io = 2;
        plan.scatter_gather = scatter;
        let sink = Arc::new(MemorySink::default());
        let out = run(plan, &FaultyBackend::stepped(5), sink);
        let data = &out.summary.files[0];
        assert!(
            data.io_request_blocks <= 2,
            "at most 2 I/Os outstanding, saw {}",
            data.io_request_blocks
        );
        let vectored = data.io.scatter_reads + data.io.gather_writes;
        if scatter {
            assert!(vectored > 0, "multi-page runs are vectored requests");
        } else {
            assert_eq!(vectored, 0, "one request per page");
            assert!(data.io.reads > 0 && data.io.writes > 0);
        }
    }
}

#[test]
fn through_the_io_service_max_outstanding_io_is_its_depth_and_the_run_stays_clean() {
    use sqliosim::io::aio::RingKind;
    use sqliosim::io::ServiceBackend;
    for kind in [RingKind::Uring, RingKind::Psync] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let mut plan = small_plan(dir.path(), 2, Duration::from_millis(800));
        plan.max_outstanding_io = 2;
        let backend = ServiceBackend::start(kind, 2, false).expect("service");
        let sink = Arc::new(MemorySink::default());
        let out = run(plan, &backend, sink.clone());
        assert_eq!(
            sink.findings(),
            vec![],
            "{kind:?}: a clean disk gives no finding"
        );
        let data = &out.summary.files[0];
        assert!(data.io.reads > 0 && data.io.gather_writes > 0, "{kind:?}");
        let hw = backend.service().high_water();
        assert!((1..=2).contains(&hw), "{kind:?}: {hw} in flight, depth 2");
    }
}

#[test]
fn random_stale_reads_are_each_reported_as_transient_stale_reads_and_nothing_else() {
    let dir = PathBuf::from("/virtual");
    let mut plan = small_plan(&dir, 2, Duration::from_millis(1500));
    plan.journal = false;
    plan.cycles = 2;
    plan.files[0].shrinkable = false;
    let backend = FaultyBackend::stepped(11);
    let data = plan.files[0].path.clone();
    backend.set_random_on(data, 0.01, vec![Fault::StaleRead]);
    let sink = Arc::new(MemorySink::default());
    run(plan, &backend, sink.clone());
    let fired: BTreeSet<u64> = backend
        .fired()
        .iter()
        .filter(|f| f.fault == Fault::StaleRead)
        .map(|f| f.page)
        .collect();
    let found: BTreeSet<u64> = sink.findings().iter().map(|f| f.page_id).collect();
    assert!(!fired.is_empty(), "some stale reads fired");
    assert!(
        sink.findings()
            .iter()
            .all(|f| f.class == FindingClass::StaleRead && !f.persistent),
        "{:#?}",
        sink.findings()
    );
    assert_eq!(
        found, fired,
        "every stale read reported, at its page, and nothing else"
    );
}

#[test]
fn stale_reads_of_the_log_are_transient_log_findings_and_never_data_findings() {
    let dir = PathBuf::from("/virtual");
    let mut plan = small_plan(&dir, 2, Duration::from_millis(1500));
    plan.journal = false;
    let log = plan.files[1].path.clone();
    let backend = FaultyBackend::stepped(13);
    // Packed 60 KB log blocks make few log reads: 5 % of them fire, so that some do in the run.
    backend.set_random_on(log.clone(), 0.05, vec![Fault::StaleRead]);
    let sink = Arc::new(MemorySink::default());
    run(plan, &backend, sink.clone());
    let fired = backend
        .fired()
        .iter()
        .filter(|f| f.fault == Fault::StaleRead)
        .count();
    let findings = sink.findings();
    assert!(fired > 0, "stale reads of the log fired");
    assert!(!findings.is_empty(), "the log reader noticed");
    for f in &findings {
        assert_eq!(
            (f.class, f.persistent, &f.path),
            (FindingClass::LogCorruption, false, &log),
            "{f:#?}"
        );
    }
}

/// Average pages per request of `actor` (reads or writes), and the pages it moved.
fn pages_per_request(
    out: &sqliosim::sim::driver::SimOutcome,
    actor: &str,
    reads: bool,
) -> (f64, u64) {
    let a = out.summary.actors.iter().find(|a| a.name == actor);
    let io = &a.unwrap_or_else(|| panic!("{actor} did no I/O")).io;
    let (bytes, requests) = if reads {
        (io.bytes_read, io.reads + io.scatter_reads)
    } else {
        (io.bytes_written, io.writes + io.gather_writes)
    };
    let pages = bytes / 8192;
    (pages as f64 / requests.max(1) as f64, pages)
}

/// IoGeneration's caps hold: a 200-page read-ahead and a 100-page bulk update are split into
/// requests of at most the generation's read-ahead (64) and gather (32 in 2014, 128 in 2016)
/// pages, and nothing is dropped (more pages move than one cap's worth).
#[test]
fn request_sizes_follow_the_generation_caps() {
    use crate::sim_support::batch;
    use sqliosim::config::IoGeneration;
    for generation in [IoGeneration::Sql2014, IoGeneration::Sql2016] {
        let dir = PathBuf::from("/virtual");
        let mut plan = small_plan(&dir, 4, Duration::from_millis(600));
        plan.journal = false;
        plan.read_ahead = batch(1, 200, 200);
        plan.bulk = batch(1, 100, 100);
        plan.caps = generation.caps();
        let out = run(
            plan,
            &FaultyBackend::stepped(9),
            Arc::new(MemorySink::default()),
        );
        let (ra, ra_pages) = pages_per_request(&out, "Read Ahead User", true);
        assert!(
            ra <= 64.0 && ra_pages > 200,
            "{generation}: read-ahead {ra} pages/request, {ra_pages} pages"
        );
        let (bu, bu_pages) = pages_per_request(&out, "Bulk Update User", false);
        let cap = generation.caps().gather_pages as f64;
        assert!(
            bu <= cap && bu_pages > 100,
            "{generation}: bulk {bu} pages/request, {bu_pages} pages"
        );
        if generation == IoGeneration::Sql2016 {
            assert!(bu > 32.0, "2016 gathers more than 2014's 32 pages: {bu}");
        }
    }
}

/// `CPUSimulation=TRUE` (issue #24 §4): each random user spends CPUCyclesMin..=CPUCyclesMax
/// rounds of busy work per cycle and says how many in its closing line; off, it says nothing.
#[test]
fn cpu_simulation_spends_busy_rounds_per_random_user_cycle() {
    let run = |on: bool| {
        let mut plan = small_plan(&PathBuf::from("/virtual"), 2, Duration::from_millis(400));
        plan.journal = false;
        plan.random.users = 2;
        plan.sections.random.cpu_simulation = on;
        plan.sections.random.cpu_cycles_min = 1000;
        plan.sections.random.cpu_cycles_max = 2000;
        let sink = Arc::new(MemorySink::default());
        let out = simulate(plan, &FaultyBackend::stepped(9), sink.clone()).expect("simulate");
        assert!(!out.worker_panicked);
        assert_eq!(sink.findings(), vec![]);
        sink.messages()
            .iter()
            .filter_map(|m| {
                m.text
                    .split_once(": CPU simulation: ")
                    .map(|(_, t)| t.to_string())
            })
            .collect::<Vec<_>>()
    };
    let lines = run(true);
    assert_eq!(lines.len(), 2, "one line per random user: {lines:?}");
    for l in &lines {
        let mut n = l.split_whitespace();
        let rounds: u64 = n.next().and_then(|x| x.parse().ok()).expect("rounds");
        let cycles: u64 = l
            .split("over ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|x| x.parse().ok())
            .expect("cycles");
        assert!(cycles > 0, "{l}");
        assert!(
            (1000 * cycles..=2000 * cycles).contains(&rounds),
            "{rounds} rounds over {cycles} cycles, 1000..=2000 each: {l}"
        );
    }
    assert!(run(false).is_empty());
}
