//! The log writer's writes in flight (issue #24 §1): a flush posts each closed log block as an
//! asynchronous write ([`Storage::post`], the path the data actors' flights use), so several
//! blocks are in flight at once, up to [`MAX_LOG_WRITES_IN_FLIGHT`], while the log becomes
//! durable strictly in LSN order.
//!
//! # The rule
//!
//! Every posted block gets an entry in the ledger, in LSN order (blocks are closed and posted
//! under one lock, so posting order is LSN order). A completed write only marks its entry. The
//! log's durable end then advances over the *contiguous prefix* of settled entries, never past
//! an entry still in flight:
//! - under write-through (O_DSYNC) a completed write is durable, so the prefix is published at
//!   once;
//! - otherwise the thread that takes the prefix issues one `fdatasync` after taking it (so it
//!   covers every write of the prefix, all completed before) and publishes only once it
//!   returned. Taking, syncing and publishing are serialized (`LogWrites::advance`), so a
//!   later prefix can never be published before an earlier one.
//!
//! The flush hook (the durability journal's acknowledgements) is told under the ledger's lock
//! as the durable end moves, so in LSN order and only ever of blocks that are durable: a power
//! cut can lose a block in flight, never one the journal holds the device to.
//!
//! A flusher waits until everything up to the last block posted when it posted (its own, or
//! the earlier flushers' that hold its LSN) is durable, and returns `Ok` only when the log is
//! durable past the LSN it asked for, so a data page with LSN `l` is still written only after
//! `durable_end() > l`. A failed write fails the flush that posted it, as a synchronous write
//! did (the caller reports it); its block stays in the ledger, in its place, and holds the
//! durable end before it: the next flush writes it again before its own blocks. The durable
//! end never passes a block that was not written (before issue #24 the next group commit
//! moved it past a failed block, and the journal then acknowledged a block that was never
//! written). A failed `fdatasync` fails the flush that issued it the same way, and the next
//! one syncs again.
//!
//! # The bound past the durable end
//!
//! A block written and not yet durable (in flight, or completed and waiting for the
//! `fdatasync` of its group commit) overwrites, in the circular area, part of the lap before,
//! which the journal may still hold as durable: a power cut that tears or drops the write
//! leaves that older part broken. So the writer never posts a block ending more than
//! [`unflushed_bound`] bytes past the durable end, unless nothing posted is waiting to be
//! durable (then one block, however it is placed); the closed blocks beyond wait in the
//! flight's queue (`Posting::held`) until a flush has made the earlier ones durable, and any
//! flusher posts them, in LSN order. Every write not yet durable therefore lies before
//! `durable_end + unflushed_bound`, and a power cut can have damaged only what lies before
//! that, a lap back: `sqliosim verify`'s walk of the log holds whole only the blocks after it
//! (`check::scan::scan_log`). Before the bound the forced-flush log, written without `O_DSYNC`,
//! could run far ahead of its `fdatasync`, and cuts tearing those writes read as a broken
//! durable chain (`tests/crash_model_compact.rs`, 5 to 15 of about 120 honest cuts).
//!
//! # What a log backup has not read yet
//!
//! While a log backup is configured (`[BackupUser] LogBackupInterval`), the log may not reuse
//! space a log backup has not yet read, as SQL Server's log is held by `LOG_BACKUP`: the log
//! backup sets the oldest LSN it still needs ([`super::wal::Wal::retain_from`]) and no block is
//! posted that would overwrite it (ending more than the area past it). Such a block waits in
//! the flight's queue, and its flusher with it (the log is full, SQL Server's 9002), until the
//! log backup has read past it; nothing else holds it (not the bound's exception). The log
//! backup lets go when it ends ([`super::wal::Wal::retain_from`] with `None`).
//!
//! # The depth
//!
//! The writes are bounded by the log's own depth, not by MaxOutstandingIO (see
//! [`super::logio`]): [`MAX_LOG_WRITES_IN_FLIGHT`] frames of 60 KB, one per block in flight. A
//! flusher that finds none free, or the file's throttle full, first collects a completion of
//! its own (it may never wait for a permit it holds itself), else waits for another
//! flusher's. With the blocking back ends (`--engine sync`, the in-memory one) a post is done
//! on the spot, so one write is in flight at a time, as before.

mod durable;
mod post;

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sync::{Condvar, Mutex};

use super::logblock::{LogBlock, MAX_LOG_BLOCK};
use super::logio::{Begun, LogGate, LogIo};
use crate::io::{BufPool, Completions, Storage};

