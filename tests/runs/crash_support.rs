//! The runs binary's `crash_support`: the helpers it shares with the kernel binary
//! (tests/crash_support/), and damaging pages from outside, which only this binary does.

#[path = "../crash_support/mod.rs"]
mod shared;

use std::path::Path;

pub use shared::*;

/// Page size of the data files.
pub const PAGE: u64 = 8192;

/// Reads one page of a file.
pub fn read_page(path: &Path, page: u64) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).expect("open");
    let mut buf = vec![0u8; PAGE as usize];
    f.read_exact_at(&mut buf, page * PAGE).expect("read page");
    buf
}

/// Writes one page of a file (buffered, then synced).
pub fn write_page(path: &Path, page: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    f.write_all_at(bytes, page * PAGE).expect("write page");
    f.sync_all().expect("sync");
}

/// Length of the first record of `journal`, which must be its Start (a run writes it first):
/// the 20-byte record header (magic, kind, length, CRC) and the payload its length says.
pub fn start_record_len(journal: &[u8]) -> usize {
    assert_eq!(
        (&journal[..8], journal[8]),
        (&b"SQLSIMJR"[..], 1),
        "a Start first"
    );
    20 + u32::from_le_bytes(journal[12..16].try_into().expect("len")) as usize
}

/// What `read` gives once it stops changing: read again every 200 ms until two reads agree
/// (at most 20 s). A killed run's last direct writes may still land after `wait` returns: the
/// kernel finishes the requests a ring had in flight after the process is gone, later on a
/// loaded machine, so a test that compares a killed run's files with what it read right after
/// the kill reads them this way.
pub fn settled<T: PartialEq>(mut read: impl FnMut() -> T) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut last = read();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let now = read();
        if now == last || std::time::Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// The bytes of `path` once they stop changing ([`settled`]).
pub fn settled_bytes(path: &Path) -> Vec<u8> {
    settled(|| std::fs::read(path).expect("read the killed run's file"))
}
