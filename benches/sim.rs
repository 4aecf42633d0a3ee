//! Hot path of the simulation: verified page reads per second on one core, from a real file
//! with direct I/O (one 64-page read, then every page verified against the oracle), and the
//! same verification from memory (the CPU ceiling).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sqliosim::io::{AlignedBuf, Backend, DirectBackend, OpenOptions, Storage};
use sqliosim::page::layout::stamp_page;
use sqliosim::page::{verify, ActorKind, ExpectedState, PageStamp, PAGE_SIZE};
use sqliosim::sim::engine::oracle::Oracle;

const PAGES: u64 = 64;
const FILE_PAGES: u64 = 4096;

fn stamp_into(buf: &mut [u8], run: u64, page: u64) {
    let st = PageStamp {
        run_id: run,
        file_id: 0,
        page_id: page,
        generation: 1,
        lsn: 0,
        writer_kind: ActorKind::Init,
        writer_id: 0,
        write_time_us: 0,
    };
    stamp_page(buf, &st);
}

fn prepare(storage: &dyn Storage, oracle: &Oracle, buf: &mut [u8]) {
    for chunk in 0..FILE_PAGES / PAGES {
        for i in 0..PAGES {
            let p = chunk * PAGES + i;
            stamp_into(
                &mut buf[(i as usize) * PAGE_SIZE..(i as usize + 1) * PAGE_SIZE],
                7,
                p,
            );
            oracle.set(p, ExpectedState::Written { generation: 1 });
        }
        storage
            .write_at(buf, chunk * PAGES * PAGE_SIZE as u64)
            .expect("write");
    }
    storage.sync_data().expect("sync");
}

fn verified_reads(c: &mut Criterion) {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
    let path = dir.path().join("bench.mdx");
    let opts = OpenOptions {
        create: true,
        direct: true,
        write_through: false,
    };
    let storage = DirectBackend::new().open(&path, opts).expect("open");
    let oracle = Oracle::new(7, 0, FILE_PAGES);
    let mut buf = AlignedBuf::new(PAGE_SIZE * PAGES as usize).expect("buffer");
    prepare(storage.as_ref(), &oracle, &mut buf);
    let mut g = c.benchmark_group("verified_reads");
    g.throughput(Throughput::Elements(PAGES));
    let mut next = 0u64;
    g.bench_function("direct_64_pages_read_and_verify", |b| {
        b.iter(|| {
            let first = next % (FILE_PAGES / PAGES) * PAGES;
            next += 7;
            let _latch = oracle.read_latch_range(first, PAGES);
            storage
                .read_at(&mut buf, first * PAGE_SIZE as u64)
                .expect("read");
            for i in 0..PAGES as usize {
                let page = &buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
                assert!(verify(page, &oracle.expect_page(first + i as u64)).is_ok());
            }
        })
    });
    g.bench_function("memory_64_pages_verify_only", |b| {
        b.iter(|| {
            for i in 0..PAGES as usize {
                let page = black_box(&buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE]);
                black_box(verify(page, &oracle.expect_page(i as u64)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, verified_reads);
criterion_main!(benches);
