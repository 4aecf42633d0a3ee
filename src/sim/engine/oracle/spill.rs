//! A page's state from its word or the spill map, and changes to it: by compare-and-swap on
//! the word, or under the map's lock when the state is spilled or spills (see `word`).

use std::sync::atomic::{AtomicU64, Ordering};

use super::word::{Wide, SPILLED};
use super::{slot_of, Oracle};

impl Oracle {
    /// Page `page`'s state, from its word or the spill map.
    pub(super) fn wide(&self, slots: &[AtomicU64], page: u64) -> Wide {
        let word = slot_of(slots, page);
        loop {
            let w = word.load(Ordering::Acquire);
            if w & SPILLED == 0 {
                return Wide::unpack(w);
            }
            // Under the map's lock a word neither spills nor comes back.
            let spill = self.spill.lock();
            if word.load(Ordering::Acquire) & SPILLED != 0 {
                let Some(&wide) = spill.get(&page) else {
                    unreachable!("page {page} is spilled and not in the spill map")
                };
                return wide;
            }
        }
    }

    /// Changes page `page`'s state with `f` (which may run more than once, on the newest
    /// state, and must have no other effect): by compare-and-swap on its word, or under the
    /// spill map's lock when the state is spilled or spills. Returns what `f` returned on the
    /// state stored.
    pub(super) fn update<R>(
        &self,
        slots: &[AtomicU64],
        page: u64,
        mut f: impl FnMut(&mut Wide) -> R,
    ) -> R {
        let word = slot_of(slots, page);
        let mut cur = word.load(Ordering::Acquire);
        loop {
            if cur & SPILLED != 0 {
                let mut spill = self.spill.lock();
                cur = word.load(Ordering::Acquire);
                if cur & SPILLED == 0 {
                    continue; // Brought back meanwhile.
                }
                let Some(wide) = spill.get_mut(&page) else {
                    unreachable!("page {page} is spilled and not in the spill map")
                };
                let r = f(wide);
                if let Some(packed) = wide.pack() {
                    spill.remove(&page);
                    word.store(packed, Ordering::Release);
                }
                return r;
            }
            let mut wide = Wide::unpack(cur);
            let r = f(&mut wide);
            let swapped = match wide.pack() {
                Some(new) => {
                    word.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire)
                }
                None => {
                    let mut spill = self.spill.lock();
                    let swapped =
                        word.compare_exchange(cur, SPILLED, Ordering::AcqRel, Ordering::Acquire);
                    if swapped.is_ok() {
                        spill.insert(page, wide);
                    }
                    swapped
                }
            };
            match swapped {
                Ok(_) => return r,
                Err(now) => cur = now,
            }
        }
    }
}
