//! The shrink user's choices, tested on their own: what a resize does and where its moves go.

use super::*;
use rand::SeedableRng;

fn shrink_plan() -> ShrinkPlan {
    ShrinkPlan {
        min_interval: Duration::from_millis(100),
        max_interval: Duration::from_millis(300),
        min_extends: 1,
        max_extends: 4,
    }
}

#[test]
fn only_files_that_can_grow_and_shrink_are_candidates() {
    let fixed = FilePlan::data("a.mdf", 100);
    let growing = FilePlan {
        shrinkable: true,
        increment_pages: 10,
        max_pages: 200,
        ..fixed.clone()
    };
    let no_room = FilePlan {
        max_pages: 100,
        ..growing.clone()
    };
    let no_step = FilePlan {
        increment_pages: 0,
        ..growing.clone()
    };
    let log = FilePlan::log("a.ldf", 100);
    let files = [fixed, growing.clone(), no_room, no_step, log, growing];
    assert_eq!(candidates(&files, &[0, 1, 2, 3, 5]), vec![1, 5]);
    assert_eq!(candidates(&files, &[0, 2]), Vec::<usize>::new());
}

#[test]
fn waits_and_steps_stay_in_the_plan_and_grow_half_the_time() {
    let plan = shrink_plan();
    let mut rng = SmallRng::seed_from_u64(8);
    let (mut grows, mut per_file, mut per_steps) = (0u32, [0u32; 3], [0u32; 5]);
    for _ in 0..30_000 {
        let wait = pick_wait(&mut rng, &plan);
        assert!(
            wait >= plan.min_interval && wait <= plan.max_interval,
            "{wait:?}"
        );
        let s = pick_step(&mut rng, &plan, 3);
        per_file[s.candidate] += 1;
        per_steps[s.steps as usize] += 1;
        grows += u32::from(s.grow);
    }
    assert!((14_500..15_500).contains(&grows), "{grows}");
    assert!(
        per_file.iter().all(|&n| (9_500..10_500).contains(&n)),
        "{per_file:?}"
    );
    assert_eq!(per_steps[0], 0);
    assert!(
        per_steps[1..].iter().all(|&n| (7_000..8_000).contains(&n)),
        "{per_steps:?}"
    );
    let same = |seed: u64| {
        let mut rng = SmallRng::seed_from_u64(seed);
        (0..10)
            .map(|_| (pick_wait(&mut rng, &plan), pick_step(&mut rng, &plan, 3)))
            .collect::<Vec<_>>()
    };
    assert_eq!(same(5), same(5));
    assert_ne!(same(5), same(6));
}

#[test]
fn moves_land_in_the_part_kept_past_the_header() {
    let mut rng = SmallRng::seed_from_u64(2);
    let (mut lowest, mut highest) = (u64::MAX, 0);
    for _ in 0..10_000 {
        let m = plan_moves(&mut rng, 1000, 900).expect("a shrink moves pages");
        assert_eq!(m.fits, 100, "the whole part cut off fits");
        assert!(m.first_dest >= 1 && m.first_dest + m.fits <= 900, "{m:?}");
        (lowest, highest) = (lowest.min(m.first_dest), highest.max(m.first_dest));
    }
    assert_eq!((lowest, highest), (1, 800), "anywhere in the part kept");
    // A part kept smaller than the part cut off: only what fits moves, from page 1.
    let (mut a, b) = (SmallRng::seed_from_u64(3), SmallRng::seed_from_u64(3));
    assert_eq!(
        plan_moves(&mut a, 1000, 10),
        Some(Moves {
            first_dest: 1,
            fits: 9
        })
    );
    assert_eq!(a, b, "a single place: no draw");
    // No shrink, or a file cut to its header: nothing moves, nothing is drawn.
    assert_eq!(plan_moves(&mut a, 100, 100), None);
    assert_eq!(plan_moves(&mut a, 100, 200), None);
    assert_eq!(plan_moves(&mut a, 100, 1), None);
    assert_eq!(a, b);
}

#[test]
fn moves_are_logged_a_batch_at_a_time() {
    let logged: Vec<(u64, u32)> = (0..70)
        .filter_map(|t| move_log_bytes(70, t).map(|b| (t, b)))
        .collect();
    assert_eq!(logged, vec![(0, 32 * 512), (32, 32 * 512), (64, 6 * 512)]);
    assert_eq!(move_log_bytes(1, 0), Some(512));
    assert_eq!(move_log_bytes(0, 0), None, "no move, no record");
}

#[test]
fn decide_stays_within_limits_and_turns_at_the_ends() {
    assert_eq!(
        decide(100, 100, 200, 10, 3, false),
        130,
        "at the minimum it grows"
    );
    assert_eq!(
        decide(200, 100, 200, 10, 3, true),
        170,
        "at the maximum it shrinks"
    );
    assert_eq!(decide(150, 100, 200, 10, 9, true), 200);
    assert_eq!(decide(150, 100, 200, 10, 9, false), 100);
}
