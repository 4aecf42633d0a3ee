//! Restore from a backup stream (issue #25 §1, `RestoreAfterBackup`), as SQL Server's
//! `RESTORE DATABASE … WITH MOVE` does it: each data file's copy is created and allocated
//! before any page is written (its header page, then its size, the way the run creates its own
//! files), the pages the stream carries are written back in stream order — each run of
//! consecutive pages of one file within a block in one write, MaxTransferSize at most —, the
//! copies are made durable, and then every restored page is read back, in order, and checked
//! against the generation its block recorded. The backup keeps the stream in file order, so
//! the restore writes each copy in order, as SQL Server's restore does (docs/backup.md; the
//! strace test `runs::backup::under_strace_a_restore_writes_its_copy_in_file_order`).
//!
//! The caller (the Backup User) removes a copy that read back clean, so the next restore
//! writes into extents that were just freed: the reuse of a freshly freed extent is where a
//! stale read shows.

use std::sync::Arc;

use super::{read_head, BLOCK_HEADER, MAX_BLOCK_PAGES};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, Expect, ExpectedState, Verdict, PAGE_SIZE};

/// The copy of one data file that a restore writes.
pub struct Target {
    /// Where the copy is.
    pub path: std::path::PathBuf,
    /// The data file's id in the set (what the stream's entries name).
    pub file_id: u32,
    /// The copy, created and allocated.
    pub storage: Arc<dyn Storage>,
    /// For each page of the copy, the generation the stream carried (`None`: not carried,
    /// such as the header page).
    pub generations: Vec<Option<u64>>,
    /// Writes [`write_back`] made to the copy.
    pub writes: u64,
}

impl Target {
    /// A copy at `path` of file `file_id`, of `pages` pages (header included), nothing
    /// restored yet.
    pub fn new(
        path: std::path::PathBuf,
        file_id: u32,
        storage: Arc<dyn Storage>,
        pages: u64,
    ) -> Target {
        Target {
            path,
            file_id,
            storage,
            generations: vec![None; usize::try_from(pages).unwrap_or(0)],
            writes: 0,
        }
    }
}

/// A page of a copy that did not read back as the stream carried it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Index of the target in the slice given to [`check`].
    pub target: usize,
    /// The page.
    pub page: u64,
    /// The generation the stream carried (0: never written).
    pub generation: u64,
    /// What the page read back as.
    pub verdict: Verdict,
}

/// A request of the restore that failed: on which copy (`None`: reading the stream, or the
/// phase ended), at which page, a write or a read, and the error.
#[derive(Debug)]
pub struct Failed {
    /// Index of the target in the slice given, when a copy's request failed.
    pub target: Option<usize>,
    /// First page of the failed request on that copy.
    pub page: u64,
    /// A write (or the flush), not a read.
    pub write: bool,
    /// What the system said.
    pub error: std::io::Error,
}

impl Failed {
    fn stream(error: std::io::Error) -> Failed {
        Failed {
            target: None,
            page: 0,
            write: false,
            error,
        }
    }
}

