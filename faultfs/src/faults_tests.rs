//! Unit tests of the fault table's decisions: matching, counting, chance, status.

use super::*;
use crate::spec::parse_fault;

fn table_with(specs: &[&str]) -> FaultTable {
    let mut t = FaultTable::new(7);
    for s in specs {
        t.arm(parse_fault(s).expect("spec")).expect("arm");
    }
    t
}

#[test]
fn lost_write_fires_once_on_its_page_only() {
    let mut t = table_with(&["lost file=a page=5"]);
    assert_eq!(t.plan_write("a", 4 * 8192, 8192).action, WriteAction::Pass);
    assert_eq!(t.plan_write("b", 5 * 8192, 8192).action, WriteAction::Pass);
    assert_eq!(t.plan_write("a", 5 * 8192, 8192).action, WriteAction::Lost);
    assert_eq!(t.plan_write("a", 5 * 8192, 8192).action, WriteAction::Pass);
    assert!(
        t.status().contains("fired=1 hits=a@40960+8192"),
        "{}",
        t.status()
    );
}

#[test]
fn skip_and_count_select_which_writes_fire() {
    let mut t = table_with(&["eio-write skip=1 count=2"]);
    let got: Vec<bool> = (0..5)
        .map(|i| t.plan_write("x", i * 512, 512).action == WriteAction::Eio { errno: libc::EIO })
        .collect();
    assert_eq!(got, [false, true, true, false, false]);
}

#[test]
fn torn_ignores_writes_that_fit_in_keep() {
    let mut t = table_with(&["torn keep=4096"]);
    assert_eq!(t.plan_write("x", 0, 4096).action, WriteAction::Pass);
    assert_eq!(
        t.plan_write("x", 0, 8192).action,
        WriteAction::Torn { keep: 4096 }
    );
}

#[test]
fn misdirect_lands_shifted_or_in_other_file() {
    let mut t = table_with(&[
        "misdirect file=a page=1",
        "misdirect file=b shift=-4096 to=c",
    ]);
    let want = WriteAction::Misdirect {
        file: "a".into(),
        offset: 16384,
    };
    assert_eq!(t.plan_write("a", 8192, 8192).action, want);
    let want = WriteAction::Misdirect {
        file: "c".into(),
        offset: 4096,
    };
    assert_eq!(t.plan_write("b", 8192, 8192).action, want);
}

#[test]
fn first_armed_action_wins_and_later_ones_keep_their_count() {
    let mut t = table_with(&["lost", "eio-write"]);
    assert_eq!(t.plan_write("x", 0, 512).action, WriteAction::Lost);
    assert_eq!(
        t.plan_write("x", 0, 512).action,
        WriteAction::Eio { errno: libc::EIO }
    );
}

#[test]
fn delays_add_up_and_do_not_block_actions() {
    let mut t = table_with(&["delay-write ms=5", "delay-write ms=7", "lost"]);
    let plan = t.plan_write("x", 0, 512);
    assert_eq!((plan.delay_ms, plan.action), (12, WriteAction::Lost));
}

#[test]
fn stale_read_needs_a_saved_version_and_fires_once() {
    let mut t = table_with(&["stale file=a page=2"]);
    assert!(t.plan_read("a", 16384, 8192).stale.is_empty());
    let plan = t.plan_write("a", 16384, 8192);
    assert_eq!(plan.save_old, [(1, 16384, 8192)]);
    t.save_stale(1, 16384, vec![1; 8192]);
    assert_eq!(
        t.plan_read("a", 16384, 8192).stale,
        [(16384, vec![1; 8192])]
    );
    assert!(t.plan_read("a", 16384, 8192).stale.is_empty());
    assert!(
        t.plan_write("a", 16384, 8192).save_old.is_empty(),
        "exhausted"
    );
}

#[test]
fn flip_read_hits_only_reads_covering_the_byte() {
    let mut t = table_with(&["flip-read file=a byte=100 bit=3"]);
    assert!(t.plan_read("a", 512, 512).flips.is_empty());
    assert_eq!(t.plan_read("a", 0, 512).flips, [(100, 3)]);
    assert_eq!(
        t.plan_read("a", 0, 8192).flips,
        [(100, 3)],
        "every read by default"
    );
}

#[test]
fn flip_now_is_chosen_in_range_from_the_seed_and_repeatable() {
    let pick = |seed| {
        let mut t = FaultTable::new(seed);
        t.arm(parse_fault("flip file=a page=3").expect("spec"))
            .expect("arm")
            .1
    };
    let (file, byte, bit) = pick(1).expect("flip now");
    assert_eq!(file, "a");
    assert!((3 * 8192..4 * 8192).contains(&byte) && bit < 8);
    assert_eq!(pick(1), Some((file, byte, bit)));
    let mut t = FaultTable::new(1);
    assert!(
        t.arm(parse_fault("flip page=3").expect("spec")).is_err(),
        "needs a file"
    );
}

#[test]
fn probability_is_seeded_and_roughly_respected() {
    let fired = |seed| {
        let mut t = FaultTable::new(seed);
        t.arm(parse_fault("eio-read prob=0.25 count=always").expect("spec"))
            .expect("arm");
        (0..400)
            .filter(|i| t.plan_read("x", i * 512, 512).eio.is_some())
            .count()
    };
    let n = fired(3);
    assert_eq!(n, fired(3), "same seed, same choices");
    assert!((50..150).contains(&n), "fired {n} of 400 at p=0.25");
}

#[test]
fn clear_removes_one_or_all() {
    let mut t = table_with(&["lost", "eio-read", "stale"]);
    assert_eq!(t.clear(Some(2)), 1);
    assert_eq!(t.clear(Some(2)), 0);
    assert_eq!(t.clear(None), 2);
    assert!(t.status().starts_with("seed=7 faults=0"));
}
