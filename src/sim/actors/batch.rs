//! The batch users: AuditUser (DBCC-style read and verify), ReadAheadUser (sequential
//! multi-page reads) and BulkUpdateUser (contiguous multi-page writes, minimally logged). The
//! read-ahead and bulk users each walk a sequential cursor (`cursor`) across their cycles.

use rand::rngs::SmallRng;

use super::context::Run;
use super::cursor::{requests, Cursor};
use super::outstanding::{After, Outstanding};
use super::worker::{between, chance, Worker};
use crate::sim::engine::pool::PageKey;
use crate::sim::plan::BatchPlan;

/// Size of the log record a bulk operation writes before its pages.
const BULK_LOG_BYTES: u32 = 512;

/// Pauses after every `delay_after_cycles` cycles; false when the phase ended.
fn pace(w: &Worker<'_>, plan: &BatchPlan, cycles: u32) -> bool {
    if pauses(plan, cycles) {
        w.pause(plan.delay)
    } else {
        !w.run.controls.stop.phase_over()
    }
}

/// True when `pace` pauses after this cycle.
fn pauses(plan: &BatchPlan, cycles: u32) -> bool {
    cycles.is_multiple_of(plan.delay_after_cycles.max(1)) && !plan.delay.is_zero()
}

/// AuditUser: walks every data file page by page, `BuffersValidated` pages per cycle, in
/// requests of at most the worker's buffer.
pub fn audit(w: &mut Worker<'_>, plan: &BatchPlan) {
    let files = w.run.files.data.len();
    let mut at = Cursor::at(audit_start(w.id, files), 1);
    let mut cycles = 0u32;
    while !w.run.controls.stop.phase_over() {
        let file = w.run.files.data[at.slot];
        let pages = *w.run.files[file].pages.read();
        let Some((first, len)) = audit_step(&mut at, files, pages, plan.max_pages) else {
            continue;
        };
        for (first, n) in requests(first, len, w.max_pages() as u64) {
            w.read_run(file, first, n);
        }
        cycles += 1;
        if !pace(w, plan, cycles) {
            break;
        }
    }
}

/// The data file (a place in the run's list of `files`) audit user `id` starts its walk in:
/// the users start in different files, round the list, so that they do not read in step.
pub fn audit_start(id: u16, files: usize) -> usize {
    usize::from(id) % files.max(1)
}

/// The run an audit cycle reads at `at` in a file of `pages` pages: at most `budget` pages
/// (`BuffersValidated`, at least one), as `(first, len)`, the cursor moved past it; at the
/// file's end `None`, the cursor moved to page 1 of the next of `files` data files, whose size
/// the next step reads.
pub fn audit_step(at: &mut Cursor, files: usize, pages: u64, budget: u64) -> Option<(u64, u64)> {
    let run = at.take(pages, budget);
    if run.is_none() {
        at.wrap(files);
    }
    run
}

/// Runs `body` once per cycle on a run of `BuffersMin..=BuffersMax` pages at the user's
/// sequential cursor (see `cursor`: it continues across cycles, and moves to page 1 of the
/// next data file at a file's end), pacing as the plan says; the flight splits a run longer
/// than the worker's buffer (the generation's cap, `SimPlan::caps`) into requests of the
/// buffer. On an actor's own io_uring the flight's requests are waited for before a pause: a
/// completion there is stamped when the actor reaps it, so one left in flight over a pause
/// would look as slow as the pause to the throttle and the statistics.
fn each_cycle<'a>(
    w: &mut Worker<'a>,
    plan: &BatchPlan,
    flight: &mut Outstanding<'a>,
    mut body: impl FnMut(&mut Worker<'a>, &mut Outstanding<'a>, usize, u64, u64),
) {
    let (run, files) = (w.run, w.run.files.data.len());
    let size = |slot: usize| size_of(run, run.files.data[slot]);
    let mut cursor: Option<Cursor> = None;
    let mut cycles = 0u32;
    while !run.controls.stop.phase_over() {
        let want = run_length(&mut w.rng, plan);
        let at = match cursor.as_mut() {
            Some(at) => at,
            None => cursor.insert(first_position(&mut w.rng, files, size)),
        };
        if let Some((slot, start, n)) = next_run(at, files, want, size) {
            body(w, flight, run.files.data[slot], start, n);
        }
        cycles += 1;
        if pauses(plan, cycles) && flight.reaps_itself() {
            flight.drain(w);
        }
        if !pace(w, plan, cycles) {
            break;
        }
    }
}

/// The length of a cycle's run: `BuffersMin..=BuffersMax` pages (at least 1).
pub fn run_length(rng: &mut SmallRng, plan: &BatchPlan) -> u64 {
    between(rng, plan.min_pages.max(1), plan.max_pages.max(1))
}

