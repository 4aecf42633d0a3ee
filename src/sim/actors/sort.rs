//! The Sort User (issue #25 §3): sort runs and hash partitions spilled to tempdb, as SQL
//! Server spills them when memory is short. Each Sort User owns a tempdb file beside the first
//! data file (`NAME.sort<i>`, `SimPlan::tempdb_path`, created and allocated at its start, removed at its end) cut into
//! extents of `RunPages` pages. One sort:
//!
//! 1. allocates `RunsPerMerge` extents — half the time the ones the last sort just freed, so a
//!    freed extent is reused at once — and writes a run of stamped pages into each, one gather
//!    write per run, each page at its extent's next generation;
//! 2. reads the runs back merged: a few pages of each run in turn, each page verified against
//!    the generation just written;
//! 3. frees the extents, in random order.
//!
//! A bad page is re-read, as every reader re-reads (`evidence::report_outside`): one that read
//! back once as its extent's previous tenant and right on a retry is a stale read, one that
//! stays its previous tenant or zeros a lost write, and so on (the verdict's class): a finding of the Sort User on the
//! tempdb file. tempdb is never durable: the journal never holds its pages, a crash owes
//! nothing of it, and a rerun recreates what a killed run left. A file with a finding is kept
//! as evidence (a rerun after a run that found errors keeps it under the run's id); a clean one
//! is removed. Its I/O is in the run's totals and the Sort User's statistics, in no file's
//! line (the file is not of the set), and not under the throttle.

use std::path::PathBuf;
use std::sync::Arc;

use rand::rngs::SmallRng;

use super::evidence;
use super::worker::{between, chance, Worker};
use crate::findings::{Finding, Severity};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::layout::{self, PageStamp};
use crate::page::{verify, ActorKind, Expect, ExpectedState, PAGE_SIZE};
use crate::sim::engine::manifest::Manifest;
use crate::sim::plan::SimPlan;
use crate::stats::OpKind;

/// Each Sort User's tempdb file: scratch.
pub fn owns(plan: &SimPlan, m: &mut Manifest) {
    for i in 0..plan.sections.sort.user_count as usize {
        m.scratch_opt(plan.tempdb_path(i));
    }
}

/// The `Func` of the Sort User's log lines.
const FUNC: &str = "SortUser::Sort";
/// File ids of the tempdb files (`+ i`): far from the data and log files' ids, so a page of
/// one landing in the other is told apart.
const FILE_ID_BASE: u32 = 0x5000;

/// What one Sort User keeps between sorts.
struct Spill {
    storage: Arc<dyn Storage>,
    path: PathBuf,
    file_id: u32,
    run_pages: usize,
    /// Each extent's generation (the writes it has had).
    generations: Vec<u64>,
    /// Free extents; the last ones pushed are the ones freed last.
    free: Vec<usize>,
    buf: AlignedBuf,
    findings: u64,
}

/// Runs Sort User `i` until the phase ends.
pub fn run(w: &mut Worker<'_>, i: usize) {
    let Some(mut spill) = open(w, i) else { return };
    let s = w.run.plan.sections.sort.clone();
    let delay = std::time::Duration::from_millis(u64::from(s.sort_delay_ms));
    let (mut sorts, mut runs) = (0u64, 0u64);
    'sorts: while !w.run.controls.stop.phase_over() {
        let mut taken = Vec::new();
        for _ in 0..s.runs_per_merge {
            let Some(extent) = allocate(w, &mut spill) else {
                break;
            };
            taken.push(extent);
            if !write_run(w, &mut spill, extent) {
                break 'sorts;
            }
        }
        if !merge(w, &mut spill, &taken) {
            break;
        }
        // Freed in random order: the next sort may reuse any of them first.
        spill.free.extend(free_order(&mut w.rng, taken));
        sorts += 1;
        runs += u64::from(s.runs_per_merge);
        if !w.pause(delay) {
            break;
        }
    }
    finish(w, &spill, sorts, runs);
}

/// Creates and allocates the tempdb file; `None` (said) when it cannot be.
fn open(w: &Worker<'_>, i: usize) -> Option<Spill> {
    let run = w.run;
    let s = &run.plan.sections.sort;
    let path = run.plan.tempdb_path(i)?;
    let file_id = FILE_ID_BASE + u32::try_from(i).ok()?;
    let pages = u64::from(s.temp_file_mb) * 128;
    let run_pages = s.run_pages.max(1) as usize;
    let made = run
        .create_scratch(&path, file_id, pages)
        .map_err(|e| e.to_string())
        .and_then(|storage| {
            let buf = AlignedBuf::new(run_pages * PAGE_SIZE).map_err(|e| e.to_string())?;
            Ok((storage, buf))
        });
    let (storage, buf) = match made {
        Ok(m) => m,
        Err(e) => {
            say(
                w,
                Severity::Error,
                format!(
                    "cannot create the tempdb file {}: {e}; this Sort User does not run",
                    path.display()
                ),
            );
            return None;
        }
    };
    let extents = extents(pages, run_pages as u64);
    Some(Spill {
        storage,
        path,
        file_id,
        run_pages,
        generations: vec![0; extents],
        free: (0..extents).rev().collect(),
        buf,
        findings: 0,
    })
}

