//! Restore from a backup stream (issue #25 §1, `RestoreAfterBackup`), as SQL Server's
//! `RESTORE DATABASE … WITH MOVE` does it:
//!
//! 1. Each data file's copy is created (its header page) and, unless instant file
//!    initialization is on, zeroed from page 1 to its end before any page is written
//!    ([`zero`]): sequential writes of [`ZERO_CHUNK`], then made durable. SQL Server zeroes a
//!    restored data file unless its service account holds SE_MANAGE_VOLUME_NAME (Microsoft
//!    Learn, "Database instant file initialization": files are zeroed on "Restore a database
//!    or filegroup"; log files always), and trace flag 3004 shows the restore's
//!    `Zeroing … from page 1 to N` before `Restore: Restoring backup set`. No source gives
//!    the size of SQL Server's zeroing writes; 1 MB is the size the run's own `StampFiles`
//!    zeroing writes. With instant file initialization the copy is allocated without writing.
//! 2. The pages the stream carries are written back in stream order ([`write_back`]): each
//!    run of consecutive pages of one file within a block in writes of at most
//!    [`Transfer::pages`], with at most [`Transfer::buffers`] writes in flight, posted through
//!    the copy's storage (the run's I/O service). SQL Server's restore from a disk device
//!    chooses 64 KB transfers unless the RESTORE names MAXTRANSFERSIZE and BUFFERCOUNT
//!    (Microsoft CSS, "How It Works: How does SQL Server Backup and Restore select transfer
//!    sizes", 2008: "Why does backup to disk choose a transfer size of 1MB but restore 64K
//!    unless I specify BUFFERCOUNT and MAXTRANSFERSIZE?"), and the buffer count of the same
//!    routine, 6 for one device on one volume (its trace flag 3213 output: `Buffer count: 6`,
//!    `Tabular data device count: 1`): [`Transfer::SQL_SERVER_DISK`]. The backup keeps the
//!    stream in file order, so each copy's writes are posted in file order; they complete in
//!    any order. The copies are made durable once all completed.
//! 3. Every restored page is read back, in order, and checked against the generation its
//!    block recorded ([`check`]).
//!
//! The caller (the Backup User) removes a copy that read back clean, so the next restore
//! writes into extents that were just freed: the reuse of a freshly freed extent is where a
//! stale read shows.

mod flight;

use std::sync::Arc;

use super::{read_head, Carried, BLOCK_HEADER, MAX_BLOCK_PAGES};
use crate::io::align::AlignedBuf;
use crate::io::Storage;
use crate::page::{verify, Expect, ExpectedState, Verdict, PAGE_SIZE};

/// Bytes per write of the zeroing ([`zero`]).
pub const ZERO_CHUNK: usize = 1 << 20;

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
    /// Writes [`write_back`] posted to the copy.
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

    /// A write (or, at page 0, the flush) of target `ti` that failed at `page`.
    fn write(ti: usize, page: u64, error: std::io::Error) -> Failed {
        Failed {
            target: Some(ti),
            page,
            write: true,
            error,
        }
    }
}

/// How a restore moves its pages: pages per write and writes in flight (RESTORE's
/// MAXTRANSFERSIZE and BUFFERCOUNT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// Most pages one write of a copy carries.
    pub pages: usize,
    /// Most writes in flight at once.
    pub buffers: usize,
}

impl Transfer {
    /// What SQL Server's restore from one disk device chooses when its RESTORE names neither
    /// option: 64 KB writes, 6 buffers (module doc).
    pub const SQL_SERVER_DISK: Transfer = Transfer {
        pages: 8,
        buffers: 6,
    };
}

/// What [`write_back`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// Pages written.
    pub pages: u64,
    /// Writes made.
    pub writes: u64,
    /// Most writes in flight at once.
    pub most_in_flight: usize,
}

