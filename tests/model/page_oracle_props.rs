//! Property: the oracle against a plain model under random writes (completed or failed),
//! crashes mid-write and resizes: generations only grow, and `expect` always says what the
//! model says.

use proptest::prelude::*;
use sqliosim::page::ExpectedState;
use sqliosim::sim::engine::oracle::Oracle;

#[derive(Debug, Clone)]
enum Op {
    /// A write of a page that completes, successfully or not.
    Write { page: u64, ok: bool },
    /// A write that is issued and not completed yet when `expect` is asked.
    Issue { page: u64 },
    /// The file grows or shrinks.
    Resize { pages: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..12u64, prop::bool::weighted(0.8)).prop_map(|(page, ok)| Op::Write { page, ok }),
        1 => (0..12u64).prop_map(|page| Op::Issue { page }),
        1 => (0..12u64).prop_map(|pages| Op::Resize { pages }),
    ]
}

/// The model: (last good generation, highest issued, unknown) per page.
type Model = Vec<(u64, u64, bool)>;

fn model_state(m: &Model, page: u64) -> ExpectedState {
    match m.get(page as usize) {
        None | Some((0, 0, false)) => ExpectedState::NeverWritten,
        Some(&(done, issued, true)) => ExpectedState::Unknown { old: done, issued },
        Some(&(done, _, false)) => ExpectedState::Written { generation: done },
    }
}

proptest! {
    #[test]
    fn oracle_follows_the_model(ops in prop::collection::vec(op(), 1..200)) {
        let o = Oracle::with_stripes(1, 1, 8, 3);
        let mut m: Model = vec![(0, 0, false); 8];
        for op in &ops {
            match *op {
                Op::Write { page, ok } if (page as usize) < m.len() => {
                    let _l = o.write_latch(page);
                    let g = o.begin_write(page);
                    let slot = &mut m[page as usize];
                    prop_assert!(g > slot.1, "generation {} not above issued {}", g, slot.1);
                    slot.1 = g;
                    o.complete_write(page, g, ok);
                    if ok {
                        *slot = (g, g, false);
                    } else {
                        slot.2 = true;
                    }
                }
                Op::Issue { page } if (page as usize) < m.len() => {
                    let g = o.begin_write(page);
                    let slot = m[page as usize];
                    let want = if slot.2 {
                        ExpectedState::Unknown { old: slot.0, issued: g }
                    } else {
                        ExpectedState::InFlight { old: slot.0, new: g }
                    };
                    prop_assert_eq!(o.expected_state(page), want);
                    o.complete_write(page, g, true);
                    m[page as usize] = (g, g, false);
                }
                Op::Resize { pages } => {
                    o.resize(pages);
                    m.resize(pages as usize, (0, 0, false));
                }
                _ => {}
            }
            for page in 0..12 {
                prop_assert_eq!(o.expected_state(page), model_state(&m, page), "page {}", page);
            }
        }
        prop_assert_eq!(o.pages(), m.len() as u64);
    }
}
