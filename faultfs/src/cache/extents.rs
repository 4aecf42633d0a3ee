//! Byte-range maps of the volatile cache. Pure: no I/O.
//!
//! [`ExtentMap`] holds the cached writes of one file as non-overlapping extents; a new write
//! replaces whatever part of older extents it covers (splitting them), so the map always
//! holds the newest bytes of every cached range. [`RangeSet`] is a set of byte ranges (the
//! ranges whose durability was acknowledged falsely).

use std::collections::BTreeMap;

/// A cached write (or the part of one that no later write replaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    /// The bytes.
    pub data: Vec<u8>,
    /// Age: the number of the write it came from (unique, increasing).
    pub seq: u64,
    /// Whether a flush was acknowledged for it without persisting it.
    pub lied: bool,
}

impl Extent {
    fn end(&self, start: u64) -> u64 {
        start + self.data.len() as u64
    }

    /// The part `[from, to)` of this extent starting at `start`.
    fn piece(&self, start: u64, from: u64, to: u64) -> Extent {
        Extent {
            data: self.data[(from - start) as usize..(to - start) as usize].to_vec(),
            seq: self.seq,
            lied: self.lied,
        }
    }
}

/// The cached writes of one file: non-overlapping extents keyed by offset.
#[derive(Debug, Default)]
pub struct ExtentMap {
    map: BTreeMap<u64, Extent>,
    bytes: u64,
}

impl ExtentMap {
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Number of extents held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// End of the last extent (0 when empty): the file is at least this long.
    pub fn end(&self) -> u64 {
        self.map.last_key_value().map_or(0, |(s, e)| e.end(*s))
    }

    /// The extents in offset order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Extent)> {
        self.map.iter().map(|(s, e)| (*s, e))
    }

    /// Mutable access to every extent overlapping `[off, end)`, with its offset.
    pub fn overlapping_mut(
        &mut self,
        off: u64,
        end: u64,
    ) -> impl Iterator<Item = (u64, &mut Extent)> {
        let first = self.first_overlapping(off);
        self.map.range_mut(first..end).map(|(s, e)| (*s, e))
    }

    /// The extent starting at `start`.
    pub fn get(&self, start: u64) -> Option<&Extent> {
        self.map.get(&start)
    }

    /// Start of the first extent that may overlap offsets from `off` on.
    fn first_overlapping(&self, off: u64) -> u64 {
        match self.map.range(..=off).next_back() {
            Some((s, e)) if e.end(*s) > off => *s,
            _ => off,
        }
    }

    /// Stores a write of `data` at `off`, replacing what older extents held there.
    pub fn insert(&mut self, off: u64, data: Vec<u8>, seq: u64) {
        if data.is_empty() {
            return;
        }
        let end = off + data.len() as u64;
        self.remove_range(off, end);
        self.bytes += data.len() as u64;
        let lied = false;
        self.map.insert(off, Extent { data, seq, lied });
    }

    /// Drops the cached bytes of `[off, end)`, keeping the parts of extents outside it.
    pub fn remove_range(&mut self, off: u64, end: u64) {
        if off >= end {
            return;
        }
        let first = self.first_overlapping(off);
        let starts: Vec<u64> = self.map.range(first..end).map(|(s, _)| *s).collect();
        for start in starts {
            let Some(ext) = self.map.remove(&start) else {
                continue;
            };
            self.bytes -= ext.data.len() as u64;
            let e_end = ext.end(start);
            if start < off {
                self.put(start, ext.piece(start, start, off));
            }
            if e_end > end {
                self.put(end, ext.piece(start, end, e_end));
            }
        }
    }

    /// Drops every extent of write `seq` lying in `[off, end)`; returns the bytes dropped.
    pub fn remove_seq(&mut self, off: u64, end: u64, seq: u64) -> u64 {
        let first = self.first_overlapping(off);
        let starts: Vec<u64> = self
            .map
            .range(first..end)
            .filter(|(_, e)| e.seq == seq)
            .map(|(s, _)| *s)
            .collect();
        let mut dropped = 0;
        for s in starts {
            if let Some(e) = self.map.remove(&s) {
                dropped += e.data.len() as u64;
            }
        }
        self.bytes -= dropped;
        dropped
    }

    fn put(&mut self, start: u64, ext: Extent) {
        self.bytes += ext.data.len() as u64;
        self.map.insert(start, ext);
    }

    /// Lays the cached bytes of `[off, off+want)` over `buf`, which holds what the backing
    /// file had from `off` (short at its end); `buf` is zero-extended to reach cached bytes
    /// beyond it, as a file extended by a cached write reads.
    pub fn overlay(&self, off: u64, buf: &mut Vec<u8>, want: u64) {
        let end = off + want;
        let first = self.first_overlapping(off);
        for (&s, e) in self.map.range(first..end) {
            let from = s.max(off);
            let to = e.end(s).min(end);
            if from >= to {
                continue;
            }
            let need = (to - off) as usize;
            if buf.len() < need {
                buf.resize(need, 0);
            }
            buf[(from - off) as usize..need]
                .copy_from_slice(&e.data[(from - s) as usize..(to - s) as usize]);
        }
    }

    /// Copies of the extents overlapping `[off, end)` as (offset, bytes, seq), for writing back.
    pub fn snapshot(&self, off: u64, end: u64) -> Vec<(u64, Vec<u8>, u64)> {
        let first = self.first_overlapping(off);
        self.map
            .range(first..end)
            .map(|(s, e)| (*s, e.data.clone(), e.seq))
            .collect()
    }
}

/// A set of byte ranges, merged where they touch.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RangeSet {
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// Adds `[off, end)`.
    pub fn insert(&mut self, mut off: u64, mut end: u64) {
        if off >= end {
            return;
        }
        let touching: Vec<(u64, u64)> = self
            .map
            .range(..=end)
            .rev()
            .take_while(|(_, e)| **e >= off)
            .map(|(s, e)| (*s, *e))
            .collect();
        for (s, e) in touching {
            self.map.remove(&s);
            off = off.min(s);
            end = end.max(e);
        }
        self.map.insert(off, end);
    }

    /// Removes `[off, end)`, splitting ranges that stick out of it.
    pub fn remove(&mut self, off: u64, end: u64) {
        if off >= end {
            return;
        }
        let hit: Vec<(u64, u64)> = self
            .map
            .range(..end)
            .rev()
            .take_while(|(_, e)| **e > off)
            .map(|(s, e)| (*s, *e))
            .collect();
        for (s, e) in hit {
            self.map.remove(&s);
            if s < off {
                self.map.insert(s, off);
            }
            if e > end {
                self.map.insert(end, e);
            }
        }
    }

    /// The ranges as (offset, length), in order.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(s, e)| (*s, e - s))
    }

    /// Total bytes covered.
    pub fn bytes(&self) -> u64 {
        self.map.iter().map(|(s, e)| e - s).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}
