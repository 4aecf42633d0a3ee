//! Statistics: recording, merging, timeline bounds and SQLIOSim's summary lines.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqliosim::page::ActorKind;
use sqliosim::stats::{
    file_summary_lines, FileMeta, LiveCounters, OpKind, RunStats, Summary, ThreadStats,
};

fn sample(start: Instant) -> (ThreadStats, ThreadStats) {
    let mut a = ThreadStats::new(start);
    let mut b = ThreadStats::new(start);
    for i in 0..100u64 {
        let at = start + Duration::from_millis(i * 30);
        a.record_at(
            0,
            ActorKind::RandomUser,
            OpKind::Read,
            8192,
            1_000_000 + i * 1000,
            at,
        );
        b.record_at(
            1,
            ActorKind::Checkpoint,
            OpKind::GatherWrite,
            65536,
            2_000_000,
            at,
        );
    }
    a.record_at(
        0,
        ActorKind::RandomUser,
        OpKind::ScatterRead,
        16384,
        5_000_000,
        start,
    );
    b.record_at(1, ActorKind::LogWriter, OpKind::Sync, 0, 9_000_000, start);
    a.throttled(0);
    a.throttled(0);
    a.outstanding(0, 7);
    b.outstanding(0, 12);
    b.record_error(1, ActorKind::Checkpoint, OpKind::GatherWrite);
    (a, b)
}

fn summary() -> Summary {
    let start = Instant::now();
    let (a, b) = sample(start);
    let mut run = RunStats::new(start);
    run.absorb(&a);
    run.absorb(&b);
    let files = [
        FileMeta::new("/data/sqliosim.mdx"),
        FileMeta::new("/data/sqliosim.ldx"),
    ];
    run.summary(&files, Duration::from_secs(3))
}

#[test]
fn merge_adds_counts_and_takes_max_outstanding() {
    let s = summary();
    assert_eq!(s.files.len(), 2);
    let f0 = &s.files[0];
    assert_eq!((f0.io.reads, f0.io.scatter_reads), (100, 1));
    assert_eq!(f0.throttled, 2);
    assert_eq!(f0.io_request_blocks, 12);
    assert_eq!(f0.io.bytes_read, 100 * 8192 + 16384);
    let f1 = &s.files[1];
    assert_eq!(
        (f1.io.gather_writes, f1.io.syncs, f1.io.errors),
        (100, 1, 1)
    );
    assert_eq!(s.total.data_ops(), 201);
    // 100 reads of 1.0..1.099 ms + 5 ms + 100 × 2 ms + 9 ms.
    assert_eq!(
        s.total.total_io_time_ms,
        (100_000_000 + 4_950_000 + 5_000_000 + 200_000_000 + 9_000_000) / 1_000_000
    );
    assert!((s.total.iops - 201.0 / 3.0).abs() < 1e-9);
}

#[test]
fn percentiles_and_actors() {
    let s = summary();
    let l = s.files[0].latency_by_op[&OpKind::Read];
    assert_eq!(l.count, 100);
    assert!((l.p50_us - 1050.0).abs() < 15.0, "p50 {}", l.p50_us);
    assert!(l.max_us >= 1099.0 && l.max_us < 1110.0, "max {}", l.max_us);
    let names: Vec<_> = s.actors.iter().map(|a| a.actor).collect();
    assert_eq!(
        names,
        [
            ActorKind::RandomUser,
            ActorKind::Checkpoint,
            ActorKind::LogWriter
        ]
    );
    assert_eq!(s.actors[1].io.errors, 1);
}

#[test]
fn timeline_buckets_per_second() {
    let s = summary();
    // 3 s of records at 30 ms intervals: seconds 0, 1, 2.
    assert_eq!(s.timeline.len(), 3);
    assert_eq!(s.timeline[0].width_s, 1);
    let ops: f64 = s.timeline.iter().map(|p| p.iops).sum();
    assert!((ops - 201.0).abs() < 1e-9);
}

