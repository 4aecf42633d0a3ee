//! RandomUser: OLTP-style work. Picks a region of a data file, reads a chain of pages in it
//! (cache hits cost no I/O), updates a share of them through the log, commits.
//!
//! With `CPUSimulation=TRUE` each cycle also spends `CPUCyclesMin..=CPUCyclesMax` rounds of
//! busy work ([`busy`]) after its reads, the CPU a query spends on the rows it read, so that
//! I/O and computation interleave on the user's thread (SQLIOSim's keys are undocumented:
//! this is our reading, in docs/configuration.md). One round is a multiply and a rotate, a
//! few CPU cycles; the user's closing line says how many rounds it spent.

use rand::rngs::SmallRng;

use super::worker::{between, chance, Worker};
use crate::sim::engine::pool::PageKey;
use crate::sim::plan::RandomPlan;

/// The region a random user is working in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Data file index.
    pub file: usize,
    /// First page.
    pub start: u64,
    /// Length in pages.
    pub len: u64,
}

/// Picks a region of `min..=max` pages inside a file of `pages` pages (page 0 excluded), at
/// most the file; `None`, and no draw, for a file of its header alone.
pub fn pick_region(
    rng: &mut SmallRng,
    file: usize,
    pages: u64,
    min: u64,
    max: u64,
) -> Option<Region> {
    let usable = pages.checked_sub(1).filter(|&u| u > 0)?;
    let len = between(rng, min.max(1), max.max(1)).min(usable);
    let start = between(rng, 1, pages - len);
    Some(Region { file, start, len })
}

/// `rounds` rounds of busy work that the optimiser cannot remove; returns its result.
pub fn busy(rounds: u64, seed: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..rounds {
        x = std::hint::black_box(x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17));
    }
    x
}

/// Runs one random user until the phase ends.
pub fn run(w: &mut Worker<'_>) {
    let plan = w.run.plan.random.clone();
    let cpu = &w.run.plan.sections.random;
    let cpu = cpu
        .cpu_simulation
        .then(|| (u64::from(cpu.cpu_cycles_min), u64::from(cpu.cpu_cycles_max)));
    let (mut spins, mut rounds) = (0u64, 0u64);
    let mut region: Option<Region> = None;
    while !w.run.controls.stop.phase_over() {
        if region.is_none() || w.chance(plan.jump) {
            let file = w.run.files.data[w.between(0, w.run.files.data.len() as u64 - 1) as usize];
            let pages = *w.run.files[file].pages.read();
            region = pick_region(&mut w.rng, file, pages, plan.min_chain, plan.max_chain);
        }
        let Some(r) = region else {
            break;
        };
        one_cycle(w, r, &plan);
        if let Some((lo, hi)) = cpu.filter(|&(_, hi)| hi > 0) {
            let n = w.between(lo.min(hi), hi);
            busy(n, spins);
            (spins, rounds) = (spins + 1, rounds + n);
        }
        if !w.pause(plan.sleep_after) {
            break;
        }
    }
    if cpu.is_some() {
        w.run.message(
            crate::findings::Severity::Info,
            "Random User",
            "RandomUser::CPUSimulation",
            format!(
                "random user {}: CPU simulation: {rounds} rounds of busy work over {spins} cycles",
                w.id
            ),
        );
    }
}

/// The chain of pages a cycle reads in region `r`: `(first page, pages)`, at most
/// `max_pages` (one request), placed at random in the region.
pub fn pick_chain(rng: &mut SmallRng, r: Region, max_pages: u64) -> (u64, u64) {
    let chain = between(rng, 1, r.len.min(max_pages));
    (r.start + between(rng, 0, r.len - chain), chain)
}

/// What a cycle does to one page it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAction {
    /// Read only.
    Keep,
    /// Changed, then rolled back in memory: nothing reaches the log or the page.
    RolledBack,
    /// Changed and logged with a record of this many bytes; the page is dirtied.
    Update(u32),
}

/// The next page's action: updated with chance `write_ratio`, of which `rollback` are rolled
/// back; an update of a file without a log is not logged (`Keep`).
pub fn page_action(rng: &mut SmallRng, plan: &RandomPlan, has_log: bool) -> PageAction {
    if !chance(rng, plan.write_ratio) {
        return PageAction::Keep;
    }
    if chance(rng, plan.rollback) {
        return PageAction::RolledBack;
    }
    if !has_log {
        return PageAction::Keep;
    }
    let bytes = between(rng, u64::from(plan.min_log), u64::from(plan.max_log));
    PageAction::Update(u32::try_from(bytes).unwrap_or(u32::MAX))
}

