//! Synthetic results with known latencies, for deterministic layout snapshots.

use sqliosim::bench::cpu::{CpuRow, CpuUsage};
use sqliosim::bench::exposure::DirectIo;
use sqliosim::bench::job::Job;
use sqliosim::bench::latency::BenchStats;
use sqliosim::bench::run::{RunResult, TargetInfo};
use sqliosim::io::aio::{Direction, RingKind};

/// Two threads on one 64 MiB file, 70 % reads, latencies 100 µs .. 2 ms, 10 s measured.
pub fn result() -> RunResult {
    let mut job = Job::with_defaults("testfile.dat".into(), 64 << 20);
    job.threads_per_target = 2;
    job.depth = 8;
    job.read_pct = 70;
    let mut threads = Vec::new();
    for t in 0..2u64 {
        let mut st = BenchStats::default();
        for i in 0..10_000u64 {
            let kind = if i % 10 < 7 {
                Direction::Read
            } else {
                Direction::Write
            };
            let lat = 100_000 + (i * 7919 + t * 13) % 1_900_000;
            st.record(kind, lat, 8192, (i / 1000) as usize);
        }
        threads.push(st);
    }
    let mut total = BenchStats::default();
    threads.iter().for_each(|t| total.merge(t));
    let direct_io = DirectIo {
        requested: true,
        honoured: true,
        filesystem: "ext4 (0xef53)".into(),
        dio_mem_align: 512,
        dio_offset_align: 512,
    };
    RunResult {
        job,
        ring_kind: RingKind::Uring,
        targets: vec![TargetInfo {
            path: "testfile.dat".into(),
            size: 64 << 20,
            direct_io,
        }],
        warnings: vec![],
        measured_s: 10.0,
        interrupted: false,
        cpu: CpuUsage {
            process_user_s: 0.5,
            process_sys_s: 2.0,
            per_cpu: vec![
                CpuRow {
                    usage: 30.0,
                    user: 5.0,
                    kernel: 25.0,
                    idle: 70.0,
                },
                CpuRow {
                    usage: 10.0,
                    user: 2.5,
                    kernel: 7.5,
                    idle: 90.0,
                },
            ],
        },
        threads,
        total,
    }
}
