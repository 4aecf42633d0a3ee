//! The expected-state oracle of one file: what every page must read back as, what the
//! journal holds durable of it, and the page latches that keep a verifying read from racing a
//! write to the same page.
//!
//! Per page the oracle keeps one word, 8 bytes (`oracle::word`): the generation of the last
//! completed write, the highest issued (with the in-flight and unknown flags), the highest the journal
//! was told is durable, and the sync points' marks. The state changes only when an I/O is
//! issued or completes: [`Oracle::begin_write`] hands out the next generation and marks the
//! page in flight, [`Oracle::complete_write`] records the outcome. A write that failed leaves
//! the page *unknown* (any self-consistent content between the last good and the failed
//! generation is accepted), never *corrupt*, unlike fio before its PR #2086. The journal
//! thread keeps its durable generations here ([`Oracle::raise_durable`]) rather than in a table
//! of its own, so a run's per-page state is this word and nothing else; a state that does not
//! fit its word waits in a spill map until it does (see `oracle::word`).
//!
//! Latches are striped: page `p` uses stripe `p % stripes`. A data file gets one stripe per page
//! of its largest size ([`stripes_for`]), up to [`MAX_STRIPES`] (512 KB of latches), so two
//! requests wait for each other only when they share a page or, in files over 512 MB, a stripe
//! (one chance in 65,536 for two random pages): with fewer stripes than the pages the
//! asynchronous actors keep in flight, the stripes themselves were the depth limit (1,024
//! stripes held the initial update's 64-page writes to 16 in flight, whatever MaxOutstandingIO
//! asked). Reads take a stripe shared, writes exclusive. A thread that waits for a latch holds no
//! other: a synchronous actor holds at most one latch set at a time (ranges locked in ascending
//! stripe order), and an asynchronous one, which holds a set per request in flight, only
//! *tries* further sets and collects its own completions (releasing its sets) before it waits.
//! Its requests complete without anyone's help, which keeps latching deadlock-free.

mod durable;
mod latch;
mod spill;
mod word;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::{Mutex, RwLock};

use crate::page::{Expect, ExpectedState};
pub use latch::{ReadLatch, WriteLatch};
use word::{Wide, CHANGED, IN_FLIGHT, SNAPPED, SPILLED, UNKNOWN};

/// Bytes of oracle state per page (the latches are shared stripes and not counted).
pub const BYTES_PER_PAGE: usize = 8;
/// Fewest latch stripes a file gets (and the number when none is given).
pub const DEFAULT_STRIPES: usize = 1024;
/// Most latch stripes a file gets: one per page of a 512 MB file, 512 KB of latches.
pub const MAX_STRIPES: usize = 1 << 16;

/// Latch stripes for a file of at most `pages` pages: one per page, within
/// [`DEFAULT_STRIPES`]..=[`MAX_STRIPES`].
pub fn stripes_for(pages: u64) -> usize {
    usize::try_from(pages)
        .unwrap_or(MAX_STRIPES)
        .clamp(DEFAULT_STRIPES, MAX_STRIPES)
}

/// Highest generation a write may carry (the page stamp's limit).
const MAX_GENERATION: u64 = (1 << 62) - 1;

impl Wide {
    fn state(&self) -> ExpectedState {
        if self.flags & UNKNOWN != 0 {
            ExpectedState::Unknown {
                old: self.done,
                issued: self.issued,
            }
        } else if self.flags & IN_FLIGHT != 0 {
            ExpectedState::InFlight {
                old: self.done,
                new: self.issued,
            }
        } else if self.issued == 0 {
            ExpectedState::NeverWritten
        } else {
            ExpectedState::Written {
                generation: self.issued,
            }
        }
    }

