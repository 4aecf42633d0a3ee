//! The check's view of a snapshot whose states are captured by the writers alone: a page its
//! first writer captured is judged at its pre-image's state, a page no writer reached at the
//! source's, a write in flight as the snapshot opened at what it left; and writers and a check
//! on threads agree with the states every page had at the open.

use std::sync::atomic::{AtomicU64, Ordering};

use super::super::*;
use super::{file, stamped};
use crate::io::FaultyBackend;
use crate::page::{verify, Verdict, PAGE_SIZE};

const RUN: u64 = 7;

/// A writer's write of `page` as `Worker::write_run` makes it: under its write latch, the
/// pre-image kept first by the open snapshot (if any), then the write (lost to the device when
/// not `ok`, and failed).
fn write(o: &Oracle, source: &dyn Storage, snap: Option<&SnapFile>, page: u64, ok: bool) {
    let _latch = o.write_latch_range(page, 1);
    if let Some(sf) = snap {
        let problems = sf.preserve(source, o, page, 1, &mut |_| {});
        assert!(problems.is_empty(), "{problems:?}");
    }
    let g = o.begin_write(page);
    if ok {
        let bytes = stamped(RUN, o.file_id(), page, g);
        source
            .write_at(&bytes, page * PAGE_SIZE as u64)
            .expect("write");
    }
    o.complete_write(page, g, ok);
}

/// The check's read of `page` as `checkdb::view` makes it: under the read latch, the copy
/// where there is one, else the source; its snapshot state and the verdict.
fn view(o: &Oracle, source: &dyn Storage, sf: &SnapFile, page: u64) -> (ExpectedState, Verdict) {
    let _latch = o.read_latch_range(page, 1);
    let state = sf.view_state(o, page);
    let mut b = vec![0u8; PAGE_SIZE];
    let from: &dyn Storage = match sf.is_copied(page) {
        true => sf.storage.as_ref(),
        false => source,
    };
    from.read_at(&mut b, page * PAGE_SIZE as u64).expect("read");
    let exp = Expect::known(RUN, o.file_id(), page, state);
    (state, verify::verify(&b, &exp))
}

fn setup(b: &FaultyBackend, pages: u64) -> (Oracle, Arc<dyn Storage>) {
    let o = Oracle::new(RUN, 0, pages);
    let source = file(b, "d.mdx", pages);
    (o, source)
}

fn open(b: &FaultyBackend, pages: u64) -> SnapFile {
    SnapFile::new(0, "s".into(), file(b, "s", pages), pages)
}

#[test]
fn a_page_its_first_writer_captured_is_seen_at_its_pre_image() {
    let b = FaultyBackend::new(1);
    let (o, source) = setup(&b, 16);
    write(&o, source.as_ref(), None, 5, true);
    let sf = open(&b, 16);
    assert_eq!(sf.state(5), None, "nothing captured at the open");
    for _ in 0..3 {
        write(&o, source.as_ref(), Some(&sf), 5, true);
    }
    assert_eq!(
        o.expected_state(5),
        ExpectedState::Written { generation: 4 }
    );
    let pre = ExpectedState::Written { generation: 1 };
    assert_eq!(sf.state(5), Some(pre), "captured by the first writer");
    let (state, verdict) = view(&o, source.as_ref(), &sf, 5);
    assert_eq!(state, pre);
    assert!(verdict.is_ok(), "{verdict:?}");
    assert_eq!(sf.copied(), 1);
}

#[test]
fn a_page_no_writer_reached_is_seen_at_the_sources_state_and_holds_nothing() {
    let b = FaultyBackend::new(1);
    let (o, source) = setup(&b, 16);
    write(&o, source.as_ref(), None, 3, true);
    write(&o, source.as_ref(), None, 3, true);
    // A write that failed before the open: the page is unknown between its generations.
    write(&o, source.as_ref(), None, 4, true);
    write(&o, source.as_ref(), None, 4, false);
    let sf = open(&b, 16);
    let empty = sf.state_bytes();
    for page in [3, 4, 9] {
        let (state, verdict) = view(&o, source.as_ref(), &sf, page);
        assert_eq!(state, o.expected_state(page), "page {page}");
        assert!(verdict.is_ok(), "page {page}: {verdict:?}");
        assert_eq!(sf.state(page), None, "page {page} captured by a read");
    }
    assert_eq!(
        view(&o, source.as_ref(), &sf, 4).0,
        ExpectedState::Unknown { old: 1, issued: 2 }
    );
    assert_eq!(sf.state_bytes(), empty, "the check's reads hold no state");
}

