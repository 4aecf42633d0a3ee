//! The oracle's unit tests: expected states, generations, latches and the sync points' marks.

use super::*;

#[test]
fn a_page_costs_one_word() {
    assert_eq!(BYTES_PER_PAGE, 8);
    assert_eq!(Oracle::new(1, 1, 1000).memory_bytes(), 8_000);
}

#[test]
fn generations_and_states() {
    let o = Oracle::new(7, 1, 4);
    assert_eq!(o.expected_state(2), ExpectedState::NeverWritten);
    let g = o.begin_write(2);
    assert_eq!(g, 1);
    assert_eq!(
        o.expected_state(2),
        ExpectedState::InFlight { old: 0, new: 1 }
    );
    o.complete_write(2, g, true);
    assert_eq!(
        o.expected_state(2),
        ExpectedState::Written { generation: 1 }
    );
    let g2 = o.begin_write(2);
    o.complete_write(2, g2, false);
    assert_eq!(
        o.expected_state(2),
        ExpectedState::Unknown { old: 1, issued: 2 }
    );
    let g3 = o.begin_write(2);
    assert_eq!(
        g3, 3,
        "the write after a failed one is newer than anything issued"
    );
    assert_eq!(
        o.expected_state(2),
        ExpectedState::Unknown { old: 1, issued: 3 }
    );
    o.complete_write(2, g3, true);
    assert_eq!(
        o.expected_state(2),
        ExpectedState::Written { generation: 3 }
    );
    assert_eq!(
        o.expect_page(2),
        Expect::known(7, 1, 2, o.expected_state(2))
    );
}

#[test]
fn resize_forgets_and_adds_never_written() {
    let o = Oracle::new(7, 1, 4);
    let g = o.begin_write(3);
    o.complete_write(3, g, true);
    o.resize(2);
    assert_eq!(o.pages(), 2);
    assert_eq!(o.expected_state(3), ExpectedState::NeverWritten);
    o.resize(8);
    assert_eq!(o.expected_state(3), ExpectedState::NeverWritten);
    assert_eq!(
        o.begin_write(3),
        2,
        "grown back, the page starts above the 1 it held"
    );
}

#[test]
fn a_page_grown_again_after_a_shrink_gets_a_new_generation() {
    let o = Oracle::new(7, 1, 8);
    for _ in 0..5 {
        let g = o.begin_write(6);
        o.complete_write(6, g, true);
    }
    o.resize(4);
    o.resize(8);
    assert_eq!(o.expected_state(6), ExpectedState::NeverWritten);
    assert_eq!(o.begin_write(6), 6, "above the 5 it held before the cut");
    assert_eq!(o.begin_write(1), 6, "the floor holds for every page");
}

#[test]
fn after_a_raised_floor_every_generation_is_above_it() {
    let o = Oracle::new(7, 1, 4);
    o.set(2, ExpectedState::Written { generation: 3 });
    o.raise_floor(100);
    o.raise_floor(50);
    assert_eq!(o.floor(), 100, "the floor never goes down");
    assert_eq!(o.begin_write(2), 101);
    assert_eq!(o.begin_write(3), 101);
    assert_eq!(o.high(), 101);
}

#[test]
#[should_panic(expected = "beyond")]
fn write_beyond_end_is_a_bug() {
    Oracle::new(7, 1, 4).begin_write(4);
}

#[test]
fn a_file_gets_a_latch_per_page_so_only_shared_pages_conflict() {
    assert_eq!(stripes_for(10), DEFAULT_STRIPES);
    assert_eq!(stripes_for(4096), 4096);
    assert_eq!(stripes_for(u64::MAX), MAX_STRIPES);
    let o = Oracle::new(1, 1, 4096).with_latches_for(8192);
    assert_eq!(o.stripe_count(), 8192);
    // 64 writes of 64 pages each: 4,096 pages latched at once (1,024 stripes allowed 16).
    let held: Vec<_> = (0..64)
        .map(|i| o.try_write_latch_range(1 + 64 * i, 64))
        .collect();
    assert!(held.iter().all(Option::is_some));
    // A request sharing a page with one of them still waits.
    assert!(o.try_read_latch_range(100, 1).is_none());
}