/// Zeroes every target from page 1 to its end in sequential writes of [`ZERO_CHUNK`], one at
/// a time, and makes it durable: what SQL Server's restore does to a data file before it
/// writes any page when instant file initialization is not granted (module doc). `abandon`
/// is asked before each write.
pub fn zero(targets: &[Target], abandon: &dyn Fn() -> bool) -> Result<u64, Failed> {
    let zeros = AlignedBuf::new(ZERO_CHUNK).map_err(Failed::stream)?;
    let chunk_pages = (ZERO_CHUNK / PAGE_SIZE) as u64;
    let mut writes = 0;
    for (ti, t) in targets.iter().enumerate() {
        let end = t.generations.len() as u64;
        let mut page = 1u64;
        while page < end {
            if abandon() {
                return Err(Failed::stream(ended()));
            }
            let n = chunk_pages.min(end - page);
            let bytes = &zeros[..n as usize * PAGE_SIZE];
            t.storage
                .write_at(bytes, page * PAGE_SIZE as u64)
                .map_err(|e| Failed::write(ti, page, e))?;
            writes += 1;
            page += n;
        }
        t.storage.sync_data().map_err(|e| Failed::write(ti, 0, e))?;
    }
    Ok(writes)
}

/// The pages the stream in `stream` carries of each target's file, written into the target at
/// their place: each run of consecutive pages of one file within a block in writes of at most
/// `transfer.pages` pages, at most `transfer.buffers` in flight (`flight`). Blocks are read in
/// order until the END block. A page of a file that is not among `targets`, or beyond a
/// target's size, is an `InvalidData` error: the stream is not the one just written. `abandon`
/// is asked before each block: true ends the restore with an `Interrupted` error (the run's
/// phase ended). The copies are made durable once every write completed.
pub fn write_back(
    stream: &dyn Storage,
    targets: &mut [Target],
    transfer: Transfer,
    abandon: &dyn Fn() -> bool,
) -> Result<Restored, Failed> {
    let mut buf =
        AlignedBuf::new(BLOCK_HEADER + MAX_BLOCK_PAGES * PAGE_SIZE).map_err(Failed::stream)?;
    let mut flight =
        flight::Flight::new(transfer.buffers, transfer.pages).map_err(Failed::stream)?;
    let step = flight.transfer() / PAGE_SIZE;
    let len = stream.len().map_err(Failed::stream)?;
    let (mut offset, mut pages, mut writes) = (0u64, 0u64, 0u64);
    while offset + BLOCK_HEADER as u64 <= len {
        if abandon() {
            return Err(Failed::stream(ended()));
        }
        let head = read_block(stream, &mut buf, offset)?;
        let mut i = 0;
        while i < head.pages.len() {
            let (ti, j) = claim(targets, &head.pages, i)?;
            // The run [i, j) in writes of at most one transfer each.
            for k in (i..j).step_by(step) {
                let e = (k + step).min(j);
                let bytes = &buf[BLOCK_HEADER + k * PAGE_SIZE..BLOCK_HEADER + e * PAGE_SIZE];
                flight.write(targets, ti, head.pages[k].page, bytes)?;
                writes += 1;
            }
            pages += (j - i) as u64;
            i = j;
        }
        offset += head.len() as u64;
        if head.is_end() {
            break;
        }
    }
    flight.drain()?;
    for (ti, t) in targets.iter().enumerate() {
        t.storage.sync_data().map_err(|e| Failed::write(ti, 0, e))?;
    }
    Ok(Restored {
        pages,
        writes,
        most_in_flight: flight.max_live,
    })
}

/// Reads the block at `offset` into `buf`: its header, then its pages.
fn read_block(
    stream: &dyn Storage,
    buf: &mut AlignedBuf,
    offset: u64,
) -> Result<super::BlockHead, Failed> {
    read_full(stream, &mut buf[..BLOCK_HEADER], offset).map_err(Failed::stream)?;
    let head =
        read_head(&buf[..BLOCK_HEADER]).map_err(|e| Failed::stream(invalid(format!("{e}"))))?;
    read_full(
        stream,
        &mut buf[BLOCK_HEADER..head.len()],
        offset + BLOCK_HEADER as u64,
    )
    .map_err(Failed::stream)?;
    Ok(head)
}

/// The run of consecutive pages of one file from entry `i` of a block: its target and the
/// entry after it, each page's generation recorded in the target.
fn claim(targets: &mut [Target], entries: &[Carried], i: usize) -> Result<(usize, usize), Failed> {
    let first = entries[i];
    let mut j = i + 1;
    while j < entries.len()
        && entries[j].file == first.file
        && entries[j].page == first.page + (j - i) as u64
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
    for c in &entries[i..j] {
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
    }
    Ok((ti, j))
}

fn ended() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Interrupted, "the phase ended")
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

#[cfg(test)]
mod tests;
