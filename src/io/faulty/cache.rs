//! The faulty backend's volatile write cache: what a power cut keeps and what it loses.
//!
//! With the cache on ([`super::FaultyBackend::enable_volatile_cache`]), every file has a
//! durable image beside the bytes reads see. A write lands in both the visible bytes and the
//! cache's list of pending writes; `sync_data` on an honest device applies the file's pending
//! writes to the durable image, and an `O_DSYNC` write is durable at completion. A lying
//! device acknowledges the flush (or the `O_DSYNC` write) and keeps the writes pending, marked
//! as acknowledged: those are the writes a power cut may lose in breach of the contract.
//!
//! Size changes (truncate, allocate) and whole-file replacement (the journal's compaction,
//! synced and renamed) are durable at once: the model loses data, not metadata.
//!
//! A power cut ([`Keep`]) builds the image a device would leave: the durable image, and of each
//! pending write, in the order written, either nothing, everything, or each aligned unit of it
//! kept or dropped independently (a tear at that unit). The bytes of acknowledged writes that
//! end up not on the image, with no later write kept over them, are reported as [`Lost`]: at
//! each byte, the newest acknowledged write missing there, whatever the offsets and lengths
//! of the writes over it.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Pending writes a file's cache holds before it writes the oldest back by itself (bounds
/// the memory of a long run, as a device's cache is bounded).
const MAX_PENDING: usize = 1 << 14;

/// What a power cut does with the writes still in the volatile cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every pending write is dropped.
    Nothing,
    /// Every pending write reached the media whole.
    Everything,
    /// Each `unit`-byte unit (aligned in the file) of each pending write is kept or dropped
    /// independently, with even odds: a device tearing unacknowledged writes at that unit.
    Units(u32),
}

/// The part of an acknowledged write a power cut lost.
#[derive(Debug, Clone)]
pub struct Lost {
    /// The file.
    pub path: std::path::PathBuf,
    /// Where the acknowledged write began.
    pub write_offset: u64,
    /// What it wrote.
    pub bytes: Arc<[u8]>,
    /// The byte ranges `[start, end)` of it not on the image after the cut.
    pub ranges: Vec<(u64, u64)>,
}

/// One write held in the cache.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    offset: u64,
    bytes: Arc<[u8]>,
    /// Acknowledged as durable (by a lying flush or O_DSYNC) but not durable.
    acked: bool,
}

impl Pending {
    fn end(&self) -> u64 {
        self.offset + self.bytes.len() as u64
    }
}

/// A file's durable image and the writes not yet in it.
#[derive(Debug, Default)]
pub(crate) struct Volatile {
    pub(crate) durable: Vec<u8>,
    pending: Vec<Pending>,
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Copies `bytes` into `image` at `offset`, growing it with zeros as needed.
fn put(image: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = to_usize(offset);
    let end = start + bytes.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[start..end].copy_from_slice(bytes);
}

impl Volatile {
    /// A cache over a file whose bytes are all durable.
    pub(crate) fn over(bytes: &[u8]) -> Volatile {
        Volatile {
            durable: bytes.to_vec(),
            pending: Vec::new(),
        }
    }

    /// A write of `bytes` at `offset` completed: durable at once when `durable`, else held
    /// (as acknowledged when `acked`: a lying O_DSYNC write).
    pub(crate) fn write(&mut self, offset: u64, bytes: &[u8], durable: bool, acked: bool) {
        if bytes.is_empty() {
            return;
        }
        if durable {
            // The device wrote it through: older cached copies of these bytes are gone.
            self.carve(offset, offset + bytes.len() as u64);
            put(&mut self.durable, offset, bytes);
            return;
        }
        self.pending.push(Pending {
            offset,
            bytes: bytes.into(),
            acked,
        });
        if self.pending.len() > MAX_PENDING {
            let oldest = self.pending.remove(0);
            put(&mut self.durable, oldest.offset, &oldest.bytes);
        }
    }

    /// An honest flush: every pending write is durable.
    pub(crate) fn flush(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            put(&mut self.durable, p.offset, &p.bytes);
        }
    }

    /// A lying flush: acknowledged, nothing made durable.
    pub(crate) fn lie(&mut self) {
        self.pending.iter_mut().for_each(|p| p.acked = true);
    }

    /// The file's size is now `len`, durably.
    pub(crate) fn set_len(&mut self, len: u64) {
        self.durable.resize(to_usize(len), 0);
        self.carve(len, u64::MAX);
    }

