//! Replaying a journal: the generation each page must hold at least, file sizes, and the
//! durable log position.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use super::{decode_all, JournalFile, Record};

/// What a journal says, replayed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalState {
    /// Run id of the last Start record.
    pub run_id: u64,
    /// The files of that run.
    pub files: Vec<JournalFile>,
    /// Per file id: durable generation per page (index = page).
    pub durable: Vec<Vec<u64>>,
    /// Per file id: size in pages, when a Resize was journaled.
    pub pages: Vec<Option<u64>>,
    /// Per file id: (last durable block, durable end) of its log.
    pub log: Vec<Option<(u64, u64)>>,
    /// The run ended cleanly.
    pub clean: bool,
    /// A torn or damaged tail was dropped.
    pub torn_tail: bool,
}

impl JournalState {
    /// Replays records (only those after the last Start count).
    pub fn replay(records: &[Record], torn_tail: bool) -> JournalState {
        let mut st = JournalState {
            torn_tail,
            ..JournalState::default()
        };
        for r in records {
            st.apply(r);
        }
        st
    }

    fn apply(&mut self, r: &Record) {
        match r {
            Record::Start { run_id, files } => {
                let n = files
                    .iter()
                    .map(|f| f.file_id as usize + 1)
                    .max()
                    .unwrap_or(0);
                *self = JournalState {
                    run_id: *run_id,
                    files: files.clone(),
                    torn_tail: self.torn_tail,
                    ..JournalState::default()
                };
                self.durable = vec![Vec::new(); n];
                self.pages = vec![None; n];
                self.log = vec![None; n];
            }
            Record::Durable { file_id, pages } => {
                if let Some(d) = self.durable.get_mut(*file_id as usize) {
                    for &(p, g) in pages {
                        let i = usize::try_from(p).unwrap_or(usize::MAX);
                        if i < (1 << 40) {
                            if d.len() <= i {
                                d.resize(i + 1, 0);
                            }
                            d[i] = d[i].max(g);
                        }
                    }
                }
            }
            Record::Resize { file_id, pages } => {
                let i = *file_id as usize;
                if let (Some(p), Some(d)) = (self.pages.get_mut(i), self.durable.get_mut(i)) {
                    *p = Some(*pages);
                    d.truncate(usize::try_from(*pages).unwrap_or(usize::MAX));
                }
            }
            Record::Log {
                file_id,
                last_block,
                durable_end,
            } => {
                if let Some(l) = self.log.get_mut(*file_id as usize) {
                    *l = Some((*last_block, *durable_end));
                }
            }
            Record::End => self.clean = true,
        }
    }

    /// Reads and replays the journal at `path`.
    pub fn load(path: &Path) -> io::Result<JournalState> {
        let mut bytes = Vec::new();
        File::open(path)?.read_to_end(&mut bytes)?;
        let (records, torn) = decode_all(&bytes);
        Ok(JournalState::replay(&records, torn))
    }

    /// Durable generation of a page (0: none journaled).
    pub fn durable_gen(&self, file_id: u32, page: u64) -> u64 {
        self.durable
            .get(file_id as usize)
            .and_then(|d| d.get(usize::try_from(page).ok()?))
            .copied()
            .unwrap_or(0)
    }
}
