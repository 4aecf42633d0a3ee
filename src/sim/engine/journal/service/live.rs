//! The journal thread's state during a run: the replayed state (sizes, log positions, marks,
//! backups) with the pages' durable generations kept in the files' oracles, one word per page
//! beside the rest of the page's state, rather than in a table of its own (issue #39: the
//! table cost 8 bytes a page more). Offline readers (verify, `run --resume`) keep the
//! replayed tables ([`crate::sim::engine::journal::PageGens`]).

use std::sync::Arc;

use crate::sim::engine::journal::{JournalState, PageGens, Record};
use crate::sim::engine::oracle::Oracle;
use crate::witness::Base;

/// The replayed state, its durable tables empty, and an oracle per file id.
pub(super) struct Live {
    pub state: JournalState,
    oracles: Vec<Arc<Oracle>>,
}

impl Live {
    /// Moves `state`'s durable generations into `oracles` (by file id; a file id with none
    /// gets an empty oracle, whose pages are all beyond its end).
    pub fn new(mut state: JournalState, mut oracles: Vec<Arc<Oracle>>) -> Live {
        let files = state.durable.len();
        for i in oracles.len()..files {
            let id = u32::try_from(i).unwrap_or(u32::MAX);
            oracles.push(Arc::new(Oracle::new(state.run_id, id, 0)));
        }
        for (d, o) in state.durable.iter_mut().zip(&oracles) {
            for (p, g) in std::mem::take(d).iter() {
                o.raise_durable(p, g);
            }
        }
        Live { state, oracles }
    }

    /// The pages of `pages` whose generation is higher than the one the journal holds.
    pub fn news(&self, file_id: u32, pages: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let Some(o) = self.oracles.get(file_id as usize) else {
            return pages.to_vec();
        };
        pages
            .iter()
            .filter(|&&(p, g)| g > o.durable(p))
            .copied()
            .collect()
    }

    /// Applies one record, as a replay does.
    pub fn apply(&mut self, r: &Record) {
        match r {
            Record::Durable { file_id, pages } => {
                if let Some(o) = self.live(*file_id) {
                    for &(p, g) in pages {
                        o.raise_durable(p, g);
                    }
                }
            }
            Record::Resize { file_id, pages } => {
                self.state.apply(r);
                if let Some(o) = self.live(*file_id) {
                    o.truncate_durable(*pages);
                }
            }
            Record::Start { .. } => {
                self.state.apply(r);
                for o in &self.oracles {
                    o.truncate_durable(0);
                }
                self.state.durable = vec![PageGens::default(); self.state.durable.len()];
            }
            _ => self.state.apply(r),
        }
    }

    /// The oracle of a file id the replayed state has a table for (as `JournalState::apply`
    /// ignores the others).
    fn live(&self, file_id: u32) -> Option<&Oracle> {
        let i = file_id as usize;
        (i < self.state.durable.len())
            .then(|| self.oracles.get(i))
            .flatten()
            .map(Arc::as_ref)
    }

    /// The witness's base: the records that rebuild this state from nothing
    /// ([`JournalState::snapshot`]), each encoded as it is walked (no list of them beside the
    /// base).
    pub fn base(&self) -> Base {
        let mut base = Base::default();
        self.each_snapshot_record(&mut |r| base.add(r.encode()));
        base
    }

    /// The records of the base, handed out one by one.
    pub fn each_snapshot_record(&self, out: &mut dyn FnMut(Record)) {
        self.state.each_snapshot_record(
            |file, emit| {
                if let Some(o) = self.oracles.get(file) {
                    o.each_durable(emit);
                }
            },
            out,
        );
    }

    /// At least the bytes of the base, without building it.
    pub fn snapshot_len(&self) -> u64 {
        let files = self.state.durable.len();
        let pages = self
            .oracles
            .iter()
            .take(files)
            .map(|o| o.durable_bound())
            .sum();
        self.state.snapshot_len_with(pages)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::Live;
    use crate::page::FileRole;
    use crate::sim::engine::journal::{JournalFile, JournalState, Record};
    use crate::sim::engine::oracle::Oracle;

    #[test]
    fn the_base_is_the_snapshot_encoded_record_by_record() {
        let file = |file_id, role, path: &str| JournalFile {
            file_id,
            role,
            path: path.into(),
            max_pages: None,
        };
        let files = vec![
            file(0, FileRole::Data, "/d/a.mdx"),
            file(1, FileRole::Log, "/d/a.ldx"),
        ];
        let mut state = JournalState::started(5, files);
        state.apply(&Record::Durable {
            file_id: 0,
            pages: (1..40).map(|p| (p, p + 100)).collect(),
        });
        let want: Vec<u8> = state.snapshot().iter().flat_map(Record::encode).collect();
        let oracles = vec![
            Arc::new(Oracle::new(5, 0, 64)),
            Arc::new(Oracle::new(5, 1, 16)),
        ];
        let live = Live::new(state, oracles);
        let base = live.base();
        assert!(want.len() > 39 * 2, "the snapshot holds the pages");
        assert_eq!(base.bytes(), want);
    }
}