/// The pages the stream in `stream` carries of each target's file, written into the target at
/// their place; returns the pages and the writes. Blocks are read in order until the END
/// block. A page of a file that is not among `targets`, or beyond a target's size, is an
/// `InvalidData` error: the stream is not the one just written. `abandon` is asked before each
/// block: true ends the restore with an `Interrupted` error (the run's phase ended).
pub fn write_back(
    stream: &dyn Storage,
    targets: &mut [Target],
    abandon: &dyn Fn() -> bool,
) -> Result<(u64, u64), Failed> {
    let mut buf =
        AlignedBuf::new(BLOCK_HEADER + MAX_BLOCK_PAGES * PAGE_SIZE).map_err(Failed::stream)?;
    let len = stream.len().map_err(Failed::stream)?;
    let (mut offset, mut pages, mut writes) = (0u64, 0u64, 0u64);
    while offset + BLOCK_HEADER as u64 <= len {
        if abandon() {
            return Err(Failed::stream(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "the phase ended",
            )));
        }
        read_full(stream, &mut buf[..BLOCK_HEADER], offset).map_err(Failed::stream)?;
        let head =
            read_head(&buf[..BLOCK_HEADER]).map_err(|e| Failed::stream(invalid(format!("{e}"))))?;
        read_full(
            stream,
            &mut buf[BLOCK_HEADER..head.len()],
            offset + BLOCK_HEADER as u64,
        )
        .map_err(Failed::stream)?;
        let mut i = 0;
        while i < head.pages.len() {
            let first = head.pages[i];
            let mut j = i + 1;
            while j < head.pages.len()
                && head.pages[j].file == first.file
                && head.pages[j].page == first.page + (j - i) as u64
            {
                j += 1;
            }
            let (ti, t) = targets
                .iter_mut()
                .enumerate()
                .find(|(_, t)| t.file_id == first.file)
                .ok_or_else(|| {
                    Failed::stream(invalid(format!("the stream carries file {}", first.file)))
                })?;
            for (k, c) in head.pages[i..j].iter().enumerate() {
                let slot = usize::try_from(c.page)
                    .ok()
                    .and_then(|p| t.generations.get_mut(p))
                    .ok_or_else(|| {
                        Failed::stream(invalid(format!(
                            "page {} of file {} is beyond its copy",
                            c.page, c.file
                        )))
                    })?;
                *slot = Some(c.generation);
                debug_assert_eq!(c.page, first.page + k as u64);
            }
            let bytes = &buf[BLOCK_HEADER + i * PAGE_SIZE..BLOCK_HEADER + j * PAGE_SIZE];
            t.storage
                .write_at(bytes, first.page * PAGE_SIZE as u64)
                .map_err(|error| Failed {
                    target: Some(ti),
                    page: first.page,
                    write: true,
                    error,
                })?;
            writes += 1;
            t.writes += 1;
            pages += (j - i) as u64;
            i = j;
        }
        offset += head.len() as u64;
        if head.is_end() {
            break;
        }
    }
    for (ti, t) in targets.iter().enumerate() {
        t.storage.sync_data().map_err(|error| Failed {
            target: Some(ti),
            page: 0,
            write: true,
            error,
        })?;
    }
    Ok((pages, writes))
}

/// Reads every target back in order, `chunk_pages` pages a read, and checks each restored page
/// against the generation the stream carried; returns the pages checked and the mismatches.
pub fn check(
    targets: &[Target],
    run_id: u64,
    chunk_pages: usize,
) -> Result<(u64, Vec<Mismatch>), Failed> {
    let chunk_pages = chunk_pages.clamp(1, MAX_BLOCK_PAGES);
    let mut buf = AlignedBuf::new(chunk_pages * PAGE_SIZE).map_err(Failed::stream)?;
    let (mut checked, mut bad) = (0u64, Vec::new());
    for (ti, t) in targets.iter().enumerate() {
        let mut page = 1usize;
        while page < t.generations.len() {
            let n = chunk_pages.min(t.generations.len() - page);
            let bytes = &mut buf[..n * PAGE_SIZE];
            let got = t
                .storage
                .read_at(bytes, (page * PAGE_SIZE) as u64)
                .map_err(|error| Failed {
                    target: Some(ti),
                    page: page as u64,
                    write: false,
                    error,
                })?;
            for k in 0..n {
                let Some(generation) = t.generations[page + k] else {
                    continue;
                };
                let at = k * PAGE_SIZE;
                let state = match generation {
                    0 => ExpectedState::NeverWritten,
                    g => ExpectedState::Written { generation: g },
                };
                let p = (page + k) as u64;
                let exp = Expect::known(run_id, t.file_id, p, state);
                // A read cut short leaves zeros where the file ended: judged as read.
                let v = if at + PAGE_SIZE <= got {
                    verify::verify(&bytes[at..at + PAGE_SIZE], &exp)
                } else {
                    verify::verify(&[0u8; PAGE_SIZE], &exp)
                };
                checked += 1;
                if !v.is_ok() {
                    bad.push(Mismatch {
                        target: ti,
                        page: p,
                        generation,
                        verdict: v,
                    });
                }
            }
            page += n;
        }
    }
    Ok((checked, bad))
}

fn read_full(s: &dyn Storage, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let got = s.read_at(buf, offset)?;
    if got == buf.len() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("a read of {} bytes of the stream returned {got}", buf.len()),
        ))
    }
}

fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}
