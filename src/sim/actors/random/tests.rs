//! The random user's choices, tested on their own: regions, chains, page actions, the
//! busy work of a cycle, and the seed that replays them.

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

/// The data files of the tests below and their sizes: a big one, a small one, a file of two
/// pages (one page past its header).
const DATA: [usize; 3] = [0, 2, 3];
fn size_of(file: usize) -> u64 {
    match file {
        0 => 1000,
        2 => 50,
        _ => 2,
    }
}

#[test]
fn a_region_is_drawn_first_then_kept_until_the_user_jumps() {
    let p = RandomPlan {
        jump: 0.25,
        ..plan(0.1, 0.1)
    };
    let mut rng = SmallRng::seed_from_u64(8);
    let (mut region, mut jumps, mut per_file) = (None, 0u32, [0u32; 4]);
    for cycle in 0..40_000 {
        let mut asked = None;
        let next = next_region(&mut rng, region, &DATA, &p, |f| {
            asked = Some(f);
            size_of(f)
        });
        let r = next.expect("every file holds a page past its header");
        match asked {
            // A jump (or the first region): the size read is the drawn file's.
            Some(f) => {
                assert_eq!(f, r.file);
                jumps += u32::from(cycle > 0);
                per_file[f] += 1;
            }
            None => assert_eq!(Some(r), region, "no jump: the region held is kept"),
        }
        assert!(r.start >= 1 && r.start + r.len <= size_of(r.file), "{r:?}");
        region = next;
    }
    // A quarter of the cycles jump (10,000 expected), to each file a third of the time.
    assert!((9_500..10_500).contains(&jumps), "{jumps}");
    assert!(
        DATA.iter().all(|&f| (3_000..3_700).contains(&per_file[f])),
        "{per_file:?}"
    );
}

#[test]
fn jump_chances_of_0_and_1_keep_or_always_replace_the_region() {
    let held = Some(Region {
        file: 0,
        start: 10,
        len: 8,
    });
    let never = RandomPlan {
        jump: 0.0,
        ..plan(0.1, 0.1)
    };
    let (mut a, b) = (SmallRng::seed_from_u64(1), SmallRng::seed_from_u64(1));
    for _ in 0..100 {
        let next = next_region(&mut a, held, &DATA, &never, |_| panic!("no jump"));
        assert_eq!(next, held);
    }
    assert_eq!(a, b, "a jump chance of 0 draws nothing");
    let always = RandomPlan {
        jump: 1.0,
        ..plan(0.1, 0.1)
    };
    let mut jumped = 0;
    for _ in 0..100 {
        next_region(&mut a, held, &DATA, &always, |f| {
            jumped += 1;
            size_of(f)
        });
    }
    assert_eq!(jumped, 100);
}

#[test]
fn no_data_file_or_a_header_alone_gives_no_region() {
    let p = plan(0.1, 0.1);
    let (mut a, b) = (SmallRng::seed_from_u64(4), SmallRng::seed_from_u64(4));
    assert_eq!(next_region(&mut a, None, &[], &p, |_| 100), None);
    assert_eq!(a, b, "no data file: no draw");
    assert_eq!(next_region(&mut a, None, &[7], &p, |_| 1), None);
    // The one-page-past-the-header file: its only region is page 1.
    let r = next_region(&mut a, None, &[3], &p, size_of);
    assert_eq!(
        r,
        Some(Region {
            file: 3,
            start: 1,
            len: 1
        })
    );
}

#[test]
fn regions_and_busy_work_replay_the_draws_of_the_loop_they_came_from() {
    // Pinned from the random user's loop before `next_region` and `cpu_rounds` were taken
    // out of it (the same plan, files and seed, no cycle's draws in between): a change of
    // the draws' order or ranges changes what a seed replays.
    let p = RandomPlan {
        jump: 0.3,
        ..plan(0.1, 0.1)
    };
    let mut rng = SmallRng::seed_from_u64(2024);
    let mut region = None;
    let mut got = Vec::new();
    for _ in 0..12 {
        region = next_region(&mut rng, region, &DATA, &p, size_of);
        let r = region.expect("a region");
        let n = cpu_rounds(&mut rng, Some((3, 10))).expect("CPU simulation on");
        got.push((r.file, r.start, r.len, n));
    }
    let pinned = [
        (2, 7, 24, 6),
        (2, 7, 24, 9),
        (2, 7, 24, 8),
        (2, 8, 41, 7),
        (2, 8, 41, 5),
        (2, 8, 41, 5),
        (3, 1, 1, 8),
        (3, 1, 1, 7),
        (2, 1, 28, 7),
        (2, 1, 28, 9),
        (2, 1, 28, 8),
        (2, 1, 28, 6),
    ];
    assert_eq!(got, pinned);
}

#[test]
fn busy_work_rounds_are_within_the_configured_range() {
    let (mut a, b) = (SmallRng::seed_from_u64(6), SmallRng::seed_from_u64(6));
    assert_eq!(cpu_rounds(&mut a, None), None, "CPUSimulation=FALSE");
    assert_eq!(cpu_rounds(&mut a, Some((5, 0))), None, "CPUCyclesMax=0");
    assert_eq!(a, b, "neither draws");
    let mut seen = [0u32; 11];
    for _ in 0..8_000 {
        let n = cpu_rounds(&mut a, Some((3, 10))).expect("on");
        assert!((3..=10).contains(&n), "{n}");
        seen[n as usize] += 1;
    }
    assert!(seen[3..].iter().all(|&c| c > 800), "{seen:?}");
    assert!(
        (0..100).all(|_| cpu_rounds(&mut a, Some((50, 20))) == Some(20)),
        "a minimum above the maximum is the maximum"
    );
    assert_eq!(cpu_rounds(&mut a, Some((7, 7))), Some(7));
}

proptest::proptest! {
    #[test]
    fn a_region_is_always_inside_the_file_drawn(
        seed: u64,
        sizes in proptest::collection::vec(2u64..5_000, 1..6),
        min in 0u64..200,
        extra in 0u64..200,
        jump in 0.0f64..=1.0,
    ) {
        let p = RandomPlan { jump, min_chain: min, max_chain: min + extra, ..plan(0.1, 0.1) };
        let data: Vec<usize> = (0..sizes.len()).collect();
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut region = None;
        for _ in 0..20 {
            region = next_region(&mut rng, region, &data, &p, |f| sizes[f]);
            let r = region.expect("every file holds a page past its header");
            proptest::prop_assert!(r.file < sizes.len());
            proptest::prop_assert!(r.len >= 1 && r.len <= (min + extra).max(1));
            proptest::prop_assert!(r.start >= 1 && r.start + r.len <= sizes[r.file]);
        }
    }
}