    /// Stores a new completed generation, marked CHANGED for the next sync point; returns the
    /// generation a sync point had marked (SNAPPED) and not yet journaled, which the caller
    /// keeps aside for it: that one completed before the sync point's fdatasync, the new one
    /// perhaps not.
    fn store_done(&mut self, gen: u64) -> Option<u64> {
        let snapped = (self.flags & SNAPPED != 0).then_some(self.done);
        self.done = gen;
        self.flags &= !(SNAPPED | CHANGED);
        if gen > 0 {
            self.flags |= CHANGED;
        }
        snapped
    }
}

/// Expected state and latches for the pages of one file.
#[derive(Debug)]
pub struct Oracle {
    run_id: u64,
    file_id: u32,
    /// One word per page (see the module doc).
    slots: RwLock<Vec<AtomicU64>>,
    /// The states of the pages whose word says [`SPILLED`]; changed only under this lock.
    spill: Mutex<HashMap<u64, Wide>>,
    /// Durable generations the journal holds for pages beyond the end (a restarted run's
    /// journal names pages a file no longer has, until a resize it journals says otherwise).
    far: Mutex<BTreeMap<u64, u64>>,
    latches: Box<[RwLock<()>]>,
    /// Every page's next generation is above this: what the file's pages may have held before
    /// a restart (the header's ceiling) or before a shrink cut them off.
    floor: AtomicU64,
    /// The highest generation issued to any page of the file, or the floor if higher.
    high: AtomicU64,
    /// (page, generation) a sync point had marked and a newer completion replaced before the
    /// sync point journaled it ([`Oracle::take_snapped`] takes them).
    overtaken: Mutex<Vec<(u64, u64)>>,
}

impl Oracle {
    /// An oracle for a file of `pages` pages, all never written, with the default stripes.
    pub fn new(run_id: u64, file_id: u32, pages: u64) -> Oracle {
        Oracle::with_stripes(run_id, file_id, pages, DEFAULT_STRIPES)
    }

    /// Same as [`Oracle::new`] with `stripes` latch stripes (at least 1).
    pub fn with_stripes(run_id: u64, file_id: u32, pages: u64, stripes: usize) -> Oracle {
        let mut slots = Vec::new();
        slots.resize_with(to_index(pages), AtomicU64::default);
        Oracle {
            run_id,
            file_id,
            slots: RwLock::new(slots),
            spill: Mutex::new(HashMap::new()),
            far: Mutex::new(BTreeMap::new()),
            latches: (0..stripes.max(1)).map(|_| RwLock::new(())).collect(),
            floor: AtomicU64::new(0),
            high: AtomicU64::new(0),
            overtaken: Mutex::new(Vec::new()),
        }
    }

    /// Run id of the file set.
    pub fn run_id(&self) -> u64 {
        self.run_id
    }

    /// File id within the set.
    pub fn file_id(&self) -> u32 {
        self.file_id
    }

    /// Number of pages tracked.
    pub fn pages(&self) -> u64 {
        self.slots.read().len() as u64
    }

    /// Latch stripes (see the module doc).
    pub fn stripe_count(&self) -> usize {
        self.latches.len()
    }

    /// Gives the oracle enough latch stripes for a file of up to `max_pages` pages
    /// ([`stripes_for`]); before the oracle is shared, as the file is set up.
    pub fn with_latches_for(mut self, max_pages: u64) -> Oracle {
        let stripes = stripes_for(max_pages);
        if stripes != self.latches.len() {
            self.latches = (0..stripes).map(|_| RwLock::new(())).collect();
        }
        self
    }

    /// Memory used by the per-page state, in bytes: a word per page and the spilled states.
    pub fn memory_bytes(&self) -> usize {
        let spilled = self.spill.lock().len();
        let spilled = spilled + self.far.lock().len();
        self.slots.read().len() * BYTES_PER_PAGE + spilled * std::mem::size_of::<(u64, Wide)>()
    }

    /// Pages whose state is in the spill map (not in their word).
    pub fn spilled(&self) -> usize {
        self.spill.lock().len()
    }