/// A write begun before the snapshot opened holds its write latch until it completes: the
/// check and the next writer meet the page at what it left, as a capture at the open would
/// have (it waited for the same latch).
#[test]
fn a_write_in_flight_as_the_snapshot_opens_is_judged_at_what_it_left() {
    for ok in [true, false] {
        let b = FaultyBackend::new(1);
        let (o, source) = setup(&b, 16);
        write(&o, source.as_ref(), None, 6, true);
        let latch = o.write_latch_range(6, 1);
        let g = o.begin_write(6);
        let sf = open(&b, 16);
        if ok {
            let bytes = stamped(RUN, 0, 6, g);
            source
                .write_at(&bytes, 6 * PAGE_SIZE as u64)
                .expect("write");
        }
        o.complete_write(6, g, ok);
        drop(latch);
        let left = match ok {
            true => ExpectedState::Written { generation: 2 },
            false => ExpectedState::Unknown { old: 1, issued: 2 },
        };
        let (state, verdict) = view(&o, source.as_ref(), &sf, 6);
        assert_eq!(state, left);
        assert!(verdict.is_ok(), "{verdict:?}");
        write(&o, source.as_ref(), Some(&sf), 6, true);
        assert_eq!(sf.state(6), Some(left), "the next writer captures it");
        let (state, verdict) = view(&o, source.as_ref(), &sf, 6);
        assert_eq!(state, left);
        assert!(verdict.is_ok(), "{verdict:?}");
    }
}

/// A small xorshift: the writers' pages, the same every run.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Two writers (one write in ten failing) and a check on their own threads: every page the
/// check reads, from its copy or the source, is judged at the state it had at the open, and
/// reads as it.
#[test]
fn writers_and_a_check_on_threads_agree_with_the_states_at_the_open() {
    let pages = 64;
    let b = FaultyBackend::new(1);
    let (o, source) = setup(&b, pages);
    for p in 1..pages {
        for _ in 0..p % 3 {
            write(&o, source.as_ref(), None, p, true);
        }
    }
    let sf = open(&b, pages);
    let at_open: Vec<ExpectedState> = (0..pages).map(|p| o.expected_state(p)).collect();
    let finished = AtomicU64::new(0);
    let passes = std::thread::scope(|s| {
        for seed in [0x9e37_79b9_7f4a_7c15u64, 0x2545_f491_4f6c_dd1d] {
            let (o, source, sf, finished) = (&o, source.as_ref(), &sf, &finished);
            s.spawn(move || {
                let mut x = seed;
                for _ in 0..2000 {
                    let page = 1 + next(&mut x) % (pages - 1);
                    write(o, source, Some(sf), page, !next(&mut x).is_multiple_of(10));
                }
                finished.fetch_add(1, Ordering::AcqRel);
            });
        }
        let mut passes = 0;
        while passes == 0 || finished.load(Ordering::Acquire) < 2 {
            for p in 1..pages {
                let (state, verdict) = view(&o, source.as_ref(), &sf, p);
                assert_eq!(state, at_open[p as usize], "page {p}, pass {passes}");
                assert!(verdict.is_ok(), "page {p}, pass {passes}: {verdict:?}");
            }
            passes += 1;
        }
        passes
    });
    assert!(sf.copied() > pages / 2, "{} pages copied", sf.copied());
    assert!(passes >= 1);
    // After the writers, every page written has its pre-image's state, the others none.
    for p in 1..pages {
        if let Some(st) = sf.state(p) {
            assert_eq!(st, at_open[p as usize], "page {p}");
        }
        assert_eq!(view(&o, source.as_ref(), &sf, p).0, at_open[p as usize]);
    }
}
