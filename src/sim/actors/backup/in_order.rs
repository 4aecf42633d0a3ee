//! The order a backup's pages go into its stream: the order its reads were posted (file
//! order), whatever order they complete in. A read completed ahead of an earlier one is held
//! until the earlier one is in; a read the flight split comes out in its parts.

use std::collections::{HashMap, VecDeque};

use crate::page::PAGE_SIZE;

/// The backup's reads in the order they were posted (file order), and those completed ahead
/// of an earlier one: the stream takes them in posting order whatever order they complete in.
#[derive(Default)]
pub(super) struct InOrder {
    /// (file, first page, pages) of each read posted and not yet in the stream, oldest first.
    posted: VecDeque<(usize, u64, u64)>,
    /// Completed reads (by file and first page) waiting for the reads posted before them.
    held: HashMap<(usize, u64), Vec<u8>>,
}

impl InOrder {
    /// A read of `n` pages from `first` of data file `file`, just posted.
    pub(super) fn post(&mut self, file: usize, first: u64, n: u64) {
        self.posted.push_back((file, first, n));
    }

    /// A completed read (or a completed part of one), held until its turn.
    pub(super) fn complete(&mut self, file: usize, first: u64, bytes: Vec<u8>) {
        self.held.insert((file, first), bytes);
    }

    /// The oldest posted read when it has completed (or its completed first part, when the
    /// flight split it), taken out: (file, first page, bytes).
    pub(super) fn next_ready(&mut self) -> Option<(usize, u64, Vec<u8>)> {
        let &(file, first, n) = self.posted.front()?;
        let bytes = self.held.remove(&(file, first))?;
        let got = (bytes.len() / PAGE_SIZE) as u64;
        match got {
            g if g > 0 && g < n => {
                self.posted[0] = (file, first + g, n - g);
            }
            _ => {
                self.posted.pop_front();
            }
        }
        Some((file, first, bytes))
    }

    /// True when every posted read went into the stream.
    pub(super) fn is_empty(&self) -> bool {
        self.posted.is_empty() && self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(n: usize, fill: u8) -> Vec<u8> {
        vec![fill; n * PAGE_SIZE]
    }

    #[test]
    fn reads_completed_out_of_order_go_into_the_stream_in_posting_order() {
        let mut o = InOrder::default();
        o.post(0, 1, 4);
        o.post(0, 5, 4);
        o.post(1, 1, 2);
        o.complete(0, 5, pages(4, 2));
        o.complete(1, 1, pages(2, 3));
        assert!(
            o.next_ready().is_none(),
            "the first read posted is not in yet"
        );
        o.complete(0, 1, pages(4, 1));
        let order: Vec<(usize, u64, u8)> = std::iter::from_fn(|| o.next_ready())
            .map(|(f, first, b)| (f, first, b[0]))
            .collect();
        assert_eq!(order, vec![(0, 1, 1), (0, 5, 2), (1, 1, 3)]);
        assert!(o.is_empty());
    }

    #[test]
    fn a_read_the_flight_split_comes_out_in_its_parts() {
        let mut o = InOrder::default();
        o.post(0, 1, 8);
        o.complete(0, 1, pages(3, 1));
        let (f, first, b) = o.next_ready().expect("the first part");
        assert_eq!((f, first, b.len()), (0, 1, 3 * PAGE_SIZE));
        assert!(!o.is_empty(), "five pages still to come");
        assert!(o.next_ready().is_none());
        o.complete(0, 4, pages(5, 2));
        let (_, first, b) = o.next_ready().expect("the rest");
        assert_eq!((first, b.len()), (4, 5 * PAGE_SIZE));
        assert!(o.is_empty());
    }

    #[test]
    fn a_read_held_but_never_posted_keeps_the_backup_unfinished() {
        let mut o = InOrder::default();
        assert!(o.is_empty());
        o.complete(0, 9, pages(1, 0));
        assert!(o.next_ready().is_none());
        assert!(!o.is_empty(), "a stray completion is not a finished backup");
    }
}