/// The extents of `run_pages` pages a tempdb file of `pages` pages holds past its header; a
/// file smaller than a run holds none.
pub fn extents(pages: u64, run_pages: u64) -> usize {
    usize::try_from(pages.saturating_sub(1) / run_pages.max(1)).unwrap_or(0)
}

/// An extent for the next run, taken from the free list.
fn allocate(w: &mut Worker<'_>, spill: &mut Spill) -> Option<usize> {
    let k = pick_free(&mut w.rng, spill.free.len())?;
    Some(spill.free.swap_remove(k))
}

/// Which of `free` free extents (a place in the free list, the last freed last) the next run
/// takes: half the time the one freed last (reused at once), else any; `None` when none is
/// free.
pub fn pick_free(rng: &mut SmallRng, free: usize) -> Option<usize> {
    if free == 0 {
        return None;
    }
    Some(match chance(rng, 0.5) {
        true => free - 1,
        false => between(rng, 0, free as u64 - 1) as usize,
    })
}

/// The order in which a sort's extents `taken` go back to the free list: at random.
pub fn free_order(rng: &mut SmallRng, mut taken: Vec<usize>) -> Vec<usize> {
    let mut order = Vec::with_capacity(taken.len());
    while !taken.is_empty() {
        let k = between(rng, 0, taken.len() as u64 - 1) as usize;
        order.push(taken.swap_remove(k));
    }
    order
}

/// The merge's reads of one run of `run_pages` pages, as `(offset in the run, pages)`: a
/// quarter of the run at a time (at least a page), the runs read in turn at each offset.
pub fn merge_steps(run_pages: usize) -> impl Iterator<Item = (usize, usize)> {
    let step = (run_pages / 4).max(1);
    (0..run_pages)
        .step_by(step)
        .map(move |at| (at, step.min(run_pages - at)))
}

/// The first page of extent `e`.
fn first_page(spill: &Spill, e: usize) -> u64 {
    1 + (e * spill.run_pages) as u64
}

/// Writes extent `e`'s next generation as one run; false when the write failed (reported).
fn write_run(w: &mut Worker<'_>, spill: &mut Spill, e: usize) -> bool {
    spill.generations[e] += 1;
    let generation = spill.generations[e];
    let first = first_page(spill, e);
    for k in 0..spill.run_pages {
        let st = PageStamp {
            run_id: w.run.files.run_id,
            file_id: spill.file_id,
            page_id: first + k as u64,
            generation,
            lsn: 0,
            writer_kind: ActorKind::SortUser,
            writer_id: w.id,
            write_time_us: layout::now_us(),
        };
        layout::stamp_page(&mut spill.buf[k * PAGE_SIZE..(k + 1) * PAGE_SIZE], &st);
    }
    let len = spill.buf.len() as u64;
    let written = w.timed_outside(None, OpKind::Write, len, || {
        spill.storage.write_at(&spill.buf, first * PAGE_SIZE as u64)
    });
    match written {
        Ok(()) => true,
        Err(e) => {
            io_failed(w, spill, first, spill.run_pages, true, &e);
            false
        }
    }
}

/// A request of the tempdb file that failed. The device's failure (EIO and its kin, as
/// `io::oserr` tells them) is a `write_error` or `read_error` finding of the Sort User at the
/// request's first page; a request the platform refused for how it was made, or out of space,
/// is no finding of the device: said, and this Sort User stops.
fn io_failed(
    w: &Worker<'_>,
    spill: &mut Spill,
    page: u64,
    pages: usize,
    write: bool,
    e: &std::io::Error,
) {
    let what = if write { "write" } else { "read" };
    let (path, id, n) = (&spill.path, spill.file_id, pages as u64);
    match evidence::outside_failure(w, path, id, (page, n), write, e, None) {
        Some(f) => report(w, spill, f),
        None => say(
            w,
            Severity::Error,
            format!(
                "a {what} of {pages} pages at page {page} of the tempdb file {} failed: {e}; not an integrity finding (the platform refused the request, or a condition such as no space); this Sort User stops",
                spill.path.display()
            ),
        ),
    }
}

