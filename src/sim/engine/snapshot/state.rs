//! The snapshot state of the pages of one snapshot file, kept only for the pages a writer
//! reached while the snapshot was open: one word a page (its state at the snapshot's point in
//! time, captured once, and whether its pre-image was copied or lost), in shards.
//!
//! Why sparse: a page no writer has touched since the snapshot opened is, in the source, what it
//! was then, so its snapshot state is the source oracle's own and needs no word here (the check
//! reads it under the page's read latch, which no writer holds). Only the pages written during
//! the check have a word, and a check over a terabyte usually sees a small part of it written.
//!
//! Why shards, and why each may turn dense: page `p` belongs to shard `p % shards`, so the
//! writers, which reach pages spread as the latches' stripes are, rarely meet on one lock. A
//! shard starts as a hash map from page to word; when the map's next growth would take more
//! bytes than a plain array of one word per page of the shard, the shard becomes that array
//! (8 bytes a page, every word kept) and stays so. Each shard decides alone, so a file's worst
//! case is one word a page plus the shards' fixed cost, and a switch holds two forms of one
//! shard at once, never two of the whole file (a shard of a 1 TiB file is 32,768 pages, 256 KiB
//! as an array).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::sync::Mutex;

use crate::page::ExpectedState;

/// The word holds a captured state.
pub(super) const CAPTURED: u64 = 1 << 63;
/// The page's pre-image is in the sparse file.
pub(super) const COPIED: u64 = 1 << 62;
/// The page's pre-image could not be kept (reported when it happened).
pub(super) const LOST: u64 = 1 << 61;
const UNKNOWN: u64 = 1 << 60;
const IN_FLIGHT: u64 = 1 << 59;
const GEN_MASK: u64 = IN_FLIGHT - 1;

/// Most shards a file gets: a lock for many more writers than a run has, 4,096 × 48 bytes.
pub const MAX_SHARDS: u64 = 4096;
/// Pages a shard covers at least (up to [`MAX_SHARDS`]): its array is then 8 KiB.
pub const SHARD_MIN_PAGES: u64 = 1024;

/// The page keys are ours, never an adversary's: the default SipHash keys do.
type Map = HashMap<u64, u64, BuildHasherDefault<DefaultHasher>>;

/// One shard's words: sparse until an array is the cheaper form.
#[derive(Debug)]
enum Shard {
    /// The words of the pages captured, by page.
    Sparse(Map),
    /// One word per page of the shard, by `page / shards`.
    Dense(Box<[u64]>),
}

/// Snapshot states of the pages `1..pages` of a file (see the module doc).
#[derive(Debug)]
pub struct PageStates {
    pages: u64,
    shards: Box<[Mutex<Shard>]>,
    /// Pages of the largest shard, the length of a shard's array.
    shard_pages: u64,
    /// The old generation of each page captured in flight or unknown (a few pages).
    olds: Mutex<HashMap<u64, u64>>,
}

/// Buckets of a std `HashMap` sized for `items` (hashbrown's rule: at least 4, then the power
/// of two that keeps it 7/8 full). A wrong guess only moves the switch to an array.
fn buckets_for(items: usize) -> usize {
    match items {
        0 => 0,
        1..=3 => 4,
        4..=7 => 8,
        _ => (items * 8).div_ceil(7).next_power_of_two(),
    }
}

/// Bytes of a map's table of `buckets` buckets: a (page, word) pair and a control byte each,
/// and a group of control bytes more.
fn table_bytes(buckets: usize) -> usize {
    match buckets {
        0 => 0,
        b => b * (16 + 1) + 16,
    }
}

/// Buckets of a map of `capacity` (the inverse of hashbrown's rule).
fn buckets_of(capacity: usize) -> usize {
    match capacity {
        0 => 0,
        c if c < 8 => c + 1,
        c => c * 8 / 7,
    }
}

impl PageStates {
    /// No page captured, of a file of `pages` pages, sharded by [`shards_for`].
    pub fn new(pages: u64) -> PageStates {
        PageStates::with_shards(pages, shards_for(pages))
    }

    /// No page captured, `shards` shards (at least one).
    pub fn with_shards(pages: u64, shards: u64) -> PageStates {
        let shards = shards.max(1);
        let sparse = || Mutex::new(Shard::Sparse(Map::default()));
        PageStates {
            pages,
            shards: (0..shards).map(|_| sparse()).collect(),
            shard_pages: pages.div_ceil(shards),
            olds: Mutex::new(HashMap::new()),
        }
    }

    fn shard(&self, page: u64) -> Option<&Mutex<Shard>> {
        (page >= 1 && page < self.pages)
            .then(|| &self.shards[(page % self.shards.len() as u64) as usize])
    }

