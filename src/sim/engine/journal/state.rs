//! Replaying a journal: the generation each page must hold at least, file sizes, and the
//! durable log position.

use std::path::Path;

use super::{decode, version_of, BackupRecord, Damage, JournalFile, PageGens, Record};
use crate::codec::ForeignFile;
use crate::io::safefile::Use;
use crate::io::{Backend, IoError};
use crate::sim::engine::logblock::NO_PREV;

/// Why a journal cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// It cannot be read.
    #[error(transparent)]
    Io(#[from] IoError),
    /// It is of a version this build does not read.
    #[error(transparent)]
    Foreign(#[from] ForeignFile),
}

/// What a journal says, replayed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalState {
    /// Run id of the last Start record.
    pub run_id: u64,
    /// The files of that run.
    pub files: Vec<JournalFile>,
    /// Per file id: durable generation per page.
    pub durable: Vec<PageGens>,
    /// Per file id: size in pages, when a Resize was journaled.
    pub pages: Vec<Option<u64>>,
    /// Per file id: (last durable block, durable end) of its log.
    pub log: Vec<Option<(u64, u64)>>,
    /// The run ended cleanly.
    pub clean: bool,
    /// A torn tail (what a crash while appending leaves) was dropped.
    pub torn_tail: bool,
    /// The journal is damaged before its end (whole records follow the damage): its device
    /// lost or tore a write it had acknowledged. Only the records before the damage are
    /// replayed, so the state says less than the run did, never more.
    pub damage: Option<Damage>,
    /// The last batch mark: (time in µs since the epoch, batch interval in ms).
    pub last_mark: Option<(u64, u32)>,
    /// The number of the last batch since the last Start (0: none, or not numbered).
    pub last_batch: u64,
    /// The journal could not be written from this time (µs since the epoch), for this reason.
    pub void: Option<(u64, String)>,
    /// The last finished full backup and log backup the run journaled (at most one of each).
    pub backups: Vec<BackupRecord>,
}