    /// Grows (new pages never written) or shrinks (pages beyond the end forgotten) the file.
    /// A shrink raises the floor to the highest generation issued, so a page cut off and grown
    /// again never gets a generation it held before the cut. The durable generations of pages
    /// cut off stay, beyond the end, until the journal truncates them (a shrink the run
    /// journals truncated them first); pages grown take them back.
    pub fn resize(&self, pages: u64) {
        let mut slots = self.slots.write();
        let old = slots.len();
        let new = to_index(pages);
        if new < old {
            self.floor
                .fetch_max(self.high.load(Ordering::Acquire), Ordering::AcqRel);
            // A generation kept aside for a sync point (one whose fdatasync failed, then
            // overtaken) of a page cut off is owed no more: journaled after the cut, it would
            // hold a page grown again later to what it held before the cut.
            self.overtaken.lock().retain(|&(p, _)| p < pages);
            let cut: Vec<(u64, u64)> = (new..old)
                .map(|p| (p as u64, self.wide(&slots, p as u64).durable))
                .filter(|&(_, d)| d > 0)
                .collect();
            self.far.lock().extend(cut);
            self.spill.lock().retain(|&p, _| p < pages);
            slots.truncate(new);
        } else if new > old {
            slots.resize_with(new, AtomicU64::default);
            let back: Vec<(u64, u64)> = {
                let mut far = self.far.lock();
                let rest = far.split_off(&pages);
                std::mem::replace(&mut *far, rest).into_iter().collect()
            };
            for (page, durable) in back {
                self.update(&slots, page, |w| w.durable = durable);
            }
        }
    }

    /// Makes every page's next generation greater than `floor` (a restart over existing
    /// pages: `floor` is the most any page may have been issued before).
    pub fn raise_floor(&self, floor: u64) {
        self.floor.fetch_max(floor, Ordering::AcqRel);
        self.high.fetch_max(floor, Ordering::AcqRel);
    }

    /// Every page's next generation is above this.
    pub fn floor(&self) -> u64 {
        self.floor.load(Ordering::Acquire)
    }

    /// The highest generation issued to any page (or the floor, if higher).
    pub fn high(&self) -> u64 {
        self.high.load(Ordering::Acquire)
    }

    /// What page `page` must read as. Pages beyond the end read as never written.
    pub fn expected_state(&self, page: u64) -> ExpectedState {
        let slots = self.slots.read();
        if page >= slots.len() as u64 {
            return ExpectedState::NeverWritten;
        }
        self.wide(&slots, page).state()
    }

    /// The full expectation for the verifier.
    pub fn expect_page(&self, page: u64) -> Expect {
        Expect::known(self.run_id, self.file_id, page, self.expected_state(page))
    }

    /// Marks a write of `page` as issued and returns the generation to stamp: one more than
    /// any generation issued before and than the floor, so even after a failed write, a
    /// restart or a shrink the next one is newer than anything the page ever held.
    /// The caller holds the page's write latch.
    pub fn begin_write(&self, page: u64) -> u64 {
        let slots = self.slots.read();
        let gen = self.update(&slots, page, |w| {
            let gen = w.issued.max(self.floor.load(Ordering::Acquire)) + 1;
            assert!(gen <= MAX_GENERATION, "generation overflow on page {page}");
            w.issued = gen;
            w.flags |= IN_FLIGHT;
            gen
        });
        self.high.fetch_max(gen, Ordering::AcqRel);
        gen
    }

    /// Records the completion of the write of generation `gen` to `page`: on success the
    /// page must now read as `gen`; on failure its content is unknown until the next write.
    pub fn complete_write(&self, page: u64, gen: u64, ok: bool) {
        let slots = self.slots.read();
        let overtaken = self.update(&slots, page, |w| {
            assert_eq!(
                w.issued, gen,
                "completion of a write never issued on page {page}"
            );
            w.flags &= !IN_FLIGHT;
            if ok {
                w.flags &= !UNKNOWN;
                w.store_done(gen)
            } else {
                w.flags |= UNKNOWN;
                None
            }
        });
        self.keep_aside(page, overtaken);
    }

