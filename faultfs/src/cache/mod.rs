//! The volatile write cache: writes acknowledged but held in memory until a flush, dropped by
//! a power cut, and optionally a device that lies about flushes. This module is the pure
//! state (what is cached, what was lied about, what a power cut drops); `writeback.rs` does
//! the I/O, `command.rs` the control commands, `report.rs` the status and `lied` texts.
//!
//! Files are keyed by inode number, and each cached file keeps its own handle on the backing
//! file, so rename needs nothing and an unlinked file can still be written back.

mod command;
mod extents;
mod report;
mod writeback;

pub use command::{execute, parse, CacheCommand};
pub use extents::{Extent, ExtentMap, RangeSet};
pub use report::LieScope;

use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

/// Default bound of the cache, in MiB.
pub const DEFAULT_MAX_MIB: u64 = 64;
/// Sector size: a torn power cut keeps whole sectors.
pub const SECTOR: u64 = 512;

/// The cached state of one file.
pub struct FileCache {
    /// The backing file, written back through this handle.
    pub backing: Arc<File>,
    /// Cached writes.
    pub extents: ExtentMap,
    /// Ranges whose flush was acknowledged without persisting them.
    pub lied: RangeSet,
}

/// Pieces of one file to write back: the backing file and (offset, bytes, seq) of each.
pub struct Batch {
    /// Inode of the file.
    pub ino: u64,
    /// The backing file.
    pub backing: Arc<File>,
    /// The pieces.
    pub pieces: Vec<(u64, Vec<u8>, u64)>,
}

/// Counters shown in the status.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Writes taken into the cache.
    pub cached_writes: u64,
    /// Bytes written back to the backing files.
    pub written_back: u64,
    /// Bytes written back early because the cache was full.
    pub evicted: u64,
    /// Flushes (fsync, fdatasync, O_DSYNC writes) acknowledged honestly.
    pub flushes: u64,
    /// Flushes acknowledged without persisting.
    pub lied_flushes: u64,
    /// Cached writes (or parts of them) whose durability was acknowledged falsely.
    pub lied_writes: u64,
    /// Power cuts.
    pub power_cuts: u64,
    /// Extents and bytes dropped by power cuts.
    pub dropped_writes: u64,
    /// Bytes dropped by power cuts.
    pub dropped_bytes: u64,
}

/// A range lied about and then dropped by a power cut: (file name, offset, length).
pub type LostRange = (String, u64, u64);

/// What a power cut did.
#[derive(Debug, Default)]
pub struct Cut {
    /// Extents dropped.
    pub writes: u64,
    /// Bytes dropped.
    pub bytes: u64,
    /// Lied-about ranges dropped.
    pub lied: u64,
    /// For `power-cut torn`: the write torn.
    pub torn: Option<Tear>,
}

/// The newest cached write, torn by a power cut: its first sectors reach the medium.
#[derive(Debug)]
pub struct Tear {
    /// Inode of the file.
    pub ino: u64,
    /// The backing file.
    pub backing: Arc<File>,
    /// Offset of the write.
    pub off: u64,
    /// The sectors persisted (the first half of the write, rounded down to whole sectors).
    pub kept: Vec<u8>,
    /// Length of the whole write.
    pub len: u64,
}

/// The whole cache of the daemon.
pub struct Cache {
    /// Writes are cached (else they go straight to the backing files).
    pub enabled: bool,
    /// Bound in bytes; beyond it the oldest writes are written back.
    pub max_bytes: u64,
    /// Set while the device lies about flushes.
    pub lie: Option<LieScope>,
    files: HashMap<u64, FileCache>,
    next_seq: u64,
    epoch: u64,
    bytes: u64,
    /// Counters.
    pub stats: Stats,
    lost: Vec<LostRange>,
}

