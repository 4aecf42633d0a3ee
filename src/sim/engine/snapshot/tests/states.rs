//! The pages' snapshot states in their two forms: every state and flag read back as captured,
//! once; a sparse shard that costs what its pages captured cost, and no more than its array;
//! the switch to the array keeping every word.

use super::super::state::{PageStates, COPIED, LOST};
use crate::page::ExpectedState;

/// A state of every kind, by page.
fn state_of(page: u64) -> ExpectedState {
    match page % 5 {
        0 => ExpectedState::NeverWritten,
        1 => ExpectedState::Written { generation: page },
        2 => ExpectedState::InFlight {
            old: page,
            new: page + (1 << 40),
        },
        3 => ExpectedState::Unknown {
            old: 0,
            issued: page + 1,
        },
        _ => ExpectedState::Unknown {
            old: page,
            issued: page + 2,
        },
    }
}

#[test]
fn every_captured_state_reads_back_as_captured_once() {
    let s = PageStates::new(1 << 20);
    for page in 1..=5 {
        let st = state_of(page);
        assert_eq!(s.state(page), None, "not captured yet");
        s.capture(page, st);
        s.capture(page, ExpectedState::Written { generation: 99 });
        assert_eq!(s.state(page), Some(st), "page {page}");
    }
    // A flag set on a page not captured yet stays when it is captured, and the state stays.
    s.mark(7, LOST);
    s.capture(7, ExpectedState::Written { generation: 3 });
    s.mark(7, COPIED);
    assert!(s.has(7, LOST) && s.has(7, COPIED));
    assert_eq!(s.state(7), Some(ExpectedState::Written { generation: 3 }));
    // Page 0 (the header) and pages beyond the file are not in the snapshot.
    s.capture(0, ExpectedState::Written { generation: 1 });
    s.capture(1 << 20, ExpectedState::Written { generation: 1 });
    assert_eq!((s.state(0), s.state(1 << 20)), (None, None));
    assert_eq!(s.dense_shards(), 0);
}

/// A few pages captured of a million cost their maps' tables, not a word a page.
#[test]
fn a_sparse_snapshot_costs_the_pages_captured() {
    let pages = 1 << 20;
    let s = PageStates::new(pages);
    let empty = s.memory_bytes();
    assert!(
        empty < pages as usize / 4,
        "{empty} bytes before any capture"
    );
    for k in 0..1000 {
        s.capture(1 + k * 1021, ExpectedState::Written { generation: 1 });
    }
    let added = s.memory_bytes() - empty;
    assert!(
        (1000 * 17..=1000 * 100).contains(&added),
        "{added} bytes for 1,000 pages"
    );
    assert_eq!(s.dense_shards(), 0);
}

/// Every page of two shards captured one by one: each shard turns into its array once its map
/// would cost more, never costs more than the array meanwhile, and every word survives.
#[test]
fn the_switch_to_an_array_keeps_every_captured_state_and_flag() {
    let pages = 4096;
    let s = PageStates::with_shards(pages, 2);
    let array = pages as usize * 8;
    let fixed = s.memory_bytes();
    let mut switched_at = None;
    for page in 1..pages {
        s.capture(page, state_of(page));
        if page % 3 == 0 {
            s.mark(page, COPIED);
        }
        if page % 7 == 0 {
            s.mark(page, LOST);
        }
        // The in-flight and unknown pages' old generations are beside, in both forms.
        let olds = (1..=page).filter(|p| matches!(p % 5, 2..=4)).count() * 48;
        assert!(
            s.memory_bytes() <= fixed + array + olds,
            "page {page}: {} bytes",
            s.memory_bytes()
        );
        if switched_at.is_none() && s.dense_shards() > 0 {
            switched_at = Some(page);
        }
    }
    let at = switched_at.expect("no shard turned into an array");
    assert!(
        (pages / 8..pages * 3 / 4).contains(&at),
        "switched after {at} of {pages} pages"
    );
    assert_eq!(s.dense_shards(), 2);
    for page in 1..pages {
        assert_eq!(s.state(page), Some(state_of(page)), "page {page}");
        assert_eq!(s.has(page, COPIED), page % 3 == 0, "page {page}");
        assert_eq!(s.has(page, LOST), page % 7 == 0, "page {page}");
    }
    // Captured again, a page keeps its first state in the array too.
    s.capture(10, ExpectedState::Written { generation: 77 });
    assert_eq!(s.state(10), Some(state_of(10)));
}
