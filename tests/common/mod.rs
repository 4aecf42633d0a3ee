//! Page fixtures shared by the verifier tests: real stamped page bytes of a fixed run, the
//! expectations page 7 of file 1 is judged against, and torn pages; and the reading of a number
//! out of a log line.

use sqliosim::page::{ActorKind, Expect, ExpectedState, PageStamp, SECTOR_SIZE};

/// Run id of the fixture pages.
pub const RUN: u64 = 0x5EED_CAFE;

/// Page `page_id` of `file` in run [`RUN`] at `generation`.
pub fn page(file: u32, page_id: u64, generation: u64) -> Vec<u8> {
    page_of_run(RUN, file, page_id, generation)
}

/// A page of any run, written by checkpoint 2.
pub fn page_of_run(run_id: u64, file_id: u32, page_id: u64, generation: u64) -> Vec<u8> {
    PageStamp {
        run_id,
        file_id,
        page_id,
        generation,
        lsn: 1000 + generation,
        writer_kind: ActorKind::Checkpoint,
        writer_id: 2,
        write_time_us: 1_750_000_000_000_000,
    }
    .image()
}

/// Page 7 of file 1 is expected written at `generation`.
pub fn written(generation: u64) -> Expect {
    Expect::known(RUN, 1, 7, ExpectedState::Written { generation })
}

/// Page 7 of file 1 is expected in `state`.
pub fn at(state: ExpectedState) -> Expect {
    Expect::known(RUN, 1, 7, state)
}

/// First `k` sectors from `new`, the rest from `old`.
pub fn tear(new: &[u8], old: &[u8], k: usize) -> Vec<u8> {
    let mut p = old.to_vec();
    p[..k * SECTOR_SIZE].copy_from_slice(&new[..k * SECTOR_SIZE]);
    p
}

/// The first number after `before` in `text` (a figure of a log line); panics naming both.
pub fn number_after(text: &str, before: &str) -> u64 {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("no {before:?} in {text}"))
        + before.len();
    text[at..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {before:?} in {text}"))
}