    /// Sets a page's state directly (journal replay, crash recovery, tests); its durable
    /// generation stays.
    pub fn set(&self, page: u64, state: ExpectedState) {
        let slots = self.slots.read();
        let (done, issued, flags) = match state {
            ExpectedState::NeverWritten => (0, 0, 0),
            ExpectedState::Written { generation } => (generation, generation, 0),
            ExpectedState::InFlight { old, new } => (old, new, IN_FLIGHT),
            ExpectedState::Unknown { old, issued } => (old, issued, UNKNOWN),
        };
        let overtaken = self.update(&slots, page, |w| {
            let snapped = w.store_done(done);
            w.issued = issued;
            w.flags = (w.flags & !(IN_FLIGHT | UNKNOWN)) | flags;
            snapped
        });
        self.keep_aside(page, overtaken);
    }

    /// A generation a sync point had marked, replaced before it was journaled.
    fn keep_aside(&self, page: u64, snapped: Option<u64>) {
        if let Some(gen) = snapped {
            self.overtaken.lock().push((page, gen));
        }
    }

    /// A sync point's first pass, before its fdatasync: marks as taken every page below
    /// `pages` whose completed generation changed since a sync point last took it. Each
    /// generation so marked completed before this returns, so the fdatasync that follows makes
    /// it durable. No memory per page: the marks live in the pages' words.
    pub fn snap_changed(&self, pages: u64) {
        let slots = self.slots.read();
        for page in 0..to_index(pages).min(slots.len()) {
            let word = slots[page].load(Ordering::Relaxed);
            if word & (CHANGED | SPILLED) == 0 {
                continue;
            }
            // A completion between the load and here stored a new CHANGED generation, which
            // completed before this returns too: mark whatever is there.
            self.update(&slots, page as u64, |w| {
                if w.flags & CHANGED != 0 {
                    w.flags = (w.flags & !CHANGED) | SNAPPED;
                }
            });
        }
    }

    /// A sync point's last pass, after its fdatasync: hands `emit` (page, generation) of every
    /// page below `pages` still marked by [`Oracle::snap_changed`], in page order, and clears
    /// the mark; then the marked generations a newer completion overtook (kept aside by it:
    /// the new one may not be covered by the fdatasync, and the next sync point takes it). A
    /// mark left by a sync point whose fdatasync failed is taken here too: its generation
    /// completed before this sync point's fdatasync.
    pub fn take_snapped(&self, pages: u64, mut emit: impl FnMut(u64, u64)) {
        let slots = self.slots.read();
        for page in 0..to_index(pages).min(slots.len()) {
            let word = slots[page].load(Ordering::Relaxed);
            if word & (SNAPPED | SPILLED) == 0 {
                continue;
            }
            let taken = self.update(&slots, page as u64, |w| {
                let gen = (w.flags & SNAPPED != 0).then_some(w.done);
                w.flags &= !SNAPPED;
                gen
            });
            if let Some(gen) = taken.filter(|&g| g > 0) {
                emit(page as u64, gen);
            }
        }
        // The marked generations a newer completion overtook meanwhile (a few pages: those
        // written again during the fdatasync). One overtaken after this is taken by the next
        // sync point, whose fdatasync comes later still.
        let overtaken = std::mem::take(&mut *self.overtaken.lock());
        for (page, gen) in overtaken.into_iter().filter(|&(_, g)| g > 0) {
            emit(page, gen);
        }
    }
}

fn to_index(page: u64) -> usize {
    usize::try_from(page).unwrap_or(usize::MAX)
}

fn slot_of(slots: &[AtomicU64], page: u64) -> &AtomicU64 {
    let len = slots.len();
    slots
        .get(to_index(page))
        .unwrap_or_else(|| panic!("page {page} is beyond the oracle's {len} pages"))
}

#[cfg(test)]
mod tests;
