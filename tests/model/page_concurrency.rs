//! Several threads write and verify the same few pages at once, through the oracle's latches,
//! on the faulty backend (no faults) and on the direct backend on a real file: not one false
//! alarm. Each thread draws its own operations from a seed, for a bounded number of steps.

use std::sync::Arc;
use std::thread;

use crate::page_support::{read_page_with, write_page_with, PS};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sqliosim::io::{Backend, BufPool, DirectBackend, FaultyBackend, OpenOptions, Storage};
use sqliosim::page::{Verdict, PAGE_SIZE};
use sqliosim::sim::engine::oracle::Oracle;

const THREADS: usize = 4;
const PAGES: u64 = 6;

/// Runs the workload; returns every bad verdict seen and the number of verified reads.
fn hammer(st: Arc<dyn Storage>, steps: usize, seed: u64) -> (Vec<(u64, Verdict)>, usize) {
    st.set_len(PAGES * PS).expect("set_len");
    let oracle = Arc::new(Oracle::with_stripes(9, 1, PAGES, 4));
    let pool = BufPool::new(THREADS, PAGE_SIZE).expect("pool");
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (st, o, pool) = (Arc::clone(&st), Arc::clone(&oracle), Arc::clone(&pool));
            thread::spawn(move || worker(&*st, &o, &pool, steps, seed + t as u64))
        })
        .collect();
    let mut bad = Vec::new();
    let mut reads = 0;
    for w in workers {
        let (b, r) = w.join().expect("worker panicked");
        bad.extend(b);
        reads += r;
    }
    (bad, reads)
}

fn worker(
    st: &dyn Storage,
    o: &Oracle,
    pool: &Arc<BufPool>,
    steps: usize,
    seed: u64,
) -> (Vec<(u64, Verdict)>, usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut frame = pool.take().expect("one frame per thread");
    let mut bad = Vec::new();
    let mut reads = 0;
    for _ in 0..steps {
        let page = rng.random_range(0..PAGES);
        if rng.random_bool(0.5) {
            write_page_with(st, o, page, &mut frame).1.expect("write");
        } else {
            reads += 1;
            let r = read_page_with(st, o, page, &mut frame);
            if !r.is_ok() {
                bad.push((page, r.first));
            }
        }
    }
    (bad, reads)
}

#[test]
fn no_false_alarm_on_the_faulty_backend_without_faults() {
    let b = FaultyBackend::new(1);
    let (bad, reads) = hammer(b.open_faulty("c.mdx".as_ref()), 4000, 11);
    assert!(bad.is_empty(), "false alarms: {bad:?}");
    assert!(reads > 1000);
    assert!(b.fired().is_empty());
}

#[test]
fn no_false_alarm_on_the_direct_backend() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let st = DirectBackend::new()
        .open(&d.path().join("c.mdx"), OpenOptions::default())
        .expect("open O_DIRECT");
    let (bad, reads) = hammer(st, 1500, 23);
    assert!(bad.is_empty(), "false alarms: {bad:?}");
    assert!(reads > 400);
}