fn one_cycle(w: &mut Worker<'_>, r: Region, plan: &RandomPlan) {
    let max = w.max_pages() as u64;
    let (start, chain) = pick_chain(&mut w.rng, r, max);
    let ratio = w.run.plan.cache_hit_ratio;
    super::batch::read_misses(w, r.file, start, chain, ratio);
    let mut last_lsn = 0;
    let log = w.run.files.log_of(r.file);
    for page in start..start + chain {
        let PageAction::Update(bytes) = page_action(&mut w.rng, plan, log.is_some()) else {
            continue;
        };
        let Some(log) = log else {
            continue;
        };
        let lsn = log.wal.append(bytes);
        last_lsn = lsn;
        if !w
            .run
            .files
            .pool
            .mark_dirty(PageKey { file: r.file, page }, lsn)
        {
            // The pool is full of dirty pages: write this one through.
            w.write_run(r.file, page, 1, lsn);
        }
    }
    if last_lsn > 0 {
        // Commit: the log must be durable before the transaction counts as done.
        w.flush_log(r.file, last_lsn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::time::Duration;

    fn plan(write_ratio: f64, rollback: f64) -> RandomPlan {
        RandomPlan {
            users: 1,
            jump: 0.05,
            min_chain: 8,
            max_chain: 64,
            write_ratio,
            min_log: 64,
            max_log: 8192,
            rollback,
            sleep_after: Duration::ZERO,
        }
    }

    #[test]
    fn a_region_is_inside_the_file_past_its_header() {
        let mut rng = SmallRng::seed_from_u64(12);
        let (mut shortest, mut longest) = (u64::MAX, 0);
        for _ in 0..10_000 {
            let r = pick_region(&mut rng, 2, 1_000, 8, 64).expect("a file of 1,000 pages");
            assert_eq!(r.file, 2);
            assert!((8..=64).contains(&r.len), "{r:?}");
            assert!(r.start >= 1 && r.start + r.len <= 1_000, "{r:?}");
            (shortest, longest) = (shortest.min(r.len), longest.max(r.len));
        }
        assert_eq!((shortest, longest), (8, 64));
        // A file smaller than a region: the region is the file past its header.
        let mut small = SmallRng::seed_from_u64(1);
        assert!((0..100).all(|_| pick_region(&mut small, 0, 5, 8, 64)
            == Some(Region {
                file: 0,
                start: 1,
                len: 4
            })));
        // The header page alone: no region, and no draw.
        let (mut a, b) = (SmallRng::seed_from_u64(2), SmallRng::seed_from_u64(2));
        assert_eq!(pick_region(&mut a, 0, 1, 8, 64), None);
        assert_eq!(pick_region(&mut a, 0, 0, 8, 64), None);
        assert_eq!(a, b);
    }

    #[test]
    fn a_chain_stays_inside_its_region_and_within_one_request() {
        let mut rng = SmallRng::seed_from_u64(7);
        let r = Region {
            file: 0,
            start: 100,
            len: 40,
        };
        let mut longest = 0;
        for _ in 0..10_000 {
            let (start, chain) = pick_chain(&mut rng, r, 16);
            assert!((1..=16).contains(&chain), "{chain}");
            assert!(start >= 100 && start + chain <= 140, "{start}+{chain}");
            longest = longest.max(chain);
        }
        assert_eq!(longest, 16, "the longest chain is one request");
        // A region shorter than a request: the chain is at most the region.
        let short = Region { len: 3, ..r };
        for _ in 0..1000 {
            let (start, chain) = pick_chain(&mut rng, short, 16);
            assert!(chain <= 3 && start >= 100 && start + chain <= 103);
        }
    }

    #[test]
    fn updates_rollbacks_and_log_sizes_follow_the_plan() {
        // RandomUserReadWriteRatio=9000 (90 % of pages read only), RollbackChance=100 (10 %).
        let p = plan(0.1, 0.1);
        let mut rng = SmallRng::seed_from_u64(11);
        let (mut updates, mut rolled) = (0u32, 0u32);
        for _ in 0..100_000 {
            match page_action(&mut rng, &p, true) {
                PageAction::Keep => {}
                PageAction::RolledBack => rolled += 1,
                PageAction::Update(bytes) => {
                    assert!((64..=8192).contains(&bytes), "{bytes}");
                    updates += 1;
                }
            }
        }
        // 9,000 updates and 1,000 rollbacks expected; a seed's draw is within a few percent.
        assert!((8_500..9_500).contains(&updates), "{updates}");
        assert!((800..1_200).contains(&rolled), "{rolled}");
        // Without a log nothing is logged, and the draws of the log size are not made.
        let mut a = SmallRng::seed_from_u64(3);
        assert!((0..1000).all(|_| !matches!(
            page_action(&mut a, &plan(1.0, 0.0), false),
            PageAction::Update(_)
        )));
        // Read only, and all writes: the two ends.
        let mut b = SmallRng::seed_from_u64(5);
        assert!((0..1000).all(|_| page_action(&mut b, &plan(0.0, 0.5), true) == PageAction::Keep));
        assert!((0..1000).all(|_| matches!(
            page_action(&mut b, &plan(1.0, 0.0), true),
            PageAction::Update(_)
        )));
    }

    #[test]
    fn the_same_seed_decides_the_same_cycle() {
        let r = Region {
            file: 0,
            start: 1,
            len: 500,
        };
        let p = plan(0.3, 0.2);
        let decide = |seed: u64| {
            let mut rng = SmallRng::seed_from_u64(seed);
            let (start, chain) = pick_chain(&mut rng, r, 64);
            let actions: Vec<PageAction> = (0..chain)
                .map(|_| page_action(&mut rng, &p, true))
                .collect();
            (start, chain, actions)
        };
        assert_eq!(decide(42), decide(42));
        assert_ne!(decide(42), decide(43));
    }
}
