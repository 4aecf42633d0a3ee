//! The durable generation of each page of one file, as a replay builds it.
//!
//! A run's pages are dense (the initial update writes every page), so a vector indexed by page
//! is the table that costs least. But page numbers come from the journal, which verify and
//! `run --resume` read from disk: one record naming page 2^28 must not make them allocate
//! 2 GiB (nor page 2^40 abort them). So the vector only grows while it stays at least half
//! full; pages beyond it are kept in a map. Memory then follows how many pages the journal
//! names — at least 16 bytes of input each — never how large their numbers are.

use std::collections::BTreeMap;

/// Pages the vector may reach beyond twice the pages it holds (512 KiB of table): small files
/// stay in the vector even when written sparsely.
const SLACK: u64 = 65536;

/// Durable generation per page; 0 for a page never journaled.
#[derive(Debug, Clone, Default)]
pub struct PageGens {
    dense: Vec<u64>,
    far: BTreeMap<u64, u64>,
    /// Pages with a non-zero generation in `dense` and `far`.
    count: u64,
}

impl PageGens {
    /// The generation journaled for `page` (0: none).
    pub fn get(&self, page: u64) -> u64 {
        match usize::try_from(page).ok().and_then(|i| self.dense.get(i)) {
            Some(&g) => g,
            None => self.far.get(&page).copied().unwrap_or(0),
        }
    }

    /// Keeps the higher of `generation` and what `page` holds.
    pub fn raise(&mut self, page: u64, generation: u64) {
        if generation == 0 {
            return;
        }
        if page >= self.dense.len() as u64 && page < 2 * (self.count + 1) + SLACK {
            self.grow_to(page + 1);
        }
        let slot = match usize::try_from(page).ok().filter(|&i| i < self.dense.len()) {
            Some(i) => &mut self.dense[i],
            None => self.far.entry(page).or_insert(0),
        };
        if *slot == 0 {
            self.count += 1;
        }
        *slot = (*slot).max(generation);
        // Pages written from the top down: the map moves into the table once it would be
        // half full.
        if let Some((&last, _)) = self.far.last_key_value() {
            if last < 2 * self.count + SLACK {
                self.grow_to(last + 1);
            }
        }
    }

    /// Forgets every page from `pages` on (the file was shrunk to `pages` pages).
    pub fn truncate(&mut self, pages: u64) {
        let keep = usize::try_from(pages).unwrap_or(usize::MAX);
        if keep < self.dense.len() {
            let gone = self.dense[keep..].iter().filter(|&&g| g > 0).count() as u64;
            self.dense.truncate(keep);
            self.count -= gone;
        }
        let gone = self.far.split_off(&pages);
        self.count -= gone.len() as u64;
    }

    /// Pages with a journaled generation.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when no page has a journaled generation.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// (page, generation) of every page with one, in page order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let dense = self.dense.iter().enumerate().map(|(p, &g)| (p as u64, g));
        dense
            .chain(self.far.iter().map(|(&p, &g)| (p, g)))
            .filter(|&(_, g)| g > 0)
    }

    /// The highest page with a journaled generation, and the highest generation of any page.
    pub fn highest(&self) -> Option<(u64, u64)> {
        let last = self.iter().last()?.0;
        let generation = self.iter().map(|(_, g)| g).max().unwrap_or(0);
        Some((last, generation))
    }

    /// Moves the vector's end to `len` pages, taking in the pages of the map below it.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the dense vector holds pages below a file's size in pages, which is in memory"
    )]
    fn grow_to(&mut self, len: u64) {
        let rest = self.far.split_off(&len);
        self.dense.resize(len as usize, 0);
        for (p, g) in std::mem::replace(&mut self.far, rest) {
            self.dense[p as usize] = g;
        }
    }
}

/// Equal when the same pages hold the same generations, however they are stored.
impl PartialEq for PageGens {
    fn eq(&self, other: &PageGens) -> bool {
        self.count == other.count && self.iter().eq(other.iter())
    }
}

impl Eq for PageGens {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_page_number_takes_a_map_entry_not_a_table_that_large() {
        let mut g = PageGens::default();
        g.raise(1 << 28, 5);
        g.raise(1 << 40, 6);
        g.raise(3, 2);
        assert!(g.dense.len() <= 4, "{}", g.dense.len());
        assert_eq!((g.get(1 << 28), g.get(1 << 40), g.get(3)), (5, 6, 2));
        assert_eq!(g.len(), 3);
        assert_eq!(g.highest(), Some((1 << 40, 6)));
        g.truncate(1 << 30);
        assert_eq!((g.get(1 << 40), g.len()), (0, 2));
    }

    #[test]
    fn dense_pages_stay_in_the_table_and_keep_the_highest_generation() {
        let mut g = PageGens::default();
        for p in (0..200_000u64).rev() {
            g.raise(p, 1);
        }
        g.raise(7, 9);
        g.raise(7, 4);
        assert_eq!(
            g.far.len(),
            0,
            "pages filled in from the top end up in the table"
        );
        assert_eq!((g.get(7), g.len()), (9, 200_000));
        let mut h = PageGens::default();
        g.iter().for_each(|(p, gen)| h.raise(p, gen));
        assert_eq!(g, h);
        g.truncate(10);
        assert_eq!(g.len(), 10);
    }
}
