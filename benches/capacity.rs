//! Hot paths of capacity runs: stamping and checking an 8 KiB block, recording a latency,
//! and one 8 KiB O_DIRECT read round trip through each ring kind (on a file in the
//! build's target directory, so on the real filesystem).

use criterion::{criterion_group, criterion_main, Criterion};
use sqliosim::bench::latency::BenchStats;
use sqliosim::bench::stamp;
use sqliosim::io::aio::{Direction, Op, Ring, RingConfig, RingKind};
use std::hint::black_box;
use std::sync::Arc;

fn stamping(c: &mut Criterion) {
    let mut block = vec![0x5au8; 8192];
    c.bench_function("stamp 8 KiB", |b| {
        b.iter(|| stamp::stamp(black_box(&mut block), 1 << 20, 42, 7))
    });
    let mut crcs = stamp::PayloadCrcs::default();
    c.bench_function("stamp 8 KiB, payload CRCs cached", |b| {
        b.iter(|| stamp::stamp_cached(black_box(&mut block), 1 << 20, 42, 7, &mut crcs))
    });
    stamp::stamp(&mut block, 1 << 20, 42, 7);
    c.bench_function("check 8 KiB", |b| {
        b.iter(|| stamp::check(black_box(&block), 1 << 20, 42))
    });
    let mut stats = BenchStats::default();
    let mut i = 0u64;
    c.bench_function("record latency", |b| {
        b.iter(|| {
            i += 1;
            stats.record(Direction::Read, black_box(50_000 + i % 1000), 8192, 0)
        })
    });
}

fn round_trips(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
    let path = dir.path().join("ring.dat");
    std::fs::write(&path, vec![1u8; 16 << 20]).expect("write test file");
    let opts = sqliosim::io::OpenOptions {
        create: false,
        direct: true,
        write_through: false,
    };
    let file =
        sqliosim::io::direct::open_existing_file(&path, opts, false, true).expect("open O_DIRECT");
    let files: Arc<[sqliosim::io::file::FileStorage]> = Arc::from(vec![file]);
    for kind in [RingKind::Uring, RingKind::Psync] {
        let cfg = RingConfig {
            kind,
            depth: 1,
            slot_len: 8192,
            submit_batch: 1,
        };
        let mut ring = Ring::new(&cfg, files.clone()).expect("ring");
        let mut done = Vec::with_capacity(1);
        let mut n = 0u64;
        c.bench_function(&format!("8 KiB read QD1 {}", kind.name()), |b| {
            b.iter(|| {
                n = (n + 7919) % 2048;
                let op = Op {
                    kind: Direction::Read,
                    file: 0,
                    offset: n * 8192,
                    slot: 0,
                    len: 8192,
                    user_data: n,
                };
                ring.submit(op).expect("submit");
                done.clear();
                ring.reap(1, &mut done).expect("reap");
                black_box(&done);
            })
        });
    }
}

criterion_group!(benches, stamping, round_trips);
criterion_main!(benches);