    fn index(&self, page: u64) -> usize {
        (page / self.shards.len() as u64) as usize
    }

    /// The page's word (0: nothing known of it).
    fn word(&self, page: u64) -> u64 {
        let Some(shard) = self.shard(page) else {
            return 0;
        };
        match &*shard.lock() {
            Shard::Sparse(m) => m.get(&page).copied().unwrap_or(0),
            Shard::Dense(d) => d[self.index(page)],
        }
    }

    /// Sets the page's word to `f(word)`, turning its shard dense first when its map would
    /// grow past the array's bytes.
    fn update(&self, page: u64, f: impl FnOnce(u64) -> u64) {
        let Some(shard) = self.shard(page) else {
            return;
        };
        let mut shard = shard.lock();
        if let Shard::Sparse(m) = &mut *shard {
            // An existing word is changed in place: `insert` would make room for one more
            // first, and grow a full map for a page it has.
            if let Some(w) = m.get_mut(&page) {
                *w = f(*w);
                return;
            }
            let new = f(0);
            let array = self.shard_pages as usize * 8;
            if m.len() < m.capacity() || table_bytes(buckets_for(m.len() + 1)) <= array {
                m.insert(page, new);
                return;
            }
            let mut d = vec![0u64; self.shard_pages as usize].into_boxed_slice();
            for (p, w) in m.drain() {
                d[self.index(p)] = w;
            }
            d[self.index(page)] = new;
            *shard = Shard::Dense(d);
            return;
        }
        if let Shard::Dense(d) = &mut *shard {
            let w = &mut d[self.index(page)];
            *w = f(*w);
        }
    }

    /// Records `state` as the page's snapshot state unless it has one.
    pub fn capture(&self, page: u64, state: ExpectedState) {
        let (gen, old) = match state {
            ExpectedState::NeverWritten => (0, 0),
            ExpectedState::Written { generation } => (generation, 0),
            ExpectedState::InFlight { old, new } => (new | IN_FLIGHT, old),
            ExpectedState::Unknown { old, issued } => (issued | UNKNOWN, old),
        };
        if self.word(page) & CAPTURED != 0 {
            return;
        }
        if gen & (IN_FLIGHT | UNKNOWN) != 0 {
            // Before the flags that send a reader there are stored.
            self.olds.lock().insert(page, old);
        }
        self.update(page, |w| match w & CAPTURED {
            0 => gen | CAPTURED | (w & (COPIED | LOST)),
            _ => w,
        });
    }

    /// The page's snapshot state, once captured.
    pub fn state(&self, page: u64) -> Option<ExpectedState> {
        let a = self.word(page);
        if a & CAPTURED == 0 {
            return None;
        }
        let gen = a & GEN_MASK;
        let old = match a & (IN_FLIGHT | UNKNOWN) {
            0 => 0,
            _ => self.olds.lock().get(&page).copied().unwrap_or(0),
        };
        Some(if a & UNKNOWN != 0 {
            ExpectedState::Unknown { old, issued: gen }
        } else if a & IN_FLIGHT != 0 {
            ExpectedState::InFlight { old, new: gen }
        } else if gen == 0 {
            ExpectedState::NeverWritten
        } else {
            ExpectedState::Written { generation: gen }
        })
    }

    /// True when the page's word has `flag` ([`COPIED`] or [`LOST`]).
    pub(super) fn has(&self, page: u64, flag: u64) -> bool {
        self.word(page) & flag != 0
    }

    /// Adds `flag` to the page's word.
    pub(super) fn mark(&self, page: u64, flag: u64) {
        self.update(page, |w| w | flag);
    }

    /// Shards that hold an array.
    pub fn dense_shards(&self) -> usize {
        self.shards
            .iter()
            .filter(|s| matches!(&*s.lock(), Shard::Dense(_)))
            .count()
    }

    /// Bytes these states hold: the shards, their maps' tables or arrays, the old generations.
    pub fn memory_bytes(&self) -> usize {
        let shards: usize = self
            .shards
            .iter()
            .map(|s| match &*s.lock() {
                Shard::Sparse(m) => table_bytes(buckets_of(m.capacity())),
                Shard::Dense(d) => std::mem::size_of_val(&**d),
            })
            .sum();
        let olds = table_bytes(buckets_of(self.olds.lock().capacity()));
        std::mem::size_of_val(&*self.shards) + shards + olds
    }
}

/// Shards for a file of `pages` pages: one per `SHARD_MIN_PAGES` (1,024), within 1..=`MAX_SHARDS` (4,096).
pub fn shards_for(pages: u64) -> u64 {
    (pages / SHARD_MIN_PAGES).clamp(1, MAX_SHARDS)
}
