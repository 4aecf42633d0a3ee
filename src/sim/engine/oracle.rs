//! The expected-state oracle of one file: what every page must read back as, and the page
//! latches that keep a verifying read from racing a write to the same page.
//!
//! Per page the oracle keeps 16 bytes: two `AtomicU64`s, the generation of the last completed
//! write (`done`) and the highest generation issued (`issued`, whose top two bits carry the
//! in-flight and unknown flags). The state changes only when an I/O is issued or completes:
//! [`Oracle::begin_write`] hands out the next generation and marks the page in flight,
//! [`Oracle::complete_write`] records the outcome. A write that failed leaves the page
//! *unknown* (any self-consistent content between the last good and the failed generation is
//! accepted), never *corrupt*, unlike fio before its PR #2086.
//!
//! Latches are striped: page `p` uses stripe `p % stripes`. A data file gets one stripe per page
//! of its largest size ([`stripes_for`]), up to [`MAX_STRIPES`] (8 MB of latches), so two
//! requests wait for each other only when they share a page: with fewer stripes than the pages
//! the asynchronous actors keep in flight, the stripes themselves were the depth limit (1,024
//! stripes held the initial update's 64-page writes to 16 in flight, whatever MaxOutstandingIO
//! asked). Reads take a stripe shared, writes exclusive. A thread that waits for a latch holds no
//! other: a synchronous actor holds at most one latch set at a time (ranges locked in ascending
//! stripe order), and an asynchronous one, which holds a set per request in flight, only
//! *tries* further sets and collects its own completions (releasing its sets) before it waits.
//! Its requests complete without anyone's help, which keeps latching deadlock-free.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::page::{Expect, ExpectedState};

/// Bytes of oracle state per page (the latches are shared stripes and not counted).
pub const BYTES_PER_PAGE: usize = 16;
/// Fewest latch stripes a file gets (and the number when none is given).
pub const DEFAULT_STRIPES: usize = 1024;
/// Most latch stripes a file gets: one per page of an 8 GiB file, 8 MB of latches.
pub const MAX_STRIPES: usize = 1 << 20;

/// Latch stripes for a file of at most `pages` pages: one per page, within
/// [`DEFAULT_STRIPES`]..=[`MAX_STRIPES`].
pub fn stripes_for(pages: u64) -> usize {
    usize::try_from(pages)
        .unwrap_or(MAX_STRIPES)
        .clamp(DEFAULT_STRIPES, MAX_STRIPES)
}

const IN_FLIGHT: u64 = 1 << 63;
const UNKNOWN: u64 = 1 << 62;
const GEN_MASK: u64 = UNKNOWN - 1;
/// In `done`: the page's completed generation changed since a sync point last took it.
const CHANGED: u64 = 1 << 63;
/// In `done`: taken by a sync point's first pass (before its fdatasync), not yet journaled.
const SNAPPED: u64 = 1 << 62;

/// One page's expected state: 16 bytes.
#[derive(Debug, Default)]
struct Slot {
    /// Generation of the last write that completed successfully (0: none), with the CHANGED
    /// and SNAPPED marks of the sync points in the top bits.
    done: AtomicU64,
    /// Highest generation issued, with the IN_FLIGHT and UNKNOWN flags in the top bits.
    issued: AtomicU64,
}

impl Slot {
    fn state(&self) -> ExpectedState {
        let done = self.done.load(Ordering::Acquire) & GEN_MASK;
        let issued = self.issued.load(Ordering::Acquire);
        let gen = issued & GEN_MASK;
        if issued & UNKNOWN != 0 {
            ExpectedState::Unknown {
                old: done,
                issued: gen,
            }
        } else if issued & IN_FLIGHT != 0 {
            ExpectedState::InFlight {
                old: done,
                new: gen,
            }
        } else if gen == 0 {
            ExpectedState::NeverWritten
        } else {
            ExpectedState::Written { generation: gen }
        }
    }
}

/// Expected state and latches for the pages of one file.
#[derive(Debug)]
pub struct Oracle {
    run_id: u64,
    file_id: u32,
    slots: RwLock<Vec<Slot>>,
    latches: Box<[RwLock<()>]>,
    /// Every page's next generation is above this: what the file's pages may have held before
    /// a restart (the header's ceiling) or before a shrink cut them off.
    floor: AtomicU64,
    /// The highest generation issued to any page of the file, or the floor if higher.
    high: AtomicU64,
    /// (page, generation) a sync point had marked and a newer completion replaced before the
    /// sync point journaled it ([`Oracle::take_snapped`] takes them).
    overtaken: parking_lot::Mutex<Vec<(u64, u64)>>,
}

