//! Read, verify, and on a bad verdict re-read and triage (SQLIOSim's 15 re-reads).
//!
//! Before every read the buffer is filled with a recognisable bytes-not-read pattern, so a read
//! that reports success but moved no data (whole sectors still holding the pattern) is caught
//! as a short read, like SQLIOSim's BNR check. On any bad verdict the page is read again up to
//! [`RetryPolicy::retries`] times into a fresh buffer, with a pause between reads; if a retry
//! returns the right page the problem was transient (SQL Server's error 825 class), otherwise
//! persistent. Every retry's verdict is kept as evidence.

use std::time::Duration;

use crate::io::{AlignedBuf, Storage};
use crate::page::{expected_image, verify, Expect, Verdict, PAGE_SIZE, SECTOR_SIZE};

/// The bytes-not-read pattern: 8 bytes repeated over the whole read buffer. A page never
/// holds a whole sector of it (every sector ends with a stamp).
pub const BNR_PATTERN: [u8; 8] = *b"\xBB.BNR.\xBB\n";

/// How hard to try before calling a bad page persistent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Re-reads after a bad verdict (default 15, as SQLIOSim; 16 reads in all).
    pub retries: u32,
    /// Pause before each re-read (default 10 ms; 0 in tests).
    pub sleep: Duration,
}

/// The pause before each re-read of a live read (SQLIOSim sleeps between its re-reads).
pub const REREAD_PAUSE: Duration = Duration::from_millis(10);

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: crate::sim::plan::from_settings::READ_RETRIES,
            sleep: REREAD_PAUSE,
        }
    }
}

impl RetryPolicy {
    /// The one rule for a live re-read, a data page's and a log block's alike: the plan's
    /// re-reads (SQLIOSim's 15; its 2022 fix gave LDX reads the full retry too) with
    /// [`REREAD_PAUSE`] before each.
    pub fn live(plan: &crate::sim::plan::SimPlan) -> RetryPolicy {
        RetryPolicy {
            retries: plan.read_retries,
            sleep: REREAD_PAUSE,
        }
    }

    /// Calls `read` up to `retries` times, pausing before each, until it returns true; true
    /// when one did (the problem was transient). For reads that are not one page (log blocks).
    pub fn reread_until(&self, mut read: impl FnMut() -> bool) -> bool {
        (0..self.retries).any(|_| {
            if !self.sleep.is_zero() {
                crate::clock::sleep(self.sleep);
            }
            read()
        })
    }
}

/// What reading one page came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Verdict of the first read.
    pub first: Verdict,
    /// Verdict of each re-read, in order (empty when the first read was ok).
    pub retries: Vec<Verdict>,
    /// True when the first read was bad and no re-read returned the right page.
    pub persistent: bool,
    /// Bytes of the first read (one page), kept only when it was bad.
    pub received: Option<Vec<u8>>,
    /// The image the page should have had, kept only when the first read was bad.
    pub expected_image: Option<Vec<u8>>,
}

impl ReadOutcome {
    /// True when the first read returned the right page.
    pub fn is_ok(&self) -> bool {
        self.first.is_ok()
    }

    /// True when the first read was bad but a re-read returned the right page.
    pub fn is_transient(&self) -> bool {
        !self.is_ok() && !self.persistent
    }
}

/// Fills `buf` with the bytes-not-read pattern.
pub fn fill_bnr(buf: &mut [u8]) {
    for chunk in buf.chunks_mut(BNR_PATTERN.len()) {
        chunk.copy_from_slice(&BNR_PATTERN[..chunk.len()]);
    }
}

/// Offset of the first whole sector of `page` still holding the pattern (bytes not read).
pub fn bytes_not_read(page: &[u8]) -> Option<usize> {
    page.chunks_exact(SECTOR_SIZE)
        .position(is_bnr_sector)
        .map(|s| s * SECTOR_SIZE)
}

fn is_bnr_sector(sector: &[u8]) -> bool {
    // The first word rules out almost every real sector before the full comparison.
    sector[..8] == BNR_PATTERN && sector.chunks_exact(8).all(|c| c == BNR_PATTERN)
}

/// Verdict on a read of one page that returned `result`, before verifying its content.
pub fn transfer_verdict(result: &std::io::Result<usize>, page: &[u8]) -> Option<Verdict> {
    match result {
        Err(e) => Some(Verdict::IoError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        }),
        Ok(n) if *n < PAGE_SIZE => Some(Verdict::ShortRead { bytes: *n as u32 }),
        Ok(_) => bytes_not_read(page).map(|at| Verdict::ShortRead { bytes: at as u32 }),
    }
}