impl Cache {
    /// A cache, on or off, bounded at `max_mib` MiB.
    pub fn new(enabled: bool, max_mib: u64) -> Cache {
        Cache {
            enabled,
            max_bytes: max_mib.saturating_mul(1 << 20),
            lie: None,
            files: HashMap::new(),
            next_seq: 1,
            epoch: 0,
            bytes: 0,
            stats: Stats::default(),
            lost: Vec::new(),
        }
    }

    /// Bumped whenever cached bytes leave the cache: a read that saw an older epoch retries.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// True when the cache holds more than its bound.
    pub fn over_budget(&self) -> bool {
        self.bytes > self.max_bytes
    }

    /// True when nothing is cached for `ino`.
    pub fn is_clean(&self, ino: u64) -> bool {
        self.files.get(&ino).is_none_or(|f| f.extents.is_empty())
    }

    /// Caches a write of `data` at `off` in file `ino`.
    pub fn store(&mut self, ino: u64, backing: &Arc<File>, off: u64, data: &[u8]) {
        let f = self.files.entry(ino).or_insert_with(|| FileCache {
            backing: Arc::clone(backing),
            extents: ExtentMap::default(),
            lied: RangeSet::default(),
        });
        let before = f.extents.bytes();
        f.extents.insert(off, data.to_vec(), self.next_seq);
        self.bytes = self.bytes + f.extents.bytes() - before;
        self.next_seq += 1;
        self.stats.cached_writes += 1;
    }

    /// Lays the cached bytes of `[off, off+want)` of `ino` over `buf` (see [`ExtentMap::overlay`]).
    pub fn overlay(&self, ino: u64, off: u64, buf: &mut Vec<u8>, want: u64) {
        if let Some(f) = self.files.get(&ino) {
            f.extents.overlay(off, buf, want);
        }
    }

    /// End of the cached data of `ino` (0 if none): the file reads at least this long.
    pub fn cached_end(&self, ino: u64) -> u64 {
        self.files.get(&ino).map_or(0, |f| f.extents.end())
    }

    /// Whether a flush of `name` is to be lied about.
    pub fn lies_about(&self, name: &str) -> bool {
        self.lie.as_ref().is_some_and(|s| s.covers(name))
    }

    /// Acknowledges a flush of `[off, end)` of `ino` without persisting: marks what is cached
    /// there as lied about. Returns how many extents were newly marked.
    pub fn lie_about(&mut self, ino: u64, off: u64, end: u64) -> u64 {
        self.stats.lied_flushes += 1;
        let Some(f) = self.files.get_mut(&ino) else {
            return 0;
        };
        let mut marked = 0;
        let mut ranges = Vec::new();
        for (s, e) in f.extents.overlapping_mut(off, end) {
            ranges.push((s.max(off), (s + e.data.len() as u64).min(end)));
            if !e.lied {
                e.lied = true;
                marked += 1;
            }
        }
        for (s, e) in ranges {
            f.lied.insert(s, e);
        }
        self.stats.lied_writes += marked;
        marked
    }

    /// What to write back for `ino` (pieces overlapping `[off, end)`), or None if clean.
    pub fn batch(&self, ino: u64, off: u64, end: u64) -> Option<Batch> {
        let f = self.files.get(&ino)?;
        let pieces = f.extents.snapshot(off, end);
        (!pieces.is_empty()).then(|| Batch {
            ino,
            backing: Arc::clone(&f.backing),
            pieces,
        })
    }

    /// Every file with cached data.
    pub fn dirty_files(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .files
            .iter()
            .filter(|(_, f)| !f.extents.is_empty())
            .map(|(i, _)| *i)
            .collect();
        v.sort_unstable();
        v
    }

