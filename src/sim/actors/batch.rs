//! The batch users: AuditUser (DBCC-style read and verify), ReadAheadUser (sequential
//! multi-page reads) and BulkUpdateUser (contiguous multi-page writes, minimally logged). The
//! read-ahead and bulk users each walk a sequential cursor (`cursor`) across their cycles.

use rand::rngs::SmallRng;

use super::context::Run;
use super::cursor::Cursor;
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
        let want = run_length(&mut w.rng, plan);
        let at = match cursor.as_mut() {
            Some(at) => at,
            None => {
                let (run, files) = (w.run, w.run.files.data.len());
                let size = |slot: usize| size_of(run, run.files.data[slot]);
                cursor.insert(first_position(&mut w.rng, files, size))
            }
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

/// The next run of at most `want` pages at `at`, as `(file, first, len)`; at the end of a
/// file (or below the cursor after a shrink) the walk goes on at page 1 of the next data
/// file. `None` when that file holds no page past its header either.
fn next_run(w: &Worker<'_>, at: &mut Cursor, want: u64) -> Option<(usize, u64, u64)> {
    let file = w.run.files.data[at.slot];
    if let Some((first, n)) = at.take(size_of(w.run, file), want) {
        return Some((file, first, n));
    }
    at.wrap(w.run.files.data.len());
    let file = w.run.files.data[at.slot];
    at.take(size_of(w.run, file), want)
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
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn runs_are_within_the_plan_and_spread_over_it() {
        let plan = BatchPlan::READ_AHEAD; // 32..=64 pages
        let mut rng = SmallRng::seed_from_u64(1);
        let mut seen = [0u32; 65];
        for _ in 0..33_000 {
            let n = run_length(&mut rng, &plan);
            assert!((32..=64).contains(&n), "{n}");
            seen[n as usize] += 1;
        }
        // 1,000 of each length expected; every length is drawn, none twice as often.
        assert!(
            seen[32..].iter().all(|&c| (700..1_300).contains(&c)),
            "{seen:?}"
        );
        // Enterprise's read-ahead (up to 1,024 pages) and a fixed size.
        let big = BatchPlan {
            min_pages: 512,
            max_pages: 1024,
            ..plan
        };
        assert!((0..1000).all(|_| (512..=1024).contains(&run_length(&mut rng, &big))));
        let fixed = BatchPlan {
            min_pages: 8,
            max_pages: 8,
            ..plan
        };
        assert!((0..100).all(|_| run_length(&mut rng, &fixed) == 8));
        // Zero pages configured is a run of one page.
        let zero = BatchPlan {
            min_pages: 0,
            max_pages: 0,
            ..plan
        };
        assert_eq!(run_length(&mut rng, &zero), 1);
    }

    #[test]
    fn a_first_position_is_past_the_header_of_a_file_drawn_at_random() {
        let sizes = [1000u64, 50, 2, 1];
        let mut rng = SmallRng::seed_from_u64(9);
        let mut per_file = [0u32; 4];
        for _ in 0..40_000 {
            let mut asked = None;
            let c = first_position(&mut rng, sizes.len(), |slot| {
                asked = Some(slot);
                sizes[slot]
            });
            assert_eq!(asked, Some(c.slot), "the size read is the drawn file's");
            per_file[c.slot] += 1;
            let last = sizes[c.slot].saturating_sub(1).max(1);
            assert!((1..=last).contains(&c.next), "{c:?}");
        }
        assert!(
            per_file.iter().all(|&n| (9_000..11_000).contains(&n)),
            "{per_file:?}"
        );
        // One data file: no file is drawn from the list, the page is.
        let mut a = SmallRng::seed_from_u64(4);
        let starts: Vec<u64> = (0..100)
            .map(|_| first_position(&mut a, 1, |_| 10).next)
            .collect();
        assert!(starts.iter().all(|&p| (1..=9).contains(&p)));
        assert!(starts.contains(&9) && starts.contains(&1));
    }

    #[test]
    fn the_same_seed_gives_the_same_walk_start_and_runs() {
        let plan = BatchPlan::BULK;
        let decide = |seed: u64| {
            let mut rng = SmallRng::seed_from_u64(seed);
            let want: Vec<u64> = (0..20).map(|_| run_length(&mut rng, &plan)).collect();
            let c = first_position(&mut rng, 3, |_| 5_000);
            (want, c)
        };
        assert_eq!(decide(42), decide(42));
        assert_ne!(decide(42), decide(43));
    }

    #[test]
    fn cache_hits_follow_the_ratio_and_draw_only_for_held_pages() {
        let mut rng = SmallRng::seed_from_u64(5);
        let hits = (0..100_000)
            .filter(|_| served_from_cache(&mut rng, true, 0.25))
            .count();
        assert!((24_000..26_000).contains(&hits), "{hits}");
        // A page not held, and a held page at a ratio of 1, take no draw.
        let (mut a, b) = (SmallRng::seed_from_u64(6), SmallRng::seed_from_u64(6));
        assert!(!served_from_cache(&mut a, false, 0.5));
        assert!(served_from_cache(&mut a, true, 1.0));
        assert!(!served_from_cache(&mut a, true, 0.0));
        assert_eq!(a, b, "no draw was made");
    }

    #[test]
    fn a_pause_comes_after_every_nth_cycle_when_there_is_a_delay() {
        let plan = BatchPlan::READ_AHEAD; // 200 ms after every 2 cycles
        let paused: Vec<u32> = (1..=6).filter(|&c| pauses(&plan, c)).collect();
        assert_eq!(paused, vec![2, 4, 6]);
        let none = BatchPlan {
            delay: std::time::Duration::ZERO,
            ..plan
        };
        assert!((1..=6).all(|c| !pauses(&none, c)));
        let every = BatchPlan {
            delay_after_cycles: 0,
            ..plan
        };
        assert!(
            (1..=6).all(|c| pauses(&every, c)),
            "0 cycles is every cycle"
        );
    }
}