#[test]
fn timeline_stays_bounded_on_long_runs() {
    let start = Instant::now();
    let mut t = ThreadStats::new(start);
    for h in 0..100u64 {
        let at = start + Duration::from_secs(h * 3600);
        t.record_at(0, ActorKind::Bench, OpKind::Write, 4096, 1000, at);
    }
    let tl = t.timeline();
    assert!(tl.buckets().len() <= 8192);
    assert!(tl.width_s() >= 64, "width {}", tl.width_s());
    let writes: u64 = tl.buckets().iter().map(|b| b.writes).sum();
    assert_eq!(writes, 100);
}

#[test]
fn live_counters_follow_records() {
    let live = Arc::new(LiveCounters::new());
    let mut t = ThreadStats::new(Instant::now()).with_live(live.clone());
    let before = live.snapshot();
    t.record(0, ActorKind::RandomUser, OpKind::Read, 8192, 2_000_000);
    t.record(0, ActorKind::RandomUser, OpKind::Write, 8192, 4_000_000);
    t.record_error(0, ActorKind::RandomUser, OpKind::Read);
    let d = live.snapshot() - before;
    assert_eq!((d.reads, d.writes, d.errors, d.bytes_read), (1, 1, 1, 8192));
    assert!((d.mean_latency_ms() - 3.0).abs() < 1e-9);
    assert!((d.iops(2.0) - 1.0).abs() < 1e-9);
}

#[test]
fn summary_lines_are_sqliosim_compatible() {
    let s = summary();
    let lines = file_summary_lines(&s.files[0]);
    assert_eq!(
        lines[0],
        "********** Final Summary for file /data/sqliosim.mdx **********"
    );
    assert_eq!(
        lines[1],
        "File Attributes: Compression = No, Encryption = No, Sparse = No"
    );
    let re = regex::Regex::new(r"^Target IO Duration \(ms\) = (\d+), Running Average IO Duration \(ms\) = (\d+), Number of times IO throttled = (\d+), IO request blocks = (\d+)$").unwrap();
    let c = re.captures(&lines[2]).expect("XenRT's expression matches");
    assert_eq!((&c[1], &c[3], &c[4]), ("100", "2", "12"));
    assert!(lines[3].starts_with(
        "Reads = 100, Scatter Reads = 1, Writes = 0, Gather Writes = 0, Total IO Time (ms) = "
    ));
    assert!(lines[4].contains("IOPS = "), "{}", lines[4]);
}

#[test]
fn summary_json_round_trip() {
    let s = summary();
    let text = serde_json::to_string(&s).unwrap();
    let back: Summary = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}

/// The I/O to files outside the set (a backup stream, tempdb, a snapshot) is in the run's
/// totals and in `other`, in no file's line: the lines add up to the total (they did not:
/// 145,192 reads in the total, 110,196 in the two lines).
#[test]
fn files_and_other_add_up_to_the_total() {
    let start = Instant::now();
    let (mut a, b) = sample(start);
    let s = {
        let mut run = RunStats::new(start);
        run.absorb(&a);
        run.absorb(&b);
        run.summary(
            &[FileMeta::new("/d/a.mdx"), FileMeta::new("/d/a.ldx")],
            Duration::from_secs(3),
        )
    };
    assert_eq!(s.other, None, "no I/O outside the set: no line for it");
    for _ in 0..40 {
        a.record_scratch(ActorKind::BackupUser, OpKind::Write, 65536, 3_000_000);
    }
    a.record_scratch(ActorKind::SortUser, OpKind::Read, 8192, 1_000_000);
    let mut run = RunStats::new(start);
    run.absorb(&a);
    run.absorb(&b);
    let s = run.summary(
        &[FileMeta::new("/d/a.mdx"), FileMeta::new("/d/a.ldx")],
        Duration::from_secs(3),
    );
    let other = s.other.as_ref().expect("I/O outside the set");
    assert_eq!((other.reads, other.writes), (1, 40));
    let sum = |f: fn(&sqliosim::stats::OpTotals) -> u64| {
        s.files.iter().map(|x| f(&x.io)).sum::<u64>() + f(other)
    };
    assert_eq!(
        sum(|t| t.reads + t.scatter_reads),
        s.total.reads + s.total.scatter_reads
    );
    assert_eq!(
        sum(|t| t.writes + t.gather_writes),
        s.total.writes + s.total.gather_writes
    );
    assert_eq!(sum(|t| t.bytes_written), s.total.bytes_written);
    assert!(other.latency.max_us >= 3000.0, "{:?}", other.latency);
}
