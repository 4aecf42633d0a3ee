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

/// The region a cycle works in: the one held (`current`), unless there is none yet or the
/// user jumps (chance `JumpToNewRegionPercentage`, not drawn when there is none); then a
/// region of a data file drawn from `data` (the run's data files), whose size `pages_of` reads
/// for the file drawn only, so that no other file's size lock is taken. `None` when the file
/// drawn holds its header alone, or there is no data file (no draw then).
pub fn next_region(
    rng: &mut SmallRng,
    current: Option<Region>,
    data: &[usize],
    plan: &RandomPlan,
    pages_of: impl FnOnce(usize) -> u64,
) -> Option<Region> {
    if current.is_some() && !chance(rng, plan.jump) {
        return current;
    }
    let last = (data.len() as u64).checked_sub(1)?;
    let file = data[between(rng, 0, last) as usize];
    pick_region(rng, file, pages_of(file), plan.min_chain, plan.max_chain)
}

/// The rounds of busy work after a cycle's reads: `CPUCyclesMin..=CPUCyclesMax` with
/// `CPUSimulation=TRUE` (`cpu`, a minimum above the maximum taken as the maximum); `None`,
/// and no draw, without it or with a maximum of 0.
pub fn cpu_rounds(rng: &mut SmallRng, cpu: Option<(u64, u64)>) -> Option<u64> {
    let (lo, hi) = cpu.filter(|&(_, hi)| hi > 0)?;
    Some(between(rng, lo.min(hi), hi))
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
        let run = w.run;
        let size = |file: usize| *run.files[file].pages.read();
        region = next_region(&mut w.rng, region, &run.files.data, &plan, size);
        let Some(r) = region else {
            break;
        };
        one_cycle(w, r, &plan);
        if let Some(n) = cpu_rounds(&mut w.rng, cpu) {
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
mod tests;