/// Pages per Durable record of a snapshot (1 MB of payload).
const SNAPSHOT_CHUNK: usize = 65536;

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

    /// Applies one record, as a replay does.
    pub fn apply(&mut self, r: &Record) {
        match r {
            Record::Start { run_id, files } => {
                // Ids beyond the list (which a read journal cannot hold, see bounds.rs) get no
                // table: an id must not decide how much is allocated.
                let n = files
                    .iter()
                    .map(|f| f.file_id as usize + 1)
                    .filter(|&k| k <= files.len())
                    .max()
                    .unwrap_or(0);
                *self = JournalState {
                    run_id: *run_id,
                    files: files.clone(),
                    torn_tail: self.torn_tail,
                    damage: self.damage.take(),
                    ..JournalState::default()
                };
                self.durable = vec![PageGens::default(); n];
                self.pages = vec![None; n];
                self.log = vec![None; n];
            }
            Record::Durable { file_id, pages } => {
                if let Some(d) = self.durable.get_mut(*file_id as usize) {
                    for &(p, g) in pages {
                        d.raise(p, g);
                    }
                }
            }
            Record::Resize { file_id, pages } => {
                let i = *file_id as usize;
                if let (Some(p), Some(d)) = (self.pages.get_mut(i), self.durable.get_mut(i)) {
                    *p = Some(*pages);
                    d.truncate(*pages);
                }
            }
            // A position with no block behind it claims nothing this run wrote: what journals
            // of earlier versions recorded when a resumed run had not flushed yet (the next
            // lap's first LSN, never written), so it is not taken as a claim.
            Record::Log { last_block, .. } if *last_block == NO_PREV => {}
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
            Record::Mark {
                time_us,
                interval_ms,
                batch,
            } => {
                self.last_mark = Some((*time_us, *interval_ms));
                self.last_batch = *batch;
            }
            Record::Void { time_us, reason } => {
                self.void.get_or_insert((*time_us, reason.clone()));
            }
            Record::Backup(b) => {
                self.backups.retain(|k| k.log != b.log);
                self.backups.push(b.clone());
            }
        }
    }

    /// The pages of `pages` whose generation is higher than the one this state holds, i.e.
    /// what a Durable record must carry to say something new.
    pub fn news(&self, file_id: u32, pages: &[(u64, u64)]) -> Vec<(u64, u64)> {
        pages
            .iter()
            .filter(|&&(p, g)| g > self.durable_gen(file_id, p))
            .copied()
            .collect()
    }

    /// Records that rebuild this state from nothing: Start, the file sizes, every durable
    /// page (16 bytes each), the log positions and the last mark.
    pub fn snapshot(&self) -> Vec<Record> {
        let mut out = Vec::new();
        self.each_snapshot_record(
            |file, emit| {
                if let Some(d) = self.durable.get(file) {
                    for (p, g) in d.iter() {
                        emit(p, g);
                    }
                }
            },
            &mut |r| out.push(r),
        );
        out
    }

    /// Hands `out` the records of [`JournalState::snapshot`] one by one, with the durable
    /// pages of each file id from `durable`, which hands (page, generation) in page order:
    /// the journal thread keeps them in the files' oracles, not in this state's tables, and
    /// writes a compaction as the records come (a Durable record holds at most 65,536 pages),
    /// never the whole snapshot in memory.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a file id is an index into the run's file list, a few entries long"
    )]
    pub fn each_snapshot_record(
        &self,
        durable: impl Fn(usize, &mut dyn FnMut(u64, u64)),
        out: &mut dyn FnMut(Record),
    ) {
        out(Record::Start {
            run_id: self.run_id,
            files: self.files.clone(),
        });
        for (i, p) in self.pages.iter().enumerate() {
            if let Some(pages) = p {
                out(Record::Resize {
                    file_id: i as u32,
                    pages: *pages,
                });
            }
        }
        for i in 0..self.durable.len() {
            // Chunk by chunk from the pages themselves: no list of every page beside them.
            let mut chunk = Vec::new();
            durable(i, &mut |p, g| {
                chunk.push((p, g));
                if chunk.len() == SNAPSHOT_CHUNK {
                    out(Record::Durable {
                        file_id: i as u32,
                        pages: std::mem::take(&mut chunk),
                    });
                }
            });
            if !chunk.is_empty() {
                out(Record::Durable {
                    file_id: i as u32,
                    pages: chunk,
                });
            }
        }
        for (i, l) in self.log.iter().enumerate() {
            if let Some((last_block, durable_end)) = l {
                out(Record::Log {
                    file_id: i as u32,
                    last_block: *last_block,
                    durable_end: *durable_end,
                });
            }
        }
        for b in &self.backups {
            out(Record::Backup(b.clone()));
        }
        if let Some((time_us, reason)) = &self.void {
            out(Record::Void {
                time_us: *time_us,
                reason: reason.clone(),
            });
        }
        // A compaction of the batch that carried the End keeps it: without it a clean run
        // would read as a crash.
        if self.clean {
            out(Record::End);
        }
        if let Some((time_us, interval_ms)) = self.last_mark {
            out(Record::Mark {
                time_us,
                interval_ms,
                batch: self.last_batch,
            });
        }
    }

    /// A new run's state: its Start alone.
    pub fn started(run_id: u64, files: Vec<JournalFile>) -> JournalState {
        JournalState::replay(&[Record::Start { run_id, files }], false)
    }

    /// What a restarted run's journal begins with (as a snapshot, in place of a bare Start):
    /// everything `prior` — the journal of the run it restarts — held for the files of this
    /// run: the pages' durable generations, the file sizes, the log positions and the last
    /// batch. So a page stays held to its generation across the restart until the new run
    /// rewrites it and journals a higher one; no window opens while the restart verifies and
    /// rewrites the files. The End of a clean shutdown, a Void and damage stay with the old
    /// journal: the new run has not ended, and its journal is written again.
    pub fn carried_over(
        prior: &JournalState,
        run_id: u64,
        files: Vec<JournalFile>,
    ) -> JournalState {
        let mut st = JournalState::started(run_id, files);
        for (i, d) in st.durable.iter_mut().enumerate() {
            *d = prior.durable.get(i).cloned().unwrap_or_default();
        }
        for (i, p) in st.pages.iter_mut().enumerate() {
            *p = prior.pages.get(i).copied().flatten();
        }
        for (i, l) in st.log.iter_mut().enumerate() {
            *l = prior.log.get(i).copied().flatten();
        }
        st.last_mark = prior.last_mark;
        st.last_batch = prior.last_batch;
        st
    }

    /// Bytes of the snapshot (about 16 per durable page), without building it.
    pub fn snapshot_len(&self) -> u64 {
        self.snapshot_len_with(self.durable.iter().map(PageGens::len).sum())
    }

    /// [`JournalState::snapshot_len`] with `pages` durable pages in all.
    pub fn snapshot_len_with(&self, pages: u64) -> u64 {
        let files = self.files.len() as u64;
        // Start (with paths), per file a Resize, a Durable header per chunk and a Log, a Mark.
        let paths: u64 = self
            .files
            .iter()
            .map(|f| f.path.as_os_str().len() as u64 + 9)
            .sum();
        let backups: u64 = self
            .backups
            .iter()
            .map(|b| b.path.as_os_str().len() as u64 + 57)
            .sum();
        pages * 16
            + files * 3 * 40
            + paths
            + backups
            + (pages / SNAPSHOT_CHUNK as u64 + 1) * 28
            + 100
    }

    /// Nothing at all: a journal created and cut before its Start landed (a run, or a resume,
    /// renames its Start in from a synced file), which claims nothing.
    pub fn never_started(&self) -> bool {
        self.run_id == 0 && self.files.is_empty() && self.damage.is_none() && !self.torn_tail
    }

    /// Bytes, but no readable Start: its first record lost or torn. Since the Start comes in
    /// by the rename of a synced file, that is the journal's device losing an acknowledged
    /// write, never what a crash leaves.
    pub fn start_lost(&self) -> bool {
        self.run_id == 0 && (self.damage.is_some() || self.torn_tail)
    }

    /// Reads the journal at `path` through `backend` and replays it up to its first flaw: a
    /// torn tail is dropped, damage before the end is kept in [`JournalState::damage`]. A
    /// journal of a version this build does not read is refused ([`LoadError::Foreign`]).
    /// Whoever owns it (`verify` reads a copy of a run as it finds it).
    pub fn load(backend: &dyn Backend, path: &Path) -> Result<JournalState, LoadError> {
        JournalState::read(path, &backend.read_whole(path, Use::Input)?)
    }

    /// As [`JournalState::load`], for a run about to take the journal over (`run --resume`,
    /// a run over a previous run's files): one owned by another user is refused before a
    /// byte of it is read.
    pub fn load_own(backend: &dyn Backend, path: &Path) -> Result<JournalState, LoadError> {
        JournalState::read(path, &backend.read_whole(path, Use::Own)?)
    }

    /// Replays the bytes of the journal at `path`, refused when its first record states a
    /// version this build does not read.
    pub fn read(path: &Path, bytes: &[u8]) -> Result<JournalState, LoadError> {
        version_of(bytes).map_err(|v| v.at(path))?;
        Ok(JournalState::from_bytes(bytes))
    }

    /// Replays journal bytes (see [`JournalState::load`]), whatever version they state: a
    /// frame of another version is where the decoding stops.
    pub fn from_bytes(bytes: &[u8]) -> JournalState {
        let d = decode(bytes);
        let (damage, torn_tail) = match d.damage {
            Some(dmg) if dmg.is_mid_journal() => (Some(dmg), false),
            Some(_) => (None, true),
            None => (None, false),
        };
        let mut st = JournalState::replay(&d.records, torn_tail);
        st.damage = damage;
        st
    }

    /// Durable generation of a page (0: none journaled).
    pub fn durable_gen(&self, file_id: u32, page: u64) -> u64 {
        self.durable
            .get(file_id as usize)
            .map_or(0, |d| d.get(page))
    }
}
