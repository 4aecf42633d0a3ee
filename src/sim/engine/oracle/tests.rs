//! The oracle's unit tests: expected states, generations, latches and the sync points' marks.

use super::*;
use std::collections::BTreeMap;
use word::{Wide, CHANGED, IN_FLIGHT, UNKNOWN};

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

/// The oracle as a plain table of unpacked states, which nothing spills: what the packed words
/// and the spill map must behave as.
#[derive(Default)]
struct Model {
    pages: Vec<Wide>,
    far: BTreeMap<u64, u64>,
    floor: u64,
    high: u64,
    overtaken: Vec<(u64, u64)>,
}

impl Model {
    fn begin(&mut self, page: usize) -> u64 {
        let w = &mut self.pages[page];
        let gen = w.issued.max(self.floor) + 1;
        w.issued = gen;
        w.flags |= IN_FLIGHT;
        self.high = self.high.max(gen);
        gen
    }

    fn complete(&mut self, page: usize, ok: bool) {
        let w = &mut self.pages[page];
        w.flags &= !IN_FLIGHT;
        if ok {
            w.flags &= !UNKNOWN;
            let gen = w.issued;
            if let Some(g) = w.store_done(gen) {
                self.overtaken.push((page as u64, g));
            }
        } else {
            w.flags |= UNKNOWN;
        }
    }

    fn resize(&mut self, pages: usize) {
        if pages < self.pages.len() {
            self.floor = self.floor.max(self.high);
            self.overtaken.retain(|&(p, _)| p < pages as u64);
            for (p, w) in self.pages.iter().enumerate().skip(pages) {
                if w.durable > 0 {
                    self.far.insert(p as u64, w.durable);
                }
            }
            self.pages.truncate(pages);
        } else {
            let old = self.pages.len();
            self.pages.resize(pages, Wide::default());
            for p in old..pages {
                if let Some(d) = self.far.remove(&(p as u64)) {
                    self.pages[p].durable = d;
                }
            }
        }
    }

    fn sync(&mut self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for (p, w) in self.pages.iter_mut().enumerate() {
            if w.flags & CHANGED != 0 {
                w.flags &= !CHANGED;
                if w.done > 0 {
                    out.push((p as u64, w.done));
                }
            }
        }
        out.extend(std::mem::take(&mut self.overtaken));
        out
    }

    fn durables(&self) -> Vec<(u64, u64)> {
        let near = self.pages.iter().enumerate();
        near.map(|(p, w)| (p as u64, w.durable))
            .filter(|&(_, d)| d > 0)
            .chain(self.far.iter().map(|(&p, &d)| (p, d)))
            .collect()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Write { page: usize, ok: bool },
    Begin(usize),
    Finish { page: usize, ok: bool },
    Sync,
    Durable { page: usize, back: u64 },
    Floor(u64),
    Resize(usize),
    Truncate(usize),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        6 => (0..12usize, proptest::bool::weighted(0.9)).prop_map(|(page, ok)| Op::Write { page, ok }),
        2 => (0..12usize).prop_map(Op::Begin),
        2 => (0..12usize, any::<bool>()).prop_map(|(page, ok)| Op::Finish { page, ok }),
        2 => Just(Op::Sync),
        2 => (0..16usize, 0..3000u64).prop_map(|(page, back)| Op::Durable { page, back }),
        1 => prop_oneof![0..100u64, 2000..5000u64, (1u64 << 36)..(1u64 << 37)].prop_map(Op::Floor),
        1 => (0..14usize).prop_map(Op::Resize),
        1 => (0..14usize).prop_map(Op::Truncate),
    ]
}

