//! The batch users' choices, tested on their own: run lengths, first positions, the audit's
//! and the sequential walks' next runs, the read-ahead's misses, cache hits and pauses.

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

/// The audit user's walk as its loop read before `audit_step` and `requests` were taken out
/// of it (a transcription, the reads recorded instead of made): the reference the pure
/// functions must match.
fn old_audit_walk(
    id: u16,
    sizes: &[u64],
    budget: u64,
    request: u64,
    steps: usize,
) -> Vec<(usize, u64, u64)> {
    let mut file_pos = id as usize % sizes.len();
    let mut page = 1u64;
    let mut reads = Vec::new();
    for _ in 0..steps {
        let pages = sizes[file_pos];
        if page >= pages {
            file_pos = (file_pos + 1) % sizes.len();
            page = 1;
            continue;
        }
        let mut left = budget.max(1);
        while left > 0 && page < pages {
            let n = left.min(request).min(pages - page);
            reads.push((file_pos, page, n));
            page += n;
            left -= n;
        }
    }
    reads
}

/// The same walk through `audit_start`, `audit_step` and `requests`.
fn audit_walk(
    id: u16,
    sizes: &[u64],
    budget: u64,
    request: u64,
    steps: usize,
) -> Vec<(usize, u64, u64)> {
    let mut at = Cursor::at(audit_start(id, sizes.len()), 1);
    let mut reads = Vec::new();
    for _ in 0..steps {
        let slot = at.slot;
        if let Some((first, len)) = audit_step(&mut at, sizes.len(), sizes[slot], budget) {
            reads.extend(requests(first, len, request).map(|(f, n)| (slot, f, n)));
        }
    }
    reads
}

#[test]
fn the_audit_walks_every_file_in_turn_a_budget_per_cycle() {
    // Files of 10 pages, a header alone, 5 pages; 4 pages a cycle in requests of 3.
    let reads = audit_walk(0, &[10, 1, 5], 4, 3, 8);
    assert_eq!(
        reads,
        vec![
            (0, 1, 3),
            (0, 4, 1),
            (0, 5, 3),
            (0, 8, 1),
            (0, 9, 1),
            (2, 1, 3),
            (2, 4, 1),
            (0, 1, 3),
            (0, 4, 1),
        ],
        "the header-only file is passed over, and the walk goes round the list"
    );
    // Each audit user starts in its own file, round the list.
    let starts: Vec<usize> = (0..6).map(|id| audit_start(id, 3)).collect();
    assert_eq!(starts, vec![0, 1, 2, 0, 1, 2]);
    assert_eq!(audit_start(5, 0), 0, "no data file: no division by zero");
    // A budget of 0 pages reads one page a cycle.
    let mut at = Cursor::at(0, 1);
    assert_eq!(audit_step(&mut at, 1, 10, 0), Some((1, 1)));
    // At a file's end the cursor moves to page 1 of the next file.
    let mut end = Cursor::at(1, 7);
    assert_eq!(audit_step(&mut end, 3, 7, 4), None);
    assert_eq!(end, Cursor { slot: 2, next: 1 });
}

#[test]
fn a_walk_goes_on_in_the_next_file_at_the_end_or_below_a_shrink() {
    let sizes = [20u64, 1, 12];
    let mut asked = Vec::new();
    let mut size = |slot: usize| {
        asked.push(slot);
        sizes[slot]
    };
    let mut at = Cursor::at(0, 15);
    assert_eq!(next_run(&mut at, 3, 8, &mut size), Some((0, 15, 5)));
    // The end of file 0: file 1 holds its header alone, so no run this cycle.
    assert_eq!(next_run(&mut at, 3, 8, &mut size), None);
    assert_eq!(at, Cursor { slot: 1, next: 1 });
    assert_eq!(next_run(&mut at, 3, 8, &mut size), Some((2, 1, 8)));
    assert_eq!(asked, vec![0, 0, 1, 1, 2], "a size read per file looked at");
    // Shrunk below the cursor: page 1 of the next file, round the list.
    let mut below = Cursor::at(2, 30);
    assert_eq!(next_run(&mut below, 3, 8, |s| sizes[s]), Some((0, 1, 8)));
    // One data file: the walk starts over at its page 1.
    let mut one = Cursor::at(0, 9);
    assert_eq!(next_run(&mut one, 1, 8, |_| 10), Some((0, 9, 1)));
    assert_eq!(next_run(&mut one, 1, 8, |_| 10), Some((0, 1, 8)));
}

#[test]
fn read_ahead_reads_the_runs_the_pool_does_not_hold() {
    let held = |p: u64| [12, 13, 17].contains(&p);
    assert_eq!(misses(10, 10, false, held), vec![(10, 2), (14, 3), (18, 2)]);
    assert_eq!(
        misses(10, 10, true, |_| panic!(
            "ForceReadAhead asks the pool nothing"
        )),
        vec![(10, 10)]
    );
    assert_eq!(misses(10, 10, false, |_| true), vec![], "all held");
    assert_eq!(misses(10, 0, false, |_| false), vec![]);
    assert_eq!(misses(10, 1, false, |_| false), vec![(10, 1)]);
}

proptest::proptest! {
    #[test]
    fn the_audit_walk_reads_as_its_loop_did(
        id in 0u16..8,
        sizes in proptest::collection::vec(0u64..40, 1..5),
        budget in 0u64..20,
        request in 1u64..9,
    ) {
        proptest::prop_assert_eq!(
            audit_walk(id, &sizes, budget, request, 40),
            old_audit_walk(id, &sizes, budget, request, 40)
        );
    }

    #[test]
    fn misses_are_the_pages_not_held_in_ascending_runs(
        start in 1u64..1_000,
        held in proptest::collection::vec(proptest::bool::ANY, 0..80),
    ) {
        let n = held.len() as u64;
        let runs = misses(start, n, false, |p| held[(p - start) as usize]);
        let read: Vec<u64> = runs.iter().flat_map(|&(f, len)| f..f + len).collect();
        let want: Vec<u64> = (start..start + n).filter(|p| !held[(p - start) as usize]).collect();
        proptest::prop_assert_eq!(read, want);
        // Runs are maximal: two runs never touch.
        proptest::prop_assert!(runs.windows(2).all(|p| p[0].0 + p[0].1 < p[1].0));
    }
}
