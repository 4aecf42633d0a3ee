//! The log backup stream's round trips: clean, a flipped byte, a gap in the chain, unfinished.

use std::sync::Arc;

use super::*;
use crate::io::FaultyBackend;
use crate::io::Storage;
use crate::sim::engine::logblock::NO_PREV;
use crate::sim::engine::logblock::{self, LogBlock};

fn mem_stream() -> Arc<dyn Storage> {
    let backend = FaultyBackend::new(1);
    backend.open_faulty(std::path::Path::new("/x.trn"))
}

fn log_block(lsn: u64, prev: u64, len: u32) -> (LogBlock, Vec<u8>) {
    let b = LogBlock {
        run_id: 9,
        file_id: 1,
        len,
        lsn,
        prev_lsn: prev,
        wrap: 0,
        time_us: 1,
        records: 1,
    };
    let mut bytes = vec![0u8; len as usize];
    logblock::encode(&mut bytes, &b);
    (b, bytes)
}

/// A finished stream of `n` chained log blocks of 4 KB, 60 KB of log a block.
fn stream(n: u64) -> (Arc<dyn Storage>, TrnWritten) {
    let storage = mem_stream();
    let mut w = TrnWriter::new(Arc::clone(&storage), 60 * 1024, 9, 3).unwrap();
    let mut prev = 100_000 - 4096;
    for i in 0..n {
        let lsn = 100_000 + i * 4096;
        let (b, bytes) = log_block(lsn, prev, 4096);
        w.push(1, &b, &bytes).unwrap();
        prev = lsn;
    }
    (storage, w.finish().unwrap())
}

#[test]
fn a_finished_stream_reads_back_clean_with_its_range() {
    let (s, written) = stream(40);
    let scan = scan(s.as_ref(), Some(&written)).unwrap();
    assert_eq!(scan.problems, vec![]);
    assert!(scan.complete);
    assert_eq!(scan.log_blocks, 40);
    // 15 log blocks of 4 KB fill a 60 KB block: 3 blocks of log and the END block.
    assert_eq!(scan.blocks, 4);
    assert_eq!(scan.range, Some((100_000, 100_000 + 40 * 4096)));
    assert_eq!(written.ranges, vec![(1, 100_000, 100_000 + 40 * 4096)]);
}

#[test]
fn a_flipped_byte_of_a_carried_log_block_is_found_there() {
    let (s, written) = stream(20);
    let mut byte = [0u8; 1];
    let at = (HEADER + 4096 * 3 + 200) as u64;
    s.read_at(&mut byte, at).unwrap();
    s.write_at(&[byte[0] ^ 0x10], at).unwrap();
    let scan = scan(s.as_ref(), Some(&written)).unwrap();
    assert!(scan.problems.len() >= 2, "{:?}", scan.problems);
    assert!(scan.problems[0].what.contains("CRC"), "{:?}", scan.problems);
    let log = scan.problems.iter().find(|p| p.what.contains("log block"));
    assert_eq!(log.map(|p| p.offset), Some((HEADER + 4096 * 3) as u64));
}

#[test]
fn a_gap_in_the_chain_is_a_broken_log_chain() {
    let storage = mem_stream();
    let mut w = TrnWriter::new(Arc::clone(&storage), 60 * 1024, 9, 1).unwrap();
    let (a, ab) = log_block(0, NO_PREV, 4096);
    let (c, cb) = log_block(8192, 4096, 4096);
    w.push(1, &a, &ab).unwrap();
    w.push(1, &c, &cb).unwrap();
    w.finish().unwrap();
    let scan = scan(storage.as_ref(), None).unwrap();
    assert_eq!(scan.problems.len(), 1, "{:?}", scan.problems);
    assert!(scan.problems[0].what.contains("chain is broken"));
}

#[test]
fn a_stream_without_its_end_block_is_unfinished_not_damaged() {
    let (s, written) = stream(20);
    let end = written.bytes - HEADER as u64;
    s.set_len(end).unwrap();
    let scan = scan(s.as_ref(), None).unwrap();
    assert_eq!(scan.problems, vec![]);
    assert!(!scan.complete);
}