proptest::proptest! {
    /// Any sequence of writes, failures, sync points, durable generations, floors (large
    /// enough to spill: a restart's, a shrink's, beyond 35 bits), resizes and truncations
    /// leaves the packed oracle saying what the plain table says of every page.
    #[test]
    fn packed_words_and_the_spill_map_behave_as_a_plain_table(
        ops in proptest::collection::vec(op(), 1..120)
    ) {
        let o = Oracle::new(1, 0, 8);
        let mut m = Model { pages: vec![Wide::default(); 8], ..Model::default() };
        for op in ops {
            let n = m.pages.len();
            match op {
                Op::Write { page, ok } if page < n && m.pages[page].flags & IN_FLIGHT == 0 => {
                    let g = o.begin_write(page as u64);
                    proptest::prop_assert_eq!(g, m.begin(page));
                    o.complete_write(page as u64, g, ok);
                    m.complete(page, ok);
                }
                Op::Begin(page) if page < n && m.pages[page].flags & IN_FLIGHT == 0 => {
                    proptest::prop_assert_eq!(o.begin_write(page as u64), m.begin(page));
                }
                Op::Finish { page, ok } if page < n && m.pages[page].flags & IN_FLIGHT != 0 => {
                    o.complete_write(page as u64, m.pages[page].issued, ok);
                    m.complete(page, ok);
                }
                Op::Sync => {
                    let got = sync(&o, n as u64);
                    let mut want = m.sync();
                    let mut got_sorted = got.clone();
                    got_sorted.sort_unstable();
                    want.sort_unstable();
                    proptest::prop_assert_eq!(got_sorted, want);
                    for (p, g) in got {
                        o.raise_durable(p, g);
                        if let Some(w) = m.pages.get_mut(p as usize) {
                            w.durable = w.durable.max(g);
                        } else {
                            let d = m.far.entry(p).or_insert(0);
                            *d = (*d).max(g);
                        }
                    }
                }
                Op::Durable { page, back } => {
                    let base = m.pages.get(page).map_or(m.high, |w| w.done);
                    let g = base.saturating_sub(back).max(1);
                    o.raise_durable(page as u64, g);
                    if let Some(w) = m.pages.get_mut(page) {
                        w.durable = w.durable.max(g);
                    } else {
                        let d = m.far.entry(page as u64).or_insert(0);
                        *d = (*d).max(g);
                    }
                }
                Op::Floor(f) => {
                    o.raise_floor(f);
                    m.floor = m.floor.max(f);
                    m.high = m.high.max(f);
                }
                Op::Resize(pages) if m.pages.iter().all(|w| w.flags & IN_FLIGHT == 0) => {
                    o.resize(pages as u64);
                    m.resize(pages);
                }
                Op::Truncate(pages) => {
                    o.truncate_durable(pages as u64);
                    for w in m.pages.iter_mut().skip(pages) {
                        w.durable = 0;
                    }
                    let _ = m.far.split_off(&(pages as u64));
                }
                _ => {}
            }
            for (p, w) in m.pages.iter().enumerate() {
                proptest::prop_assert_eq!(o.expected_state(p as u64), w.state(), "page {}", p);
                proptest::prop_assert_eq!(o.durable(p as u64), w.durable, "page {}", p);
            }
            let mut got = Vec::new();
            o.each_durable(|p, g| got.push((p, g)));
            proptest::prop_assert_eq!(got, m.durables());
            proptest::prop_assert_eq!(o.pages(), m.pages.len() as u64);
        }
    }
}

/// Writers on their own pages, a sync point taking and journaling marks, and floors raised far
/// enough to spill, all at once: no update is lost between a page's word and the spill map.
/// Every page ends as its last write left it, durable at that generation, and its word back.
#[test]
fn concurrent_writers_sync_points_and_spills_lose_no_update() {
    use std::sync::atomic::AtomicBool;
    let o = Oracle::new(1, 0, 64);
    let stop = AtomicBool::new(false);
    let last: Vec<u64> = std::thread::scope(|s| {
        let syncer = s.spawn(|| {
            while !stop.load(Ordering::Acquire) {
                for (p, g) in sync(&o, 64) {
                    o.raise_durable(p, g);
                }
            }
        });
        let writers: Vec<_> = (0..4u64)
            .map(|t| {
                let o = &o;
                s.spawn(move || {
                    let mut last = vec![0; 16];
                    for i in 0..3000u64 {
                        let page = t * 16 + i % 16;
                        if i % 997 == 0 {
                            o.raise_floor(o.high() + 5000);
                        }
                        let g = o.begin_write(page);
                        o.complete_write(page, g, true);
                        last[(i % 16) as usize] = g;
                    }
                    last
                })
            })
            .collect();
        let last = writers
            .into_iter()
            .flat_map(|w| w.join().expect("writer"))
            .collect();
        stop.store(true, Ordering::Release);
        syncer.join().expect("sync point");
        last
    });
    for (p, g) in sync(&o, 64) {
        o.raise_durable(p, g);
    }
    for (page, &g) in last.iter().enumerate() {
        let page = page as u64;
        assert_eq!(
            o.expected_state(page),
            ExpectedState::Written { generation: g }
        );
        assert_eq!(o.durable(page), g, "page {page}");
    }
    assert_eq!(o.spilled(), 0, "every state fits its word again");
}

/// A restarted run carries its journal's durable generations into the oracle before it reads
/// the pages back and sets them: a page then holds a claim and no completed write. Each fits its
/// word (the whole file spilled, 50 MB over an 8 GB file, before), and so does the page once
/// set from what the disk held.
#[test]
fn a_restarted_runs_claims_fit_their_words_before_and_after_the_pages_are_set() {
    let o = Oracle::new(1, 0, 1000);
    for p in 0..1000 {
        o.raise_durable(p, (1 << 30) + p);
    }
    assert_eq!(o.spilled(), 0);
    assert_eq!(o.durable(7), (1 << 30) + 7);
    assert_eq!(o.expected_state(7), ExpectedState::NeverWritten);
    for p in 0..1000 {
        o.set(
            p,
            ExpectedState::Written {
                generation: (1 << 30) + p + 5,
            },
        );
    }
    assert_eq!(o.spilled(), 0);
    assert_eq!(o.durable(7), (1 << 30) + 7);
}