/// Most log writes in flight at once: SQL Server's log writer keeps up to 32 outstanding
/// ("SQL Server I/O Basics, Chapter 2"; 112 from SQL Server 2012 on 64-bit, per Microsoft's
/// "SQL Server 2012 log writer" notes). We use 32.
pub const MAX_LOG_WRITES_IN_FLIGHT: usize = 32;

/// How far past the durable end the log may be written before its earlier writes are made
/// durable, for a circular area of `area_len` bytes: a quarter of the area, at least two
/// blocks (one, and the rest of a lap a block skips before it) and at most what the writes in
/// flight can hold at once. The writer and the verify's walk share it.
pub fn unflushed_bound(area_len: u64) -> u64 {
    let block = u64::from(MAX_LOG_BLOCK);
    (area_len / 4).clamp(2 * block, MAX_LOG_WRITES_IN_FLIGHT as u64 * block)
}

/// Where a posted block stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    InFlight,
    Written,
    /// The write failed: the next flush writes the block again.
    Failed,
}

/// One posted block.
#[derive(Debug)]
struct Entry {
    block: LogBlock,
    state: State,
}

impl Entry {
    fn end(&self) -> u64 {
        end_of(&self.block)
    }
}

/// The stream position right after `block`.
fn end_of(block: &LogBlock) -> u64 {
    block.lsn + u64::from(block.len)
}

/// Whether a flush to `lsn` (`None`: everything up to `goal`) is done.
fn reached(lsn: Option<u64>, goal: u64, wal: &dyn Publish) -> bool {
    let end = wal.durable_end();
    lsn.map_or(end >= goal, |l| end > l)
}

/// The posted blocks not yet durable, in LSN order.
#[derive(Debug, Default)]
struct Ledger {
    entries: VecDeque<Entry>,
}

/// What the durable end moved to: told to the WAL under the ledger's lock.
pub(super) trait Publish {
    /// The log is durable through the block at `last_block`, up to `durable_end`.
    fn publish(&self, last_block: u64, durable_end: u64);
    /// The log's durable end now.
    fn durable_end(&self) -> u64;
}

/// What was closed and posted, under one lock (LSN order).
#[derive(Debug, Default)]
struct Posting {
    /// End of the last block posted.
    end: u64,
    /// Blocks closed and not posted yet: beyond the bound past the durable end.
    held: VecDeque<LogBlock>,
}

/// The log's writes in flight.
#[derive(Debug)]
pub(super) struct LogWrites {
    frames: Arc<BufPool>,
    /// How far past the durable end blocks may be posted ([`unflushed_bound`]).
    bound: u64,
    /// Serializes closing and posting: LSN order.
    posted: Mutex<Posting>,
    ledger: Mutex<Ledger>,
    changed: Condvar,
    /// Serializes taking a prefix, its sync and its publication.
    advancing: Mutex<()>,
    /// No block may be posted ending past this LSN (`u64::MAX`: no log backup holds the
    /// log): the oldest LSN a log backup has not read, plus the area.
    retain_limit: AtomicU64,
    /// Told when the retention moves.
    retained: (Mutex<()>, Condvar),
}

/// One of this flusher's writes in flight.
struct Mine<'a> {
    begun: Begun<'a>,
    lsn: u64,
    len: usize,
}

/// One flush's own writes, and what came of them.
struct Flush<'a> {
    queue: Arc<Completions>,
    mine: Vec<Option<Mine<'a>>>,
    in_flight: usize,
    ios: Vec<LogIo>,
    failed: Option<io::Error>,
}

/// What a flusher waiting for the log found.
enum Waited {
    /// Durable through its target.
    Durable,
    /// A block before its target failed: write it again.
    Failed,
}

impl LogWrites {
    /// A flight whose next block starts at `start`, posting at most `bound` bytes past the
    /// durable end ([`unflushed_bound`]).
    pub fn new(start: u64, bound: u64) -> io::Result<LogWrites> {
        Ok(LogWrites {
            frames: BufPool::new(MAX_LOG_WRITES_IN_FLIGHT, MAX_LOG_BLOCK as usize)?,
            bound,
            posted: Mutex::new(Posting {
                end: start,
                held: VecDeque::new(),
            }),
            ledger: Mutex::new(Ledger::default()),
            changed: Condvar::new(),
            advancing: Mutex::new(()),
            retain_limit: AtomicU64::new(u64::MAX),
            retained: (Mutex::new(()), Condvar::new()),
        })
    }

