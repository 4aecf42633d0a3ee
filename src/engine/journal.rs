//! The durability journal: a compact, checksummed, append-only file beside the data files
//! that says, after a crash, which generation each page must hold at least.
//!
//! Contract: a write is durable once an O_DSYNC write completed or a later fdatasync of its
//! file completed. At each sync point (checkpoint, shutdown) the simulation snapshots the
//! completed generations, fdatasyncs the files, then appends the pages whose durable
//! generation changed and the log position, and syncs the journal. A page found older than its
//! journaled generation is therefore a lost write; a newer one was written after the last sync
//! point and may or may not have survived. A torn tail (a crash while appending) is ignored.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::page::FileRole;

/// Journal file name, beside the first data file.
pub const JOURNAL_NAME: &str = "sqliosim.journal";
const MAGIC: [u8; 8] = *b"SQLSIMJR";
const HEADER: usize = 20;

/// One file of the set, as the journal knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JournalFile {
    /// File id (index in the set).
    pub file_id: u32,
    /// Data or log.
    pub role: FileRole,
    /// Path.
    pub path: PathBuf,
}

/// A journal record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A new run: its id and files.
    Start {
        /// Run id.
        run_id: u64,
        /// The files.
        files: Vec<JournalFile>,
    },
    /// These pages of this file are durable at least at these generations.
    Durable {
        /// File id.
        file_id: u32,
        /// (page, generation) pairs.
        pages: Vec<(u64, u64)>,
    },
    /// The file now has this many pages.
    Resize {
        /// File id.
        file_id: u32,
        /// Pages.
        pages: u64,
    },
    /// The log of this file is durable up to here.
    Log {
        /// File id of the log file.
        file_id: u32,
        /// LSN of the last durable block.
        last_block: u64,
        /// End of the durable log.
        durable_end: u64,
    },
    /// The run ended cleanly.
    End,
}

fn put_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn put_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

impl Record {
    fn kind(&self) -> u8 {
        match self {
            Record::Start { .. } => 1,
            Record::Durable { .. } => 2,
            Record::Resize { .. } => 3,
            Record::Log { .. } => 4,
            Record::End => 5,
        }
    }

    fn payload(&self) -> Vec<u8> {
        let mut v = Vec::new();
        match self {
            Record::Start { run_id, files } => {
                put_u64(&mut v, *run_id);
                put_u32(&mut v, files.len() as u32);
                for f in files {
                    put_u32(&mut v, f.file_id);
                    v.push(if f.role == FileRole::Log { 2 } else { 1 });
                    let p = f.path.to_string_lossy();
                    put_u32(&mut v, p.len() as u32);
                    v.extend_from_slice(p.as_bytes());
                }
            }
            Record::Durable { file_id, pages } => {
                put_u32(&mut v, *file_id);
                put_u32(&mut v, pages.len() as u32);
                for (p, g) in pages {
                    put_u64(&mut v, *p);
                    put_u64(&mut v, *g);
                }
            }
            Record::Resize { file_id, pages } => {
                put_u32(&mut v, *file_id);
                put_u64(&mut v, *pages);
            }
            Record::Log {
                file_id,
                last_block,
                durable_end,
            } => {
                put_u32(&mut v, *file_id);
                put_u64(&mut v, *last_block);
                put_u64(&mut v, *durable_end);
            }
            Record::End => {}
        }
        v
    }

    /// The record as bytes: magic, kind, payload length, CRC32 of the payload, payload.
    pub fn encode(&self) -> Vec<u8> {
        let payload = self.payload();
        let mut v = Vec::with_capacity(HEADER + payload.len());
        v.extend_from_slice(&MAGIC);
        v.push(self.kind());
        v.extend_from_slice(&[0, 0, 0]);
        put_u32(&mut v, payload.len() as u32);
        put_u32(&mut v, crc32fast::hash(&payload));
        v.extend_from_slice(&payload);
        v
    }
}

/// A cursor over a payload that fails instead of panicking on short input.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Some(u64::from_le_bytes(a))
    }
}

