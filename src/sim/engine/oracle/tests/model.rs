//! The packed oracle against a plain table of its states (proptest), and against itself under
//! concurrent writers, sync points and spills.

use std::collections::BTreeMap;

use super::super::word::{Wide, CHANGED, IN_FLIGHT, UNKNOWN};
use super::*;

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
