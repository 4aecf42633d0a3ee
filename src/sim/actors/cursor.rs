//! The sequential cursor of a read-ahead or bulk-update user (issue #24 §2): SQL Server's
//! read-ahead follows a scan in page order, and a bulk load fills newly allocated extents in
//! order, so each of these users walks its data file and its next request starts where the
//! previous one ended.
//!
//! SQLIOSim documents no region jump for `[ReadAheadUser]` or `[BulkUpdateUser]` (only
//! `[RandomUser]` has `JumpToNewRegionPercentage`; see shared/reference/sqliosim.md §3.6,
//! §3.8, §3.9), so a walk leaves its place only at the file's end: it goes on at page 1 of
//! the next data file, wrapping round the list, as the audit user does. The same happens when
//! the shrink user cut the file below the cursor. A user's first position (a data file and a
//! page) is random, drawn from its own seeded generator, so two users do not walk in step.
//! Page 0, the file header, is never in a run: a cursor never points below page 1.
//!
//! The cursor decides *which* pages come next, nothing else: the request it yields is
//! clamped again to the size held by the request itself (`flight`), and checked like any
//! other. [`requests`] cuts a run into the requests of a buffer, for every actor that walks
//! a file in order (the audit, the backup, the sweeps, DBCC's view).

/// Where a sequential user's next run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// Position in the run's list of data files.
    pub slot: usize,
    /// First page of the next run (1 or more).
    pub next: u64,
}

impl Cursor {
    /// A cursor at `page` (at least 1) of the data file at `slot`.
    pub fn at(slot: usize, page: u64) -> Cursor {
        Cursor {
            slot,
            next: page.max(1),
        }
    }

    /// The run of at most `want` pages (at least 1) at the cursor in a file of `pages` pages,
    /// as `(first, len)`, the cursor moved past it; `None` when the cursor is at or past the
    /// file's end.
    pub fn take(&mut self, pages: u64, want: u64) -> Option<(u64, u64)> {
        let first = self.next.max(1);
        if first >= pages {
            return None;
        }
        let len = want.max(1).min(pages - first);
        self.next = first + len;
        Some((first, len))
    }

    /// Moves to page 1 of the next of `files` data files.
    pub fn wrap(&mut self, files: usize) {
        self.slot = (self.slot + 1) % files.max(1);
        self.next = 1;
    }
}

/// The requests that read a file of `pages` pages whole past its header, as `(first,
/// pages)`: from page 1 in order, at most `max` pages each.
pub fn whole_file(pages: u64, max: u64) -> impl Iterator<Item = (u64, u64)> {
    requests(1, pages.saturating_sub(1), max)
}

/// The requests of a run of `len` pages from `first`, as `(first, pages)`: in order, each at
/// most `max` pages (at least one), the last one short.
pub fn requests(first: u64, len: u64, max: u64) -> impl Iterator<Item = (u64, u64)> {
    let max = max.max(1);
    let end = first.saturating_add(len);
    (0..len.div_ceil(max)).map(move |k| {
        let at = first + k * max;
        (at, max.min(end - at))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_follow_each_other_and_stop_at_the_end() {
        let mut c = Cursor::at(0, 5);
        assert_eq!(c.take(20, 8), Some((5, 8)));
        assert_eq!(c.take(20, 8), Some((13, 7)), "clipped to the file's end");
        assert_eq!(c.take(20, 8), None);
        c.wrap(2);
        assert_eq!(c, Cursor { slot: 1, next: 1 });
        c.wrap(2);
        assert_eq!(c.slot, 0, "wraps round the list of data files");
    }

    #[test]
    fn a_shrunk_file_or_the_header_page_never_yields_a_run() {
        let mut c = Cursor::at(0, 50);
        assert_eq!(c.take(30, 8), None, "the file shrank below the cursor");
        assert_eq!(c.next, 50, "a refused take leaves the cursor");
        let mut h = Cursor::at(0, 0);
        assert_eq!(h.next, 1);
        assert_eq!(h.take(1, 8), None, "a file of its header only");
        assert_eq!(h.take(2, 0), Some((1, 1)), "at least one page");
    }

    #[test]
    fn a_run_is_split_into_requests_of_the_buffer_in_order() {
        let split = |first, len, max| requests(first, len, max).collect::<Vec<_>>();
        assert_eq!(split(1, 10, 4), vec![(1, 4), (5, 4), (9, 2)]);
        assert_eq!(split(7, 8, 4), vec![(7, 4), (11, 4)]);
        assert_eq!(split(3, 2, 64), vec![(3, 2)]);
        assert_eq!(split(3, 0, 64), vec![], "no pages, no request");
        assert_eq!(
            split(3, 3, 0),
            vec![(3, 1), (4, 1), (5, 1)],
            "at least a page"
        );
    }

    #[test]
    fn a_whole_file_is_read_past_its_header() {
        let all = |pages, max| whole_file(pages, max).collect::<Vec<_>>();
        assert_eq!(all(10, 4), vec![(1, 4), (5, 4), (9, 1)]);
        assert_eq!(all(2, 4), vec![(1, 1)]);
        assert_eq!(all(1, 4), vec![], "the header page alone");
        assert_eq!(all(0, 4), vec![]);
    }

    proptest::proptest! {
        #[test]
        fn requests_cover_a_run_once_within_the_buffer(
            first in 1u64..1_000_000,
            len in 0u64..5_000,
            max in 0u64..2_000,
        ) {
            let r: Vec<(u64, u64)> = requests(first, len, max).collect();
            proptest::prop_assert_eq!(r.iter().map(|&(_, n)| n).sum::<u64>(), len);
            proptest::prop_assert!(r.iter().all(|&(_, n)| n >= 1 && n <= max.max(1)));
            proptest::prop_assert!(r.first().is_none_or(|&(f, _)| f == first));
            proptest::prop_assert!(r.windows(2).all(|p| p[0].0 + p[0].1 == p[1].0));
        }
    }
}
