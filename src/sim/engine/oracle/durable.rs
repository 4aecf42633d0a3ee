//! The journal's durable generations, kept in the pages' words (the journal thread's side of
//! the oracle, see `journal::service::live`), and beyond the end in a map.

use super::{to_index, Oracle};

impl Oracle {
    /// The journal holds `page` durable at `gen` at least (the journal thread, as it appends
    /// a Durable record, and a restarted run's carried-over journal).
    pub fn raise_durable(&self, page: u64, gen: u64) {
        if gen == 0 {
            return;
        }
        let slots = self.slots.read();
        if page < slots.len() as u64 {
            self.update(&slots, page, |w| w.durable = w.durable.max(gen));
        } else {
            let mut far = self.far.lock();
            let d = far.entry(page).or_insert(0);
            *d = (*d).max(gen);
        }
    }

    /// The generation the journal holds `page` durable at (0: none).
    pub fn durable(&self, page: u64) -> u64 {
        let slots = self.slots.read();
        if page < slots.len() as u64 {
            self.wide(&slots, page).durable
        } else {
            self.far.lock().get(&page).copied().unwrap_or(0)
        }
    }

    /// The journal forgets the durable generations of every page from `pages` on (it
    /// journaled a shrink to `pages`, which the file's resize follows).
    pub fn truncate_durable(&self, pages: u64) {
        let slots = self.slots.read();
        for page in to_index(pages)..slots.len() {
            self.update(&slots, page as u64, |w| w.durable = 0);
        }
        let mut far = self.far.lock();
        let _ = far.split_off(&pages);
    }

    /// Hands `emit` (page, durable generation) of every page the journal holds one for, in
    /// page order; upper bound: [`Oracle::durable_bound`]. The pages are read 65,536 at a
    /// time, each under the table's lock taken again: a compaction of a terabyte's journal
    /// takes seconds, and a resize waiting for the lock would hold every reader behind it.
    pub fn each_durable(&self, mut emit: impl FnMut(u64, u64)) {
        const CHUNK: u64 = 65_536;
        let mut page = 0;
        loop {
            let slots = self.slots.read();
            let end = (page + CHUNK).min(slots.len() as u64);
            if page >= end {
                break;
            }
            for p in page..end {
                let durable = self.wide(&slots, p).durable;
                if durable > 0 {
                    emit(p, durable);
                }
            }
            page = end;
        }
        let far: Vec<(u64, u64)> = self.far.lock().iter().map(|(&p, &g)| (p, g)).collect();
        for (page, gen) in far {
            emit(page, gen);
        }
    }

    /// At least as many pages as [`Oracle::each_durable`] hands out, without counting them.
    pub fn durable_bound(&self) -> u64 {
        self.pages() + self.far.lock().len() as u64
    }
}