/// A range latch and a page latch on stripes the range holds, in one thread: a deadlock
/// would hang the latching thread, so it runs beside a watchdog that fails the test when
/// it has not finished after a minute (a bound for a deadlock, not a speed).
#[test]
fn range_latches_do_not_deadlock_on_shared_stripes() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let o = Oracle::with_stripes(7, 1, 100, 4);
        let w = o.write_latch_range(2, 9);
        drop(w);
        let r1 = o.read_latch_range(0, 3);
        let r2 = o.read_latch(1);
        drop((r1, r2));
        let _ = done.send(());
    });
    assert!(
        finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_ok(),
        "latching pages a held range shares stripes with deadlocked"
    );
}

fn sync(o: &Oracle, pages: u64) -> Vec<(u64, u64)> {
    o.snap_changed(pages);
    let mut out = Vec::new();
    o.take_snapped(pages, |p, g| out.push((p, g)));
    out
}

fn write(o: &Oracle, page: u64) -> u64 {
    let g = o.begin_write(page);
    o.complete_write(page, g, true);
    g
}

/// A sync point journals each page whose completed generation changed since the last one,
/// once, with that generation; a failed write (unknown) and a page never written are not
/// journaled; the marks never change what a page must read as.
#[test]
fn a_sync_point_takes_each_changed_page_once() {
    let o = Oracle::new(7, 1, 8);
    let g1 = write(&o, 1);
    let g3 = write(&o, 3);
    let g = o.begin_write(5);
    o.complete_write(5, g, false);
    assert_eq!(
        o.expected_state(1),
        ExpectedState::Written { generation: g1 }
    );
    assert_eq!(sync(&o, 8), vec![(1, g1), (3, g3)]);
    assert!(sync(&o, 8).is_empty(), "taken twice");
    let g1b = write(&o, 1);
    assert_eq!(sync(&o, 8), vec![(1, g1b)]);
    assert_eq!(
        o.expected_state(1),
        ExpectedState::Written { generation: g1b }
    );
}

/// A page written again between a sync point's mark and its journaling: the marked
/// generation (covered by the fdatasync between them) is journaled by this sync point, the
/// new one (perhaps not covered) by the next. A page beyond the pages synced keeps its mark.
#[test]
fn a_write_completing_during_the_fdatasync_is_left_to_the_next_sync_point() {
    let o = Oracle::new(7, 1, 8);
    let g2 = write(&o, 2);
    let g6 = write(&o, 6);
    o.snap_changed(4);
    let g2b = write(&o, 2);
    let mut got = Vec::new();
    o.take_snapped(4, |p, g| got.push((p, g)));
    assert_eq!(
        got,
        vec![(2, g2)],
        "the marked generation, not the newer one"
    );
    assert_eq!(sync(&o, 8), vec![(2, g2b), (6, g6)]);
}

/// A sync point whose fdatasync failed leaves its marks; a write then overtakes one (its
/// generation kept aside), and a shrink cuts the page off: grown again and never written,
/// the page is owed nothing, so no sync point journals what it held before the cut.
#[test]
fn a_page_cut_off_is_not_journaled_from_before_the_cut() {
    let o = Oracle::new(7, 1, 8);
    write(&o, 5);
    let g2 = write(&o, 2);
    o.snap_changed(8);
    // The fdatasync failed: nothing taken. Page 5 is written again, overtaking its mark.
    write(&o, 5);
    o.resize(4);
    o.resize(8);
    assert_eq!(sync(&o, 8), vec![(2, g2)]);
}

mod model;

/// The durable generations are handed out in page order across the chunks they are read in,
/// with those beyond the end last.
#[test]
fn every_durable_generation_is_handed_out_once_in_page_order() {
    let o = Oracle::new(1, 0, 200_000);
    let pages = [0, 65_535, 65_536, 131_071, 131_072, 199_999, 250_000];
    for (i, &p) in pages.iter().enumerate() {
        o.raise_durable(p, 10 + i as u64);
    }
    let mut got = Vec::new();
    o.each_durable(|p, g| got.push((p, g)));
    let want: Vec<_> = pages
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, 10 + i as u64))
        .collect();
    assert_eq!(got, want);
}
