//! Findings of every class built from real page bytes, and a run that logs them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sqliosim::events::{Event, EventSink};
use sqliosim::findings::{Finding, FindingClass, HistoryEntry, Message, Severity};
use sqliosim::page::sectors::expected_image;
use sqliosim::page::{
    verify, ActorKind, Expect, ExpectedState, PageStamp, Verdict, PAGE_SIZE, SECTOR_SIZE,
};
use sqliosim::report::{Evidence, EvidenceOptions, LogClock, RunInfo};
use sqliosim::stats::{DepthSummary, FileMeta, OpKind, PhaseDepth, RunStats, Summary, ThreadStats};

pub const RUN: u64 = 0x5EED_0000_0000_0001;
pub const FILE_ID: u32 = 1;
pub const T0: u64 = 1_764_400_000_000_000;

pub fn page(page_id: u64, generation: u64) -> Vec<u8> {
    page_of(RUN, FILE_ID, page_id, generation)
}

pub fn page_of(run_id: u64, file_id: u32, page_id: u64, generation: u64) -> Vec<u8> {
    PageStamp {
        run_id,
        file_id,
        page_id,
        generation,
        lsn: generation * 100,
        writer_kind: ActorKind::Checkpoint,
        writer_id: 2,
        write_time_us: T0 + generation,
    }
    .image()
}

fn written(g: u64) -> ExpectedState {
    ExpectedState::Written { generation: g }
}

/// A finding for `received` read at `page_id` when generation `g` was expected.
pub fn finding(
    seq: u64,
    page_id: u64,
    state: ExpectedState,
    received: Vec<u8>,
    persistent: bool,
) -> Finding {
    let verdict = verify(&received, &Expect::known(RUN, FILE_ID, page_id, state));
    let header = sqliosim::page::layout::read_stamp(&received);
    let good = expected_image(
        (RUN, FILE_ID, page_id),
        state.min_acceptable(),
        header.as_ref(),
    );
    let retries = if persistent {
        vec![verdict.clone(); 15]
    } else {
        vec![
            verdict.clone(),
            Verdict::Ok {
                generation: state.min_acceptable(),
            },
        ]
    };
    let mut f = Finding::page(
        42,
        PathBuf::from("/data/sqliosim.mdx"),
        FILE_ID,
        page_id,
        ActorKind::RandomUser,
        3,
        verdict,
    );
    f.seq = seq;
    f.time_us = T0 + seq * 1_000_000;
    f.class = FindingClass::from_verdict(f.verdict.kind(), persistent);
    f.expected = Some(state);
    f.retries = retries;
    f.persistent = persistent;
    f.received_header = header;
    f.history = vec![
        HistoryEntry {
            time_us: T0 - 2000,
            op: "write".into(),
            actor: ActorKind::Checkpoint,
            generation: state.min_acceptable(),
            ok: true,
        },
        HistoryEntry {
            time_us: T0 - 1000,
            op: "fsync".into(),
            actor: ActorKind::Checkpoint,
            generation: 0,
            ok: true,
        },
    ];
    f.received = Some(received);
    f.expected_image = Some(good);
    f
}

/// One finding of every class, each from real page bytes where the class has any.
pub fn every_class() -> Vec<Finding> {
    let mut v = Vec::new();
    let mut seq = 0;
    let mut add = |mut f: Finding, class: FindingClass| {
        seq += 1;
        f.seq = seq;
        f.time_us = T0 + seq * 1_000_000;
        assert_eq!(
            f.class, class,
            "fixture for {class:?} gives {:?}",
            f.verdict
        );
        v.push(f);
    };
    add(
        finding(0, 10, written(5), page(10, 4), true),
        FindingClass::LostWrite,
    );
    add(
        finding(0, 11, written(5), page(11, 4), false),
        FindingClass::StaleRead,
    );
    let mut torn = page(12, 5);
    torn[8 * SECTOR_SIZE..].copy_from_slice(&page(12, 4)[8 * SECTOR_SIZE..]);
    add(
        finding(
            0,
            12,
            ExpectedState::InFlight { old: 4, new: 5 },
            torn,
            true,
        ),
        FindingClass::TornWrite,
    );
    add(
        finding(0, 13, written(2), page(14, 2), true),
        FindingClass::MisdirectedWrite,
    );
    let mut rot = page(15, 3);
    rot[1000] ^= 0x10;
    add(finding(0, 15, written(3), rot, true), FindingClass::BitRot);
    let mut zeroed = page(16, 3);
    zeroed[3 * SECTOR_SIZE..6 * SECTOR_SIZE].fill(0);
    add(
        finding(0, 16, written(3), zeroed, true),
        FindingClass::ZeroedSectors,
    );
    let garbage: Vec<u8> = (0..PAGE_SIZE).map(|i| (i * 7 + 13) as u8).collect();
    add(
        finding(0, 17, written(3), garbage, true),
        FindingClass::Garbage,
    );
    add(
        finding(0, 18, written(3), page_of(RUN + 1, FILE_ID, 18, 3), true),
        FindingClass::ForeignRun,
    );
    add(
        finding(0, 19, written(3), page(19, 9), true),
        FindingClass::FutureGeneration,
    );
    add(
        finding(0, 20, written(3), page(20, 3)[..4096].to_vec(), true),
        FindingClass::ShortRead,
    );
    for (class, errno, page_id) in [
        (FindingClass::ReadError, 5, 21),
        (FindingClass::WriteError, 28, 22),
    ] {
        let mut f = finding(0, page_id, written(3), page(page_id, 3), true);
        f.verdict = Verdict::IoError { errno };
        f.retries = vec![f.verdict.clone(); 15];
        f.errno = Some(errno);
        f.received = None;
        f.received_header = None;
        f.class = class;
        add(f, class);
    }
    let details = [
        (
            FindingClass::LogCorruption,
            23,
            "log block 23 is missing: LSN 2200 is followed by 2400",
        ),
        (
            FindingClass::WalViolation,
            24,
            "page LSN 300 is beyond the durable log (LSN 250)",
        ),
    ];
    for (class, page_id, detail) in details {
        let mut f = finding(0, page_id, written(3), page(page_id, 2), true);
        f.class = class;
        f.detail = Some(detail.into());
        add(f, class);
    }
    v
}

