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
//! other.

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
}
