//! Helpers shared by the page-engine integration tests: write a stamped page through the
//! oracle, read it back through retry and triage.

use std::path::Path;
use std::time::Duration;

use sqliosim::io::{AlignedBuf, Storage};
use sqliosim::page::{stamp_page, ActorKind, PageStamp, PAGE_SIZE};
use sqliosim::sim::engine::oracle::Oracle;
use sqliosim::sim::engine::retry::{read_verified, ReadOutcome, RetryPolicy};

/// Page size as a file offset unit.
pub const PS: u64 = PAGE_SIZE as u64;

/// Retries without sleeping, as in SQLIOSim otherwise.
pub fn policy() -> RetryPolicy {
    RetryPolicy {
        retries: 15,
        sleep: Duration::ZERO,
    }
}

/// The stamp a test writer puts on a page.
pub fn stamp_for(o: &Oracle, page: u64, generation: u64) -> PageStamp {
    PageStamp {
        run_id: o.run_id(),
        file_id: o.file_id(),
        page_id: page,
        generation,
        lsn: generation * 100 + page,
        writer_kind: ActorKind::RandomUser,
        writer_id: 3,
        write_time_us: 1_700_000_000_000_000 + generation,
    }
}

/// Writes the next generation of `page` under its write latch; returns the generation and
/// whether the write succeeded.
pub fn write_page(st: &dyn Storage, o: &Oracle, page: u64) -> (u64, std::io::Result<()>) {
    let mut buf = AlignedBuf::new(PAGE_SIZE).expect("mmap");
    write_page_with(st, o, page, &mut buf)
}

/// [`write_page`] with the caller's (aligned, one page) buffer.
pub fn write_page_with(
    st: &dyn Storage,
    o: &Oracle,
    page: u64,
    buf: &mut [u8],
) -> (u64, std::io::Result<()>) {
    let _latch = o.write_latch(page);
    let g = o.begin_write(page);
    stamp_page(&mut buf[..PAGE_SIZE], &stamp_for(o, page, g));
    let r = st.write_at(&buf[..PAGE_SIZE], page * PS);
    o.complete_write(page, g, r.is_ok());
    (g, r)
}

/// Writes `page` and asserts the write succeeded.
pub fn write_ok(st: &dyn Storage, o: &Oracle, page: u64) -> u64 {
    let (g, r) = write_page(st, o, page);
    r.expect("write");
    g
}

/// Reads and verifies `page` under its read latch, with retries and triage.
pub fn read_page(st: &dyn Storage, o: &Oracle, page: u64) -> ReadOutcome {
    let mut buf = AlignedBuf::new(PAGE_SIZE).expect("mmap");
    read_page_with(st, o, page, &mut buf)
}

/// [`read_page`] with the caller's (aligned, one page) buffer.
pub fn read_page_with(st: &dyn Storage, o: &Oracle, page: u64, buf: &mut [u8]) -> ReadOutcome {
    let _latch = o.read_latch(page);
    read_verified(st, buf, page * PS, &o.expect_page(page), &policy())
}

/// A path for an in-memory file.
pub fn p(name: &str) -> &Path {
    Path::new(name)
}
