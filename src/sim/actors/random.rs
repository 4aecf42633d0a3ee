//! RandomUser: OLTP-style work. Picks a region of a data file, reads a chain of pages in it
//! (cache hits cost no I/O), updates a share of them through the log, commits.
//!
//! With `CPUSimulation=TRUE` each cycle also spends `CPUCyclesMin..=CPUCyclesMax` rounds of
//! busy work ([`busy`]) after its reads, the CPU a query spends on the rows it read, so that
//! I/O and computation interleave on the user's thread (SQLIOSim's keys are undocumented:
//! this is our reading, in docs/configuration.md). One round is a multiply and a rotate, a
//! few CPU cycles; the user's closing line says how many rounds it spent.

use super::worker::Worker;
use crate::sim::engine::pool::PageKey;

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

/// Picks a region of `min..=max` pages inside a file of `pages` pages (page 0 excluded).
pub fn pick_region(
    w: &mut Worker<'_>,
    file: usize,
    pages: u64,
    min: u64,
    max: u64,
) -> Option<Region> {
    let usable = pages.checked_sub(1).filter(|&u| u > 0)?;
    let len = w.between(min.max(1), max.max(1)).min(usable);
    let start = w.between(1, pages - len);
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
            region = pick_region(w, file, pages, plan.min_chain, plan.max_chain);
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

fn one_cycle(w: &mut Worker<'_>, r: Region, plan: &crate::sim::plan::RandomPlan) {
    let chain = w.between(1, r.len.min(w.max_pages() as u64));
    let start = r.start + w.between(0, r.len - chain);
    let ratio = w.run.plan.cache_hit_ratio;
    super::batch::read_misses(w, r.file, start, chain, ratio);
    let mut last_lsn = 0;
    for page in start..start + chain {
        if !w.chance(plan.write_ratio) {
            continue;
        }
        if w.chance(plan.rollback) {
            // Rolled back in memory: the change never reaches the log or the page.
            continue;
        }
        let Some(log) = w.run.files.log_of(r.file) else {
            continue;
        };
        let lsn = log
            .wal
            .append(w.between(u64::from(plan.min_log), u64::from(plan.max_log)) as u32);
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