/// Reads the runs of `extents` back merged, a few pages of each in turn, and verifies every
/// page; false when a read failed (reported).
fn merge(w: &mut Worker<'_>, spill: &mut Spill, extents: &[usize]) -> bool {
    for (at, n) in merge_steps(spill.run_pages) {
        for &e in extents {
            let page = first_page(spill, e) + at as u64;
            let bytes = &mut spill.buf[..n * PAGE_SIZE];
            let len = bytes.len() as u64;
            let storage = spill.storage.as_ref();
            let read = w.timed_outside(None, OpKind::Read, len, || {
                storage.read_at(bytes, page * PAGE_SIZE as u64)
            });
            if let Err(err) = read {
                io_failed(w, spill, page, n, false, &err);
                return false;
            }
            let state = ExpectedState::Written {
                generation: spill.generations[e],
            };
            for k in 0..n {
                let exp = Expect::known(w.run.files.run_id, spill.file_id, page + k as u64, state);
                let bytes = &spill.buf[k * PAGE_SIZE..(k + 1) * PAGE_SIZE];
                let v = verify::verify(bytes, &exp);
                if !v.is_ok() {
                    // Re-read, as every reader does: a read right on a retry was a stale read.
                    let storage = spill.storage.as_ref();
                    evidence::report_outside(w, storage, &spill.path, &exp, v, bytes, None);
                    spill.findings += 1;
                }
            }
        }
    }
    true
}

fn report(w: &Worker<'_>, spill: &mut Spill, f: Finding) {
    spill.findings += 1;
    w.run.report(f);
}

/// Removes a clean tempdb file (kept when it holds a finding), and says what was done.
fn finish(w: &Worker<'_>, spill: &Spill, sorts: u64, runs: u64) {
    let reused = spill.generations.iter().filter(|&&g| g > 1).count();
    let end = if spill.findings > 0 {
        format!(
            "{} finding(s); the file is kept as evidence",
            spill.findings
        )
    } else {
        match w.run.backend.remove(&spill.path) {
            Ok(()) => String::from("clean; the file is removed"),
            Err(e) => format!("clean; the file could not be removed: {e}"),
        }
    };
    say(
        w,
        Severity::Info,
        format!(
            "sort user {}: {sorts} sorts, {runs} runs of {} pages written and merged in {}, {reused} extents reused: {end}",
            w.id,
            spill.run_pages,
            spill.path.display()
        ),
    );
}

fn say(w: &Worker<'_>, severity: Severity, text: String) {
    w.run
        .message(severity, ActorKind::SortUser.name(), FUNC, text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_file_holds_whole_extents_past_its_header() {
        assert_eq!(
            extents(16 * 128, 32),
            63,
            "the default: 16 MB, runs of 32 pages"
        );
        assert_eq!(extents(129, 32), 4);
        assert_eq!(
            extents(128, 32),
            3,
            "the header page leaves the last extent short"
        );
        assert_eq!(extents(20, 32), 0, "a file smaller than a run");
        assert_eq!(extents(1, 1), 0);
        assert_eq!(extents(0, 0), 0);
    }

    #[test]
    fn half_the_runs_reuse_the_extent_freed_last() {
        let mut rng = SmallRng::seed_from_u64(3);
        assert_eq!(pick_free(&mut rng, 0), None);
        let mut per_place = [0u32; 10];
        for _ in 0..100_000 {
            let k = pick_free(&mut rng, 10).expect("ten are free");
            per_place[k] += 1;
        }
        // The last place: half the draws plus a tenth of the other half (55,000); every other
        // place a tenth of the other half (5,000).
        assert!((54_000..56_000).contains(&per_place[9]), "{per_place:?}");
        assert!(
            per_place[..9].iter().all(|&n| (4_500..5_500).contains(&n)),
            "{per_place:?}"
        );
        // One free extent: always it (the draws are made all the same).
        assert!((0..100).all(|_| pick_free(&mut rng, 1) == Some(0)));
    }

    #[test]
    fn extents_are_freed_each_once_in_an_order_the_seed_decides() {
        let order = |seed: u64| free_order(&mut SmallRng::seed_from_u64(seed), vec![4, 7, 1, 9]);
        let mut sorted = order(1);
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            vec![1, 4, 7, 9],
            "a permutation of the extents taken"
        );
        assert_eq!(order(1), order(1));
        let orders: std::collections::HashSet<Vec<usize>> = (0..200).map(order).collect();
        assert!(orders.len() > 20, "{} orders of 24", orders.len());
        assert!(free_order(&mut SmallRng::seed_from_u64(1), Vec::new()).is_empty());
    }

    #[test]
    fn a_merge_reads_each_run_a_quarter_at_a_time() {
        let steps = |n: usize| merge_steps(n).collect::<Vec<_>>();
        assert_eq!(steps(32), vec![(0, 8), (8, 8), (16, 8), (24, 8)]);
        assert_eq!(steps(10), vec![(0, 2), (2, 2), (4, 2), (6, 2), (8, 2)]);
        assert_eq!(steps(9), vec![(0, 2), (2, 2), (4, 2), (6, 2), (8, 1)]);
        assert_eq!(steps(3), vec![(0, 1), (1, 1), (2, 1)], "at least a page");
        assert_eq!(steps(1), vec![(0, 1)]);
        for n in 1..=128 {
            let s = steps(n);
            let covered: usize = s.iter().map(|&(_, len)| len).sum();
            assert_eq!(covered, n, "every page of a run of {n} once");
            assert!(s.windows(2).all(|p| p[0].0 + p[0].1 == p[1].0));
        }
    }
}
