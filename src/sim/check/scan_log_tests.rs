//! The verify's walk of a log left by a cut (`scan_log`): what the log writer's bound past
//! the durable end lets a cut damage is not held against the device, and a durable block
//! lost inside the part the walk holds, or the durable tail lost, still is.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::io::{Backend, FaultyBackend, OpenOptions};
use crate::page::FileRole;
use crate::sim::engine::logblock::peek;
use crate::sim::engine::logio::OwnControls;
use crate::sim::engine::logscan::Walk;
use crate::sim::engine::logwrites::unflushed_bound;
use crate::sim::engine::wal::Wal;

const RUN: u64 = 77;
const AREA: u64 = 1 << 20;

/// A log of a 1 MiB area written round about three laps (synced per flush, as in forced
/// flush): its bytes, header, durable position (last block, end).
fn lapped_log() -> (Vec<u8>, FileHeader, (u64, u64)) {
    let backend = FaultyBackend::new(11);
    let path = Path::new("/l.ldx");
    let storage = backend.open(path, OpenOptions::default()).expect("open");
    let len = LOG_AREA_START + AREA;
    storage.set_len(len).expect("size");
    let wal = Wal::new(Arc::clone(&storage), RUN, 1, len, false, 512).expect("wal");
    let own = OwnControls::default();
    for i in 0..5000u32 {
        let lsn = wal.append(300 + (i % 11) * 97);
        if i % 3 == 0 {
            wal.flush_to(lsn, &own.gate()).expect("flush");
        }
    }
    wal.flush_all(&own.gate()).expect("flush");
    assert!(
        wal.durable_end() > 3 * AREA,
        "wrapped: {}",
        wal.durable_end()
    );
    let h = FileHeader {
        run_id: RUN,
        file_id: 1,
        page_size: PAGE_SIZE as u32,
        role: FileRole::Log,
        tool_version: String::new(),
        created_us: 0,
        sector_size: 512,
    };
    let bytes = backend.contents(path).expect("contents");
    (bytes, h, (wal.last_block(), wal.durable_end()))
}

/// The LSNs of the chain's blocks, newest first, back to `oldest` (the one walk back, over
/// the blocks' headers as written).
fn chain(bytes: &[u8], last: u64, oldest: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let walk = walk_back(last, oldest, usize::MAX, |lsn| {
        out.push(lsn);
        let at = (LOG_AREA_START + lsn % AREA) as usize;
        Ok::<_, Infallible>(peek(&bytes[at..]))
    });
    assert!(matches!(walk, Ok(Walk { broken: None, .. })), "{walk:?}");
    out
}

fn damage(bytes: &mut [u8], lsn_from: u64, len: u64, fill: u8) {
    for lsn in lsn_from..lsn_from + len {
        bytes[(LOG_AREA_START + lsn % AREA) as usize] = fill;
    }
}

#[test]
fn writes_past_the_durable_end_within_the_bound_break_nothing_held() {
    let (mut bytes, h, (last, end)) = lapped_log();
    assert_eq!(scan_log(&bytes, &h, Some((last, end))).issues, vec![]);
    // A cut tore or dropped every write the writer may have had past the durable end: each
    // lapped the blocks a lap older, some of which a walk to `end - AREA` would check.
    let bound = unflushed_bound(AREA);
    let lapped: Vec<u64> = chain(&bytes, last, end - AREA)
        .into_iter()
        .filter(|&l| l + AREA < end + bound)
        .collect();
    assert!(
        lapped.len() > 3,
        "the writes lap chained blocks: {lapped:?}"
    );
    damage(&mut bytes, end, bound, 0x5A);
    let scan = scan_log(&bytes, &h, Some((last, end)));
    assert_eq!(scan.issues, vec![], "{scan:?}");
    assert_eq!(scan.newest_end, end);
    assert!(scan.chained > 10, "{scan:?}");
}

#[test]
fn a_durable_block_lost_inside_the_held_part_is_a_broken_chain() {
    let (mut bytes, h, (last, end)) = lapped_log();
    let held = chain(&bytes, last, oldest_held(end, AREA));
    // A block half way back: well inside what the walk holds.
    let lost = held[held.len() / 2];
    damage(&mut bytes, lost, 512, 0);
    let scan = scan_log(&bytes, &h, Some((last, end)));
    assert_eq!(scan.issues.len(), 1, "{scan:?}");
    assert!(
        scan.issues[0]
            .what
            .starts_with(&format!("log chain broken at LSN {lost}:")),
        "{:?}",
        scan.issues
    );
}

#[test]
fn the_durable_tail_lost_is_durable_log_lost() {
    let (mut bytes, h, (last, end)) = lapped_log();
    damage(&mut bytes, last, 512, 0);
    let scan = scan_log(&bytes, &h, Some((last, end)));
    assert!(
        scan.issues
            .iter()
            .any(|i| i.what.starts_with("durable log lost")),
        "{scan:?}"
    );
}