    /// The oldest cached pieces, across files, adding up to at least `bytes`.
    pub fn oldest(&self, bytes: u64) -> Vec<Batch> {
        let mut all: Vec<(u64, u64, u64)> = Vec::new();
        for (ino, f) in &self.files {
            for (s, e) in f.extents.iter() {
                all.push((e.seq, *ino, s));
            }
        }
        all.sort_unstable();
        let mut out: HashMap<u64, Batch> = HashMap::new();
        let mut taken = 0;
        for (seq, ino, s) in all {
            if taken >= bytes {
                break;
            }
            let f = &self.files[&ino];
            let Some(e) = f.extents.get(s) else {
                continue;
            };
            taken += e.data.len() as u64;
            out.entry(ino)
                .or_insert_with(|| Batch {
                    ino,
                    backing: Arc::clone(&f.backing),
                    pieces: Vec::new(),
                })
                .pieces
                .push((s, e.data.clone(), seq));
        }
        out.into_values().collect()
    }

    /// Records that `batch` reached the backing file: its pieces leave the cache (unless a
    /// later write replaced them meanwhile, which stays), and their ranges are no longer lies.
    pub fn written_back(&mut self, batch: &Batch, evicted: bool) {
        let Some(f) = self.files.get_mut(&batch.ino) else {
            return;
        };
        let mut dropped = 0;
        for (off, data, seq) in &batch.pieces {
            let end = off + data.len() as u64;
            dropped += f.extents.remove_seq(*off, end, *seq);
            f.lied.remove(*off, end);
        }
        self.bytes -= dropped;
        let n: u64 = batch.pieces.iter().map(|p| p.1.len() as u64).sum();
        self.stats.written_back += n;
        if evicted {
            self.stats.evicted += n;
        }
        self.epoch += 1;
    }

    /// Drops the cached bytes of `[off, end)` of `ino` (they were overwritten on the backing
    /// file, e.g. by a hole punch); lies about them are moot.
    pub fn discard(&mut self, ino: u64, off: u64, end: u64) {
        if let Some(f) = self.files.get_mut(&ino) {
            let before = f.extents.bytes();
            f.extents.remove_range(off, end);
            f.lied.remove(off, end);
            self.bytes -= before - f.extents.bytes();
            self.epoch += 1;
        }
    }

    /// Forgets file `ino` entirely (after it was written back and unlinked).
    pub fn forget(&mut self, ino: u64) {
        if let Some(f) = self.files.remove(&ino) {
            self.bytes -= f.extents.bytes();
            self.epoch += 1;
        }
    }

    /// Pulls the plug: every cached byte is dropped. `names` gives the current name of an
    /// inode, for the list of lied ranges lost. With `torn`, the newest cached write longer
    /// than a sector is returned so that its first sectors can be persisted.
    pub fn power_cut(&mut self, torn: bool, names: impl Fn(u64) -> String) -> Cut {
        let mut cut = Cut::default();
        if torn {
            cut.torn = self.newest_tearable();
        }
        let mut inos: Vec<u64> = self.files.keys().copied().collect();
        inos.sort_unstable();
        for ino in inos {
            let Some(f) = self.files.remove(&ino) else {
                continue;
            };
            cut.writes += f.extents.len() as u64;
            cut.bytes += f.extents.bytes();
            let name = names(ino);
            for (off, len) in f.lied.ranges() {
                cut.lied += 1;
                self.lost.push((name.clone(), off, len));
            }
        }
        self.bytes = 0;
        self.epoch += 1;
        self.stats.power_cuts += 1;
        self.stats.dropped_writes += cut.writes;
        self.stats.dropped_bytes += cut.bytes;
        cut
    }

    fn newest_tearable(&self) -> Option<Tear> {
        let (ino, f, off, e) = self
            .files
            .iter()
            .flat_map(|(ino, f)| f.extents.iter().map(move |(off, e)| (*ino, f, off, e)))
            .filter(|(_, _, _, e)| e.data.len() as u64 > SECTOR)
            .max_by_key(|(_, _, _, e)| e.seq)?;
        let len = e.data.len() as u64;
        let keep = (len / 2 / SECTOR).max(1) * SECTOR;
        Some(Tear {
            ino,
            backing: Arc::clone(&f.backing),
            off,
            kept: e.data[..keep as usize].to_vec(),
            len,
        })
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