    /// Holds the log from `oldest` on (the oldest LSN a log backup has not read yet) in an
    /// area of `area_len` bytes: no block that would overwrite it is posted. `None` lets go.
    pub fn retain_from(&self, oldest: Option<u64>, area_len: u64) {
        let limit = oldest.map_or(u64::MAX, |o| o.saturating_add(area_len));
        let _l = self.retained.0.lock();
        self.retain_limit.store(limit, Ordering::Release);
        self.retained.1.notify_all();
    }

    /// Whether the log space `block` would overwrite has been read by the log backup.
    fn retention_allows(&self, block: &LogBlock) -> bool {
        end_of(block) <= self.retain_limit.load(Ordering::Acquire)
    }

    /// Waits a little for the log backup to read past `block` (the log is full).
    fn wait_for_space(&self, block: &LogBlock) {
        let mut l = self.retained.0.lock();
        if !self.retention_allows(block) {
            crate::clock::wait_for(&self.retained.1, &mut l, Duration::from_millis(20));
        }
    }

    /// Restarts after an existing log ending at `start` (nothing is in flight then).
    pub fn restart_at(&self, start: u64) {
        *self.posted.lock() = Posting {
            end: start,
            held: VecDeque::new(),
        };
        self.ledger.lock().entries.clear();
    }

    /// Writes the blocks `close` hands over (called under the posting lock, so in LSN order),
    /// after any whose write failed before, and waits until the log is durable through them
    /// and every earlier block; returns the requests made. `Ok` only when the log is durable
    /// past `lsn` (any `lsn` for `None`).
    #[allow(clippy::too_many_arguments)]
    pub fn flush(
        &self,
        storage: &dyn Storage,
        write_through: bool,
        lsn: Option<u64>,
        offset_of: impl Fn(u64) -> u64,
        close: impl FnOnce() -> Vec<LogBlock>,
        gate: &LogGate<'_>,
        wal: &dyn Publish,
    ) -> io::Result<Vec<LogIo>> {
        let mut f = Flush {
            queue: Arc::new(Completions::default()),
            mine: Vec::new(),
            in_flight: 0,
            ios: Vec::new(),
            failed: None,
        };
        let mut close = Some(close);
        // For a flush of everything (`lsn` None): the end of what was closed when it looked.
        let mut goal = 0;
        loop {
            let (target, held, full) = {
                let mut posted = self.posted.lock();
                if lsn.is_some_and(|l| wal.durable_end() > l) {
                    return Ok(f.ios);
                }
                let again: Vec<LogBlock> = {
                    let mut l = self.ledger.lock();
                    l.entries
                        .iter_mut()
                        .filter(|e| e.state == State::Failed)
                        .map(|e| {
                            e.state = State::InFlight;
                            e.block
                        })
                        .collect()
                };
                for block in again {
                    self.post(storage, &block, offset_of(block.lsn), gate, &mut f, false);
                }
                if let Some(close) = close.take() {
                    posted.held.extend(close());
                    goal = posted.held.back().map_or(posted.end, end_of);
                }
                while let Some(block) = posted.held.front().copied() {
                    if !self.may_post(&block, wal) {
                        break;
                    }
                    self.post(storage, &block, offset_of(block.lsn), gate, &mut f, true);
                    posted.held.pop_front();
                    posted.end = end_of(&block);
                }
                let full = posted
                    .held
                    .front()
                    .copied()
                    .filter(|b| !self.retention_allows(b));
                (posted.end, !posted.held.is_empty(), full)
            };
            while f.in_flight > 0 {
                let c = f.queue.wait();
                self.completed(c, &mut f);
            }
            if let Some(e) = f.failed.take() {
                return Err(e);
            }
            match self.wait_durable(storage, write_through, target, wal, &mut f.ios)? {
                // Blocks held back by the bound, ours among them: post them now, or once the
                // log backup has read the space they would overwrite.
                Waited::Durable if held && !reached(lsn, goal, wal) => {
                    if let Some(block) = full {
                        self.wait_for_space(&block);
                    }
                    continue;
                }
                Waited::Durable => break,
                Waited::Failed => continue,
            }
        }
        match lsn {
            Some(l) if wal.durable_end() <= l => Err(io::Error::other(format!(
                "the log is not durable past LSN {l} after its flush"
            ))),
            _ => Ok(f.ios),
        }
    }

    /// Whether `block` may be posted now: it overwrites nothing a log backup still needs, and
    /// it ends within the bound past the durable end, or nothing posted is waiting to be
    /// durable (the durable end is where it follows on).
    fn may_post(&self, block: &LogBlock, wal: &dyn Publish) -> bool {
        self.retention_allows(block)
            && (end_of(block) <= wal.durable_end().saturating_add(self.bound)
                || self.ledger.lock().entries.is_empty())
    }
}

#[cfg(test)]
mod tests;
