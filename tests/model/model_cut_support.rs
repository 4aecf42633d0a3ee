//! The model binary's `model_cut_support`: the power-cut helpers it shares with
//! tests/crash_model_compact.rs (tests/model_cut_support/), and those only this binary uses: a
//! resumed plan, lying flushes, a cut after every write, and what a cut lost.

#[path = "../model_cut_support/mod.rs"]
mod shared;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sqliosim::io::faulty::{Keep, PowerCut};
use sqliosim::io::FaultyBackend;
use sqliosim::page::PAGE_SIZE;
use sqliosim::sim::plan::SimPlan;

pub use shared::*;

const PS: u64 = PAGE_SIZE as u64;

/// The same plan resuming the file set, for `main`.
pub fn resume_plan(plan: &SimPlan, main: Duration) -> SimPlan {
    let mut p = plan.clone();
    p.resume = true;
    p.delete_at_startup = false;
    p.cycle_duration = main;
    p
}

impl Cutter {
    /// Makes the flushes of `paths` lie from the start of `phase` on.
    pub fn lying_from(mut self, phase: &'static str, paths: Vec<PathBuf>) -> Cutter {
        self.lie_from = Some((phase, paths));
        self
    }
}

/// The data pages whose acknowledged write the cut lost, with the generation lost (the
/// newest lost at each page).
pub fn lost_pages(cut: &PowerCut, data: &Path) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for l in cut.lost.iter().filter(|l| l.path == data) {
        for &(start, end) in &l.ranges {
            for page in start / PS..end.div_ceil(PS) {
                let at = (page * PS).saturating_sub(l.write_offset) as usize;
                let bytes = &l.bytes[at..(at + PAGE_SIZE).min(l.bytes.len())];
                let g = sqliosim::page::layout::read_stamp(bytes).map_or(0, |s| s.generation);
                let e = out.entry(page).or_insert(0);
                *e = (*e).max(g);
            }
        }
    }
    out
}

/// Arms `per_write` cuts (each its own seed, so its own tears) after every one of the first
/// `upto` writes: every moment between two writes of a run is cut.
pub fn every_write(backend: &FaultyBackend, upto: u64, per_write: usize, keep: Keep, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for n in 1..=upto {
        for _ in 0..per_write {
            backend.cut_after_writes(n, keep, rng.random(), format!("write {n}"));
        }
    }
}

/// The phase a cut taken after `writes` writes fell in, from the phases a sink saw begin.
pub fn phase_at(phases: &[(String, u64)], writes: u64) -> String {
    phases
        .iter()
        .rev()
        .find(|(_, w)| *w < writes)
        .map_or("setup".to_string(), |(p, _)| p.clone())
}

/// Files the cut lost acknowledged bytes of.
pub fn lost_files(cut: &PowerCut) -> BTreeSet<PathBuf> {
    cut.lost.iter().map(|l| l.path.clone()).collect()
}