/// Shared latches over one or more pages (held while a read is verified).
#[derive(Debug)]
pub struct ReadLatch<'a> {
    _guards: Vec<RwLockReadGuard<'a, ()>>,
}

/// Exclusive latches over one or more pages (held from `begin_write` to `complete_write`).
#[derive(Debug)]
pub struct WriteLatch<'a> {
    _guards: Vec<RwLockWriteGuard<'a, ()>>,
}

impl Oracle {
    /// An oracle for a file of `pages` pages, all never written, with the default stripes.
    pub fn new(run_id: u64, file_id: u32, pages: u64) -> Oracle {
        Oracle::with_stripes(run_id, file_id, pages, DEFAULT_STRIPES)
    }

    /// Same as [`Oracle::new`] with `stripes` latch stripes (at least 1).
    pub fn with_stripes(run_id: u64, file_id: u32, pages: u64, stripes: usize) -> Oracle {
        let mut slots = Vec::new();
        slots.resize_with(to_index(pages), Slot::default);
        Oracle {
            run_id,
            file_id,
            slots: RwLock::new(slots),
            latches: (0..stripes.max(1)).map(|_| RwLock::new(())).collect(),
            floor: AtomicU64::new(0),
            high: AtomicU64::new(0),
            overtaken: parking_lot::Mutex::new(Vec::new()),
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

    /// Memory used by the per-page state, in bytes (`pages * BYTES_PER_PAGE`).
    pub fn memory_bytes(&self) -> usize {
        self.slots.read().len() * std::mem::size_of::<Slot>()
    }

    /// Grows (new pages never written) or shrinks (pages beyond the end forgotten) the file.
    /// A shrink raises the floor to the highest generation issued, so a page cut off and grown
    /// again never gets a generation it held before the cut.
    pub fn resize(&self, pages: u64) {
        let mut slots = self.slots.write();
        if to_index(pages) < slots.len() {
            self.floor
                .fetch_max(self.high.load(Ordering::Acquire), Ordering::AcqRel);
            // A generation kept aside for a sync point (one whose fdatasync failed, then
            // overtaken) of a page cut off is owed no more: journaled after the cut, it would
            // hold a page grown again later to what it held before the cut.
            self.overtaken.lock().retain(|&(p, _)| p < pages);
        }
        slots.resize_with(to_index(pages), Slot::default);
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
        slots
            .get(to_index(page))
            .map_or(ExpectedState::NeverWritten, Slot::state)
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
        let slot = slot_of(&slots, page);
        let issued = slot.issued.load(Ordering::Acquire);
        let gen = (issued & GEN_MASK).max(self.floor.load(Ordering::Acquire)) + 1;
        assert!(gen < UNKNOWN, "generation overflow on page {page}");
        self.high.fetch_max(gen, Ordering::AcqRel);
        slot.issued
            .store(gen | IN_FLIGHT | (issued & UNKNOWN), Ordering::Release);
        gen
    }

    /// Records the completion of the write of generation `gen` to `page`: on success the
    /// page must now read as `gen`; on failure its content is unknown until the next write.
    pub fn complete_write(&self, page: u64, gen: u64, ok: bool) {
        let slots = self.slots.read();
        let slot = slot_of(&slots, page);
        let issued = slot.issued.load(Ordering::Acquire) & GEN_MASK;
        assert_eq!(
            issued, gen,
            "completion of a write never issued on page {page}"
        );
        if ok {
            self.store_done(slot, page, gen);
            slot.issued.store(gen, Ordering::Release);
        } else {
            slot.issued.store(gen | UNKNOWN, Ordering::Release);
        }
    }

    /// Sets a page's state directly (journal replay, crash recovery, tests).
    pub fn set(&self, page: u64, state: ExpectedState) {
        let slots = self.slots.read();
        let slot = slot_of(&slots, page);
        let (done, issued) = match state {
            ExpectedState::NeverWritten => (0, 0),
            ExpectedState::Written { generation } => (generation, generation),
            ExpectedState::InFlight { old, new } => (old, new | IN_FLIGHT),
            ExpectedState::Unknown { old, issued } => (old, issued | UNKNOWN),
        };
        self.store_done(slot, page, done);
        slot.issued.store(issued, Ordering::Release);
    }

    /// Stores a page's new completed generation, marked CHANGED for the next sync point. A
    /// generation a sync point had marked (SNAPPED) and not yet journaled is kept aside for
    /// it: that one completed before the sync point's fdatasync, the new one perhaps not.
    fn store_done(&self, slot: &Slot, page: u64, gen: u64) {
        let changed = if gen > 0 { CHANGED } else { 0 };
        let before = slot.done.swap(gen | changed, Ordering::AcqRel);
        if before & SNAPPED != 0 {
            self.overtaken.lock().push((page, before & GEN_MASK));
        }
    }

    /// A sync point's first pass, before its fdatasync: marks as taken every page below
    /// `pages` whose completed generation changed since a sync point last took it. Each
    /// generation so marked completed before this returns, so the fdatasync that follows makes
    /// it durable. No memory per page: the marks live in the pages' slots.
    pub fn snap_changed(&self, pages: u64) {
        let slots = self.slots.read();
        for slot in slots.iter().take(to_index(pages)) {
            if slot.done.load(Ordering::Relaxed) & CHANGED == 0 {
                continue;
            }
            // A completion between the load and here stored a new CHANGED generation, which
            // completed before this returns too: mark whatever is there.
            let _ = slot
                .done
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                    (d & CHANGED != 0).then_some((d & !CHANGED) | SNAPPED)
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
        for (page, slot) in slots.iter().enumerate().take(to_index(pages)) {
            if slot.done.load(Ordering::Relaxed) & SNAPPED == 0 {
                continue;
            }
            let before = slot.done.fetch_and(!SNAPPED, Ordering::AcqRel);
            let gen = before & GEN_MASK;
            if before & SNAPPED != 0 && gen > 0 {
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

    /// Takes page `page` shared (for a verifying read).
    pub fn read_latch(&self, page: u64) -> ReadLatch<'_> {
        self.read_latch_range(page, 1)
    }

    /// Takes page `page` exclusive (for a write).
    pub fn write_latch(&self, page: u64) -> WriteLatch<'_> {
        self.write_latch_range(page, 1)
    }

    /// Takes `count` consecutive pages shared, in stripe order.
    pub fn read_latch_range(&self, first: u64, count: u64) -> ReadLatch<'_> {
        let guards = self.stripes(first, count).map(|s| self.latches[s].read());
        ReadLatch {
            _guards: guards.collect(),
        }
    }

    /// Takes `count` consecutive pages exclusive, in stripe order.
    pub fn write_latch_range(&self, first: u64, count: u64) -> WriteLatch<'_> {
        let guards = self.stripes(first, count).map(|s| self.latches[s].write());
        WriteLatch {
            _guards: guards.collect(),
        }
    }

    /// Takes `count` consecutive pages shared if no stripe is taken exclusive (or wanted by
    /// a waiting writer); `None` without waiting otherwise. An asynchronous poster, which holds
    /// several latch sets at once, takes them this way and waits only once it holds none.
    pub fn try_read_latch_range(&self, first: u64, count: u64) -> Option<ReadLatch<'_>> {
        let guards: Option<Vec<_>> = self
            .stripes(first, count)
            .map(|s| self.latches[s].try_read())
            .collect();
        guards.map(|g| ReadLatch { _guards: g })
    }

    /// Takes `count` consecutive pages exclusive if no stripe is taken; `None` without
    /// waiting otherwise (see [`Oracle::try_read_latch_range`]).
    pub fn try_write_latch_range(&self, first: u64, count: u64) -> Option<WriteLatch<'_>> {
        let guards: Option<Vec<_>> = self
            .stripes(first, count)
            .map(|s| self.latches[s].try_write())
            .collect();
        guards.map(|g| WriteLatch { _guards: g })
    }

    /// The distinct stripes of a page range, ascending.
    fn stripes(&self, first: u64, count: u64) -> impl Iterator<Item = usize> {
        let n = self.latches.len() as u64;
        let mut v: Vec<usize> = if count >= n {
            (0..self.latches.len()).collect()
        } else {
            (first..first + count).map(|p| (p % n) as usize).collect()
        };
        v.sort_unstable();
        v.dedup();
        v.into_iter()
    }
}

fn to_index(page: u64) -> usize {
    usize::try_from(page).unwrap_or(usize::MAX)
}

fn slot_of(slots: &[Slot], page: u64) -> &Slot {
    let len = slots.len();
    slots
        .get(to_index(page))
        .unwrap_or_else(|| panic!("page {page} is beyond the oracle's {len} pages"))
}

#[cfg(test)]
mod tests;