fn decode_payload(kind: u8, payload: &[u8]) -> Option<Record> {
    let mut c = Cursor(payload);
    Some(match kind {
        1 => {
            let run_id = c.u64()?;
            let n = c.u32()?;
            let mut files = Vec::new();
            for _ in 0..n {
                let file_id = c.u32()?;
                let role = if c.u8()? == 2 {
                    FileRole::Log
                } else {
                    FileRole::Data
                };
                let len = c.u32()? as usize;
                let path = PathBuf::from(String::from_utf8_lossy(c.take(len)?).into_owned());
                files.push(JournalFile {
                    file_id,
                    role,
                    path,
                });
            }
            Record::Start { run_id, files }
        }
        2 => {
            let file_id = c.u32()?;
            let n = c.u32()? as usize;
            let mut pages = Vec::with_capacity(n.min(payload.len() / 16));
            for _ in 0..n {
                pages.push((c.u64()?, c.u64()?));
            }
            Record::Durable { file_id, pages }
        }
        3 => Record::Resize {
            file_id: c.u32()?,
            pages: c.u64()?,
        },
        4 => Record::Log {
            file_id: c.u32()?,
            last_block: c.u64()?,
            durable_end: c.u64()?,
        },
        5 => Record::End,
        _ => return None,
    })
}

/// Decodes every whole, valid record of a journal; returns them and whether a damaged or
/// torn tail was dropped.
pub fn decode_all(bytes: &[u8]) -> (Vec<Record>, bool) {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Some(rec) = decode_one(&bytes[at..]) else {
            return (out, true);
        };
        at += rec.1;
        out.push(rec.0);
    }
    (out, false)
}

fn decode_one(b: &[u8]) -> Option<(Record, usize)> {
    if b.len() < HEADER || b[..8] != MAGIC {
        return None;
    }
    let len = u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as usize;
    let crc = u32::from_le_bytes([b[16], b[17], b[18], b[19]]);
    let payload = b.get(HEADER..HEADER + len)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    Some((decode_payload(b[8], payload)?, HEADER + len))
}

/// The journal being written by a run.
#[derive(Debug)]
pub struct JournalWriter {
    file: File,
    path: PathBuf,
}

impl JournalWriter {
    /// Starts a new journal at `path` (replacing an old one) with a Start record.
    pub fn create(path: &Path, run_id: u64, files: Vec<JournalFile>) -> io::Result<JournalWriter> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let mut j = JournalWriter {
            file,
            path: path.to_path_buf(),
        };
        j.append(&[Record::Start { run_id, files }])?;
        Ok(j)
    }

    /// Reopens an existing journal to append to it (resume).
    pub fn open_append(path: &Path) -> io::Result<JournalWriter> {
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(JournalWriter {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends records and makes them durable.
    pub fn append(&mut self, records: &[Record]) -> io::Result<()> {
        let mut bytes = Vec::new();
        for r in records {
            bytes.extend_from_slice(&r.encode());
        }
        self.file.write_all(&bytes)?;
        self.file.sync_data()
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<JournalFile> {
        vec![
            JournalFile {
                file_id: 0,
                role: FileRole::Data,
                path: "/d/a.mdx".into(),
            },
            JournalFile {
                file_id: 1,
                role: FileRole::Log,
                path: "/d/a.ldx".into(),
            },
        ]
    }

    #[test]
    fn replay_keeps_the_highest_durable_generation_and_honours_resizes() {
        let recs = vec![
            Record::Start {
                run_id: 5,
                files: files(),
            },
            Record::Durable {
                file_id: 0,
                pages: vec![(3, 2), (9, 1)],
            },
            Record::Durable {
                file_id: 0,
                pages: vec![(3, 4)],
            },
            Record::Log {
                file_id: 1,
                last_block: 512,
                durable_end: 1024,
            },
            Record::Resize {
                file_id: 0,
                pages: 5,
            },
        ];
        let mut bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
        let (decoded, torn) = decode_all(&bytes);
        assert_eq!((decoded.clone(), torn), (recs, false));
        let st = JournalState::replay(&decoded, false);
        assert_eq!(st.run_id, 5);
        assert_eq!(st.durable_gen(0, 3), 4);
        assert_eq!(st.durable_gen(0, 9), 0, "page 9 went with the shrink");
        assert_eq!(st.log[1], Some((512, 1024)));
        assert!(!st.clean);
        // A torn tail is dropped, not fatal.
        bytes.extend_from_slice(&Record::End.encode()[..10]);
        let (again, torn) = decode_all(&bytes);
        assert!(torn);
        assert_eq!(again.len(), 5);
    }

    #[test]
    fn a_damaged_record_ends_the_replay() {
        let mut bytes = Record::Start {
            run_id: 1,
            files: files(),
        }
        .encode();
        let mut d = Record::Durable {
            file_id: 0,
            pages: vec![(1, 1)],
        }
        .encode();
        let last = d.len() - 1;
        d[last] ^= 1;
        bytes.extend_from_slice(&d);
        let (recs, torn) = decode_all(&bytes);
        assert_eq!(recs.len(), 1);
        assert!(torn);
    }
}
