//! The batch users: AuditUser (DBCC-style read and verify), ReadAheadUser (sequential
//! multi-page reads) and BulkUpdateUser (contiguous multi-page writes, minimally logged). The
//! read-ahead and bulk users each walk a sequential cursor (`cursor`) across their cycles.

use super::cursor::Cursor;
use super::outstanding::{After, Outstanding};
use super::worker::Worker;
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

/// AuditUser: walks every data file page by page, `BuffersValidated` pages per cycle.
pub fn audit(w: &mut Worker<'_>, plan: &BatchPlan) {
    let mut file_pos = w.id as usize % w.run.files.data.len();
    let mut page = 1u64;
    let mut cycles = 0u32;
    while !w.run.controls.stop.phase_over() {
        let file = w.run.files.data[file_pos];
        let pages = *w.run.files[file].pages.read();
        if page >= pages {
            file_pos = (file_pos + 1) % w.run.files.data.len();
            page = 1;
            continue;
        }
        let mut left = plan.max_pages.max(1);
        while left > 0 && page < pages {
            let n = left.min(w.max_pages() as u64).min(pages - page);
            w.read_run(file, page, n);
            page += n;
            left -= n;
        }
        cycles += 1;
        if !pace(w, plan, cycles) {
            break;
        }
    }
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
    let mut cursor: Option<Cursor> = None;
    let mut cycles = 0u32;
    while !w.run.controls.stop.phase_over() {
        let want = w.between(plan.min_pages.max(1), plan.max_pages.max(1));
        let at = match cursor.as_mut() {
            Some(at) => at,
            None => cursor.insert(first_position(w)),
        };
        if let Some((file, start, n)) = next_run(w, at, want) {
            body(w, flight, file, start, n);
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

/// A user's first position: a random data file and a random page past its header.
fn first_position(w: &mut Worker<'_>) -> Cursor {
    let slot = w.between(0, w.run.files.data.len() as u64 - 1) as usize;
    let pages = size_of(w, w.run.files.data[slot]);
    Cursor::at(slot, w.between(1, pages.saturating_sub(1).max(1)))
}

/// The data file's current size in pages. Recursive: the caller's requests in flight hold
/// the size shared, and a resize waiting for them must not make this read wait behind it.
fn size_of(w: &Worker<'_>, file: usize) -> u64 {
    *w.run.files[file].pages.read_recursive()
}

/// The next run of at most `want` pages at `at`, as `(file, first, len)`; at the end of a
/// file (or below the cursor after a shrink) the walk goes on at page 1 of the next data
/// file. `None` when that file holds no page past its header either.
fn next_run(w: &Worker<'_>, at: &mut Cursor, want: u64) -> Option<(usize, u64, u64)> {
    let file = w.run.files.data[at.slot];
    if let Some((first, n)) = at.take(size_of(w, file), want) {
        return Some((file, first, n));
    }
    at.wrap(w.run.files.data.len());
    let file = w.run.files.data[at.slot];
    at.take(size_of(w, file), want)
        .map(|(first, n)| (file, first, n))
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
        for (first, len) in misses(w, file, start, n, force) {
            flight.read(w, file, first, len, After::Cache);
        }
    });
    flight.drain(w);
}

/// The runs of `start..start + n` to read: all of it with ForceReadAhead, else those pages
/// the buffer pool does not hold, in contiguous runs.
fn misses(w: &Worker<'_>, file: usize, start: u64, n: u64, force: bool) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for page in start..start + n {
        if !force && w.run.files.pool.lookup(PageKey { file, page }) {
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
            !(cached && (hit_ratio >= 1.0 || w.chance(hit_ratio)))
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
