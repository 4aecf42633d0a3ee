//! Journal round trips and replay rules: the fixtures every topic shares (the files of a run,
//! a batch's numbered mark), and the tests by topic in `tests/`.

use super::*;
use crate::page::FileRole;

mod backups;
mod compaction;
mod damage;
mod format;
mod replay;

/// The files of a test run: a data file of 200 pages at most and its log.
fn files() -> Vec<JournalFile> {
    vec![
        JournalFile {
            file_id: 0,
            role: FileRole::Data,
            path: "/d/a.mdx".into(),
            max_pages: Some(200),
        },
        JournalFile {
            file_id: 1,
            role: FileRole::Log,
            path: "/d/a.ldx".into(),
            max_pages: None,
        },
    ]
}

/// Batch `n`'s mark, as the journal thread numbers it.
fn mark(n: u64) -> Vec<u8> {
    Record::Mark {
        time_us: 1_700_000_000_000_000 + n,
        interval_ms: 10,
        batch: n,
    }
    .encode()
}