    /// The file's content is now `bytes`, durably (a replacement synced and renamed).
    pub(crate) fn replace(&mut self, bytes: &[u8]) {
        self.durable = bytes.to_vec();
        self.pending.clear();
    }

    /// Removes `[start, end)` from every pending write (splitting those it falls inside).
    fn carve(&mut self, start: u64, end: u64) {
        let mut kept = Vec::with_capacity(self.pending.len());
        for p in self.pending.drain(..) {
            if p.end() <= start || p.offset >= end {
                kept.push(p);
                continue;
            }
            if p.offset < start {
                kept.push(part(&p, p.offset, start));
            }
            if p.end() > end {
                kept.push(part(&p, end, p.end()));
            }
        }
        self.pending = kept;
    }

    /// Pending writes (for a test's count).
    pub(crate) fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The image a power cut leaves, and what it lost of acknowledged writes (index of the
    /// write, byte range). With `in_order` (an append file), what survives is a prefix: once a
    /// unit is dropped, so is every later one.
    pub(crate) fn cut(
        &self,
        keep: Keep,
        in_order: bool,
        rng: &mut SmallRng,
    ) -> (Vec<u8>, Vec<(usize, u64, u64)>) {
        let mut image = self.durable.clone();
        // Byte ranges (start -> (index, end)), none overlapping another: the newest acknowledged
        // write whose bytes are missing there. Kept by byte, not by a write's start: a shorter
        // write starting where a longer one did covers only its own bytes of it.
        let mut rolled: BTreeMap<u64, (usize, u64)> = BTreeMap::new();
        let mut broken = false;
        for (i, p) in self.pending.iter().enumerate() {
            for (start, end) in units(p, keep) {
                let kept = !broken
                    && match keep {
                        Keep::Nothing => false,
                        Keep::Everything => true,
                        Keep::Units(_) => rng.random_bool(0.5),
                    };
                broken |= in_order && !kept;
                if kept {
                    let from = to_usize(start - p.offset);
                    put(
                        &mut image,
                        start,
                        &p.bytes[from..from + to_usize(end - start)],
                    );
                    clear(&mut rolled, start, end);
                } else if p.acked {
                    clear(&mut rolled, start, end);
                    rolled.insert(start, (i, end));
                }
            }
        }
        let lost = rolled
            .into_iter()
            .map(|(start, (i, end))| (i, start, end))
            .collect();
        (image, lost)
    }

    /// The pending write at `index` (for the report of what a cut lost).
    pub(crate) fn pending_at(&self, index: usize) -> (u64, Arc<[u8]>) {
        let p = &self.pending[index];
        (p.offset, Arc::clone(&p.bytes))
    }
}

/// Removes `[start, end)` from the ranges of `lost` (start -> (write, end), none overlapping
/// another), cutting short or splitting those it overlaps.
fn clear(lost: &mut BTreeMap<u64, (usize, u64)>, start: u64, end: u64) {
    // Sorted and disjoint, the ranges' ends are sorted too: walking back from the last one
    // starting before `end`, they overlap until one ends at or before `start`.
    let hit: Vec<(u64, usize, u64)> = lost
        .range(..end)
        .rev()
        .take_while(|(_, &(_, e))| e > start)
        .map(|(&s, &(i, e))| (s, i, e))
        .collect();
    for (s, i, e) in hit {
        lost.remove(&s);
        if s < start {
            lost.insert(s, (i, start));
        }
        if e > end {
            lost.insert(end, (i, e));
        }
    }
}

/// The part `[start, end)` of a pending write.
fn part(p: &Pending, start: u64, end: u64) -> Pending {
    let from = to_usize(start - p.offset);
    Pending {
        offset: start,
        bytes: p.bytes[from..from + to_usize(end - start)].into(),
        acked: p.acked,
    }
}

/// The ranges a cut decides on one by one: the whole write, or its aligned units (the first
/// and last cut short when the write is not aligned).
fn units(p: &Pending, keep: Keep) -> Vec<(u64, u64)> {
    let unit = match keep {
        Keep::Units(u) => u64::from(u.max(1)),
        _ => return vec![(p.offset, p.end())],
    };
    let mut out = Vec::new();
    let mut at = p.offset;
    while at < p.end() {
        let next = ((at / unit) + 1) * unit;
        out.push((at, next.min(p.end())));
        at = next;
    }
    out
}

/// The generator of one cut, from its seed.
pub(crate) fn cut_rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_of(len: usize) -> Volatile {
        Volatile::over(&vec![0u8; len])
    }