pub fn summary() -> Summary {
    let start = Instant::now();
    let mut t = ThreadStats::new(start);
    for i in 0..300u64 {
        let at = start + Duration::from_millis(i * 10);
        t.record_at(
            0,
            ActorKind::RandomUser,
            OpKind::Read,
            8192,
            200_000 + i * 3000,
            at,
        );
        t.record_at(
            0,
            ActorKind::Checkpoint,
            OpKind::GatherWrite,
            65536,
            900_000 + i * 1000,
            at,
        );
        t.record_at(1, ActorKind::LogWriter, OpKind::Write, 4096, 100_000, at);
    }
    t.throttled(0);
    t.outstanding(0, 33);
    let mut run = RunStats::new(start);
    run.absorb(&t);
    let mut s = run.summary(
        &[
            FileMeta::new("/data/sqliosim.mdx"),
            FileMeta::new("/data/sqliosim.ldx"),
        ],
        Duration::from_secs(3),
    );
    // The depth a run's gauges report: a burst in the first second, then a steady queue.
    for (i, p) in s.timeline.iter_mut().enumerate() {
        p.inflight_max = [64, 12, 8][i % 3];
        p.inflight_mean = [40.5, 7.25, 6.0][i % 3];
    }
    s.files[0].depth = Some(DepthSummary {
        max: 64,
        mean: 17.9,
        phases: vec![
            PhaseDepth {
                phase: "initial update".into(),
                seconds: 1.0,
                max: 64,
                mean: 40.5,
            },
            PhaseDepth {
                phase: "main".into(),
                seconds: 2.0,
                max: 12,
                mean: 6.6,
            },
        ],
    });
    s
}

pub fn options(dir: &Path, cap: u64) -> EvidenceOptions {
    EvidenceOptions {
        log: Some(dir.join("sqliosim.log.xml")),
        dump_dir: Some(dir.join("dumps")),
        json: Some(dir.join("summary.json")),
        error_cap: cap,
        clock: LogClock::utc(),
        overwrite_foreign: false,
    }
}

pub fn run_info() -> RunInfo {
    RunInfo {
        seed: Some(42),
        run_id: Some(RUN),
        command_line: vec!["sqliosim".into(), "run".into()],
        config: serde_json::json!({"CONFIG": {"TestCycles": 1}}),
        host_label: None,
    }
}

pub fn startup(ev: &Evidence) {
    let text = "CPUCount = 2, Affinity = 0, IOAffinity = 0, MaxMemory = 630 MB, StopOnError = Yes, TestCycles = 1, TestCycleDuration = 300 s, CacheHitRatio = 100.00%";
    ev.emit(Event::Message(Message::new(
        Severity::Info,
        "System",
        "CConfig::Echo",
        text,
    )));
    let warn = "2 IO requests are outstanding for more than 15 sec.";
    ev.emit(Event::Message(
        Message::new(Severity::Warning, "Display Monitor", "CheckForLongIO", warn).with_errno(0),
    ));
}

/// A finished run with `findings` into `dir`.
pub fn run(dir: &Path, findings: &[Finding], cap: u64) -> Evidence {
    let ev = Evidence::create(options(dir, cap), run_info()).expect("evidence opens");
    startup(&ev);
    for f in findings {
        ev.emit(Event::Finding(Box::new(f.clone())));
    }
    ev.emit(Event::Summary(Box::new(summary())));
    ev.finish().expect("evidence closes");
    ev
}