/// Reads the page at `offset` into `buf` (one page) once and verifies it.
pub fn read_once<S: Storage + ?Sized>(
    storage: &S,
    buf: &mut [u8],
    offset: u64,
    exp: &Expect,
) -> Verdict {
    let page = &mut buf[..PAGE_SIZE];
    fill_bnr(page);
    let result = storage.read_at(page, offset);
    transfer_verdict(&result, page).unwrap_or_else(|| verify(page, exp))
}

/// Reads and verifies one page, retrying and triaging when it is bad. `buf` must be one page
/// (aligned for direct I/O); the retries use a fresh buffer of their own.
pub fn read_verified<S: Storage + ?Sized>(
    storage: &S,
    buf: &mut [u8],
    offset: u64,
    exp: &Expect,
    policy: &RetryPolicy,
) -> ReadOutcome {
    let first = read_once(storage, buf, offset, exp);
    triage(storage, offset, exp, policy, first, &buf[..PAGE_SIZE])
}

/// Triage after a first read made by the caller (a multi-page read, say): when `first` is bad,
/// re-reads the page until one read is right or the retries run out.
pub fn triage<S: Storage + ?Sized>(
    storage: &S,
    offset: u64,
    exp: &Expect,
    policy: &RetryPolicy,
    first: Verdict,
    received: &[u8],
) -> ReadOutcome {
    if first.is_ok() {
        return ReadOutcome {
            first,
            retries: Vec::new(),
            persistent: false,
            received: None,
            expected_image: None,
        };
    }
    let retries = reread(storage, offset, exp, policy);
    let persistent = !retries.last().is_some_and(Verdict::is_ok);
    ReadOutcome {
        first,
        retries,
        persistent,
        received: Some(received.to_vec()),
        expected_image: Some(expected_image(received, exp)),
    }
}

/// Re-reads until a read is right or `policy.retries` reads were made.
fn reread<S: Storage + ?Sized>(
    storage: &S,
    offset: u64,
    exp: &Expect,
    policy: &RetryPolicy,
) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let mut buf = match AlignedBuf::new(PAGE_SIZE) {
        Ok(b) => b,
        Err(e) => {
            verdicts.push(Verdict::IoError {
                errno: e.raw_os_error().unwrap_or(libc::ENOMEM),
            });
            return verdicts;
        }
    };
    for _ in 0..policy.retries {
        if !policy.sleep.is_zero() {
            crate::clock::sleep(policy.sleep);
        }
        let v = read_once(storage, &mut buf, offset, exp);
        let ok = v.is_ok();
        verdicts.push(v);
        if ok {
            break;
        }
    }
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_marks_sectors_not_read() {
        let mut page = vec![0u8; PAGE_SIZE];
        fill_bnr(&mut page);
        assert_eq!(bytes_not_read(&page), Some(0));
        page[..3 * SECTOR_SIZE].fill(1);
        assert_eq!(bytes_not_read(&page), Some(3 * SECTOR_SIZE));
        page[5 * SECTOR_SIZE + 100] = 0;
        assert_eq!(
            bytes_not_read(&page),
            Some(3 * SECTOR_SIZE),
            "first untouched sector"
        );
        page.fill(7);
        assert_eq!(bytes_not_read(&page), None);
    }

    /// The rule: data pages and log blocks get the plan's 15 re-reads, 10 ms apart, and a
    /// persistent problem is read exactly that many more times.
    #[test]
    fn live_rereads_are_one_rule_for_data_and_log() {
        let plan = crate::sim::plan::SimPlan::builder(1).build();
        let live = RetryPolicy::live(&plan);
        assert_eq!(live, RetryPolicy::default());
        assert_eq!((live.retries, live.sleep), (15, Duration::from_millis(10)));
        let quick = RetryPolicy {
            sleep: Duration::ZERO,
            ..live
        };
        let mut reads = 0;
        assert!(!quick.reread_until(|| {
            reads += 1;
            false
        }));
        assert_eq!(reads, 15);
        let mut reads = 0;
        assert!(quick.reread_until(|| {
            reads += 1;
            reads == 2
        }));
        assert_eq!(reads, 2, "stops at the first good read");
    }

    #[test]
    fn transfer_verdicts() {
        let page = vec![0u8; PAGE_SIZE];
        let eio = Err(std::io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(
            transfer_verdict(&eio, &page),
            Some(Verdict::IoError { errno: libc::EIO })
        );
        assert_eq!(
            transfer_verdict(&Ok(512), &page),
            Some(Verdict::ShortRead { bytes: 512 })
        );
        assert_eq!(transfer_verdict(&Ok(PAGE_SIZE), &page), None);
        let mut silent = page.clone();
        fill_bnr(&mut silent[4096..]);
        assert_eq!(
            transfer_verdict(&Ok(PAGE_SIZE), &silent),
            Some(Verdict::ShortRead { bytes: 4096 })
        );
    }
}