/// A user's first position: a random one of `files` data files, then a random page past its
/// header in it (`pages_of(slot)` is that file's size in pages, read only for the file drawn).
/// A file of its header alone, or of two pages, starts at page 1.
pub fn first_position(
    rng: &mut SmallRng,
    files: usize,
    pages_of: impl FnOnce(usize) -> u64,
) -> Cursor {
    let slot = between(rng, 0, files as u64 - 1) as usize;
    let pages = pages_of(slot);
    Cursor::at(slot, between(rng, 1, pages.saturating_sub(1).max(1)))
}

/// The data file's current size in pages. Recursive: the caller's requests in flight hold
/// the size shared, and a resize waiting for them must not make this read wait behind it.
fn size_of(run: &Run<'_>, file: usize) -> u64 {
    *run.files[file].pages.read_recursive()
}

/// The next run of at most `want` pages at `at` among `files` data files, as `(slot, first,
/// len)` (`pages_of(slot)` reads the size of the file at that place in the list); at the end
/// of a file (or below the cursor after a shrink) the walk goes on at page 1 of the next data
/// file. `None` when that file holds no page past its header either.
pub fn next_run(
    at: &mut Cursor,
    files: usize,
    want: u64,
    mut pages_of: impl FnMut(usize) -> u64,
) -> Option<(usize, u64, u64)> {
    if let Some((first, n)) = at.take(pages_of(at.slot), want) {
        return Some((at.slot, first, n));
    }
    at.wrap(files);
    at.take(pages_of(at.slot), want)
        .map(|(first, n)| (at.slot, first, n))
}

/// ReadAheadUser: reads the next `BuffersRAMin..=BuffersRAMax` consecutive pages at its cursor
/// per cycle (with ForceReadAhead=FALSE, only those not already in the buffer pool).
/// Reads are posted without waiting for each (verified as they complete), up to the run's
/// asynchronous depth across cycles.
pub fn read_ahead<'a>(w: &mut Worker<'a>, plan: &BatchPlan) {
    let mut flight = Outstanding::new(w.run);
    each_cycle(w, plan, &mut flight, |w, flight, file, start, n| {
        flight.reap_ready(w);
        let force = w.run.plan.force_read_ahead;
        let pool = &w.run.files.pool;
        let held = |page: u64| pool.lookup(PageKey { file, page });
        for (first, len) in misses(start, n, force, held) {
            flight.read(w, file, first, len, After::Cache);
        }
    });
    flight.drain(w);
}

/// The runs of `start..start + n` to read, in order: all of it with ForceReadAhead, else the
/// contiguous runs of the pages the buffer pool does not hold (`held`, asked only without
/// ForceReadAhead).
pub fn misses(
    start: u64,
    n: u64,
    force: bool,
    mut held: impl FnMut(u64) -> bool,
) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for page in start..start + n {
        if !force && held(page) {
            continue;
        }
        match out.last_mut() {
            Some((first, len)) if *first + *len == page => *len += 1,
            _ => out.push((page, 1)),
        }
    }
    out
}

/// Reads the pages of `start..start + n` that the buffer pool does not serve, in contiguous
/// runs, and caches them: a cached page is served with probability `hit_ratio`.
pub fn read_misses(w: &mut Worker<'_>, file: usize, start: u64, n: u64, hit_ratio: f64) {
    let mut run: Option<u64> = None;
    for page in start..=start + n {
        let miss = page < start + n && {
            let cached = hit_ratio > 0.0 && w.run.files.pool.lookup(PageKey { file, page });
            !served_from_cache(&mut w.rng, cached, hit_ratio)
        };
        match (miss, run) {
            (true, None) => run = Some(page),
            (false, Some(s)) => {
                w.read_run(file, s, page - s);
                for p in s..page {
                    w.run.files.pool.insert_clean(PageKey { file, page: p });
                }
                run = None;
            }
            _ => {}
        }
    }
}

/// Whether a page the buffer pool holds (`cached`) is served from it: with probability
/// `hit_ratio`, always at 1 or more. A page not held is read, and no draw is made for it, nor
/// for a held page at a ratio of 1.
pub fn served_from_cache(rng: &mut SmallRng, cached: bool, hit_ratio: f64) -> bool {
    cached && (hit_ratio >= 1.0 || chance(rng, hit_ratio))
}

/// BulkUpdateUser: logs one small record, then writes the next `BuffersBUMin..=BuffersBUMax`
/// consecutive pages at its cursor in one gather write.
/// The writes are posted without waiting for each, up to the run's asynchronous depth
/// across cycles.
pub fn bulk_update<'a>(w: &mut Worker<'a>, plan: &BatchPlan) {
    let mut flight = Outstanding::new(w.run);
    each_cycle(w, plan, &mut flight, |w, flight, file, start, n| {
        flight.reap_ready(w);
        let lsn = w
            .run
            .files
            .log_of(file)
            .map_or(0, |l| l.wal.append(BULK_LOG_BYTES));
        flight.write(w, file, start, n, lsn, After::Nothing);
    });
    flight.drain(w);
}

#[cfg(test)]
mod tests;
