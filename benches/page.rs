//! Hot paths of the page engine, per 8 KB page: stamp, verify (the ok path), checksum, and
//! regenerating the expected image and comparing it. Figures go to docs/performance.md.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sqliosim::page::fill::fill_payload;
use sqliosim::page::image::image_like;
use sqliosim::page::layout::page_checksum;
use sqliosim::page::{stamp_page, verify, ActorKind, Expect, ExpectedState, PageStamp, PAGE_SIZE};

fn stamp(generation: u64) -> PageStamp {
    PageStamp {
        run_id: 0x1234_5678_9ABC_DEF0,
        file_id: 3,
        page_id: 4711,
        generation,
        lsn: 99,
        writer_kind: ActorKind::RandomUser,
        writer_id: 7,
        write_time_us: 1_750_000_000_000_000,
    }
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("page");
    g.throughput(Throughput::Bytes(PAGE_SIZE as u64));
    let mut page = vec![0u8; PAGE_SIZE];
    let mut n = 0u64;
    g.bench_function("stamp", |b| {
        b.iter(|| {
            n += 1;
            stamp_page(black_box(&mut page), &stamp(n));
        })
    });
    g.bench_function("fill_payload", |b| {
        b.iter(|| fill_payload(black_box(&mut page), 1, 2, 3, black_box(4)))
    });
    stamp_page(&mut page, &stamp(5));
    let exp = Expect::known(
        0x1234_5678_9ABC_DEF0,
        3,
        4711,
        ExpectedState::Written { generation: 5 },
    );
    g.bench_function("verify_ok", |b| {
        b.iter(|| verify(black_box(&page), black_box(&exp)))
    });
    g.bench_function("checksum", |b| b.iter(|| page_checksum(black_box(&page))));
    let id = (0x1234_5678_9ABC_DEF0, 3, 4711);
    g.bench_function("regenerate_and_compare", |b| {
        b.iter(|| image_like(id, 5, black_box(&page)) == black_box(&page[..]))
    });
    let mut stale = page.clone();
    stamp_page(&mut stale, &stamp(4));
    g.bench_function("verify_stale", |b| {
        b.iter(|| verify(black_box(&stale), black_box(&exp)))
    });
    g.finish();
}

criterion_group!(page, benches);
criterion_main!(page);