    #[test]
    fn an_honest_flush_makes_writes_durable_and_a_cut_keeps_them() {
        let mut c = cache_of(16);
        c.write(0, &[1; 8], false, false);
        assert_eq!(c.durable, vec![0; 16], "not durable before the flush");
        c.flush();
        c.write(8, &[2; 8], false, false);
        let (image, lost) = c.cut(Keep::Nothing, false, &mut cut_rng(1));
        assert_eq!(&image[..8], &[1; 8]);
        assert_eq!(&image[8..], &[0; 8], "the unsynced write is dropped");
        assert!(lost.is_empty(), "nothing acknowledged was lost");
    }

    #[test]
    fn a_lying_flush_leaves_the_writes_to_be_lost_and_reported() {
        let mut c = cache_of(16);
        c.write(0, &[1; 16], false, false);
        c.lie();
        let (image, lost) = c.cut(Keep::Nothing, false, &mut cut_rng(1));
        assert_eq!(image, vec![0; 16]);
        assert_eq!(lost, vec![(0, 0, 16)]);
    }

    #[test]
    fn a_tear_keeps_whole_units_and_reports_only_dropped_acknowledged_ones() {
        let mut c = cache_of(64);
        c.write(0, &[7; 64], false, false);
        c.lie();
        let (image, lost) = c.cut(Keep::Units(16), false, &mut cut_rng(3));
        let mut dropped: Vec<u64> = lost.iter().map(|l| l.1).collect();
        dropped.sort_unstable();
        for u in 0..4u64 {
            let bytes = &image[(u * 16) as usize..((u + 1) * 16) as usize];
            assert!(
                bytes == [7; 16] || bytes == [0; 16],
                "a unit is whole or absent"
            );
            assert_eq!(bytes == [0; 16], dropped.contains(&(u * 16)), "unit {u}");
        }
        assert!(
            !dropped.is_empty() && dropped.len() < 4,
            "seed 3 tears: {dropped:?}"
        );
    }

    #[test]
    fn a_newer_write_kept_over_a_lost_one_is_no_loss() {
        let mut c = cache_of(8);
        c.write(0, &[1; 8], false, false);
        c.lie();
        c.write(0, &[2; 8], false, false);
        let mut lost_any = false;
        for seed in 0..32 {
            let (image, lost) = c.cut(Keep::Units(8), false, &mut cut_rng(seed));
            // The image holds the newer write, the older, or neither; only the older missing
            // with nothing newer over it is a loss.
            assert_eq!(lost.is_empty(), image != [0; 8], "seed {seed}: {image:?}");
            lost_any |= !lost.is_empty();
        }
        assert!(lost_any);
    }

    #[test]
    fn a_write_through_replaces_older_cached_bytes() {
        let mut c = cache_of(16);
        c.write(0, &[1; 16], false, false);
        c.write(4, &[2; 8], true, false);
        let (image, _) = c.cut(Keep::Everything, false, &mut cut_rng(0));
        assert_eq!(
            &image[4..12],
            &[2; 8],
            "the older cached write cannot land over it"
        );
        assert_eq!(&image[..4], &[1; 4]);
        assert_eq!(c.pending(), 2, "split around the write-through range");
    }

    #[test]
    fn appends_in_order_survive_as_a_prefix() {
        let mut c = cache_of(0);
        (0..8u8).for_each(|i| c.write(u64::from(i) * 4, &[i + 1; 4], false, false));
        for seed in 0..16 {
            let (image, _) = c.cut(Keep::Units(4), true, &mut cut_rng(seed));
            let kept = image.chunks(4).take_while(|u| u[0] != 0).count();
            assert!(
                image[kept * 4..].iter().all(|&b| b == 0),
                "seed {seed}: {image:?}"
            );
        }
    }

    #[test]
    fn units_follow_the_file_alignment() {
        let p = Pending {
            offset: 10,
            bytes: vec![0u8; 30].into(),
            acked: false,
        };
        assert_eq!(
            units(&p, Keep::Units(16)),
            vec![(10, 16), (16, 32), (32, 40)]
        );
        assert_eq!(units(&p, Keep::Nothing), vec![(10, 40)]);
    }
}
