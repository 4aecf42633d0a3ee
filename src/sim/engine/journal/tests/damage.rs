//! Damage: a flaw followed by whole records, a torn last batch, a lost batch found by its
//! number, and the bounded scan past a flaw.

use super::*;

#[test]
fn a_flaw_followed_by_whole_records_is_damage_not_a_torn_tail() {
    let start = Record::Start {
        run_id: 3,
        files: files(),
    }
    .encode();
    // A lost batch: zeros where it should be, then a whole batch and the End record.
    let mut lost = start.clone();
    lost.extend_from_slice(&numbered_batch(1));
    let hole = lost.len();
    lost.extend_from_slice(&vec![0u8; numbered_batch(2).len()]);
    lost.extend_from_slice(&numbered_batch(2));
    lost.extend_from_slice(&numbered_batch(3));
    lost.extend_from_slice(&Record::End.encode());
    let st = JournalState::from_bytes(&lost);
    let d = st.damage.clone().expect("damage");
    assert_eq!((d.offset, d.flaw.clone()), (hole as u64, Flaw::Zeros));
    assert_eq!((d.records_after, d.end_after), (5, true));
    assert_eq!(
        st.durable_gen(0, 1),
        1,
        "only what precedes the damage counts"
    );
    assert!(!st.torn_tail && !st.clean);
    // A torn batch: its header and part of its payload, its mark, then a whole batch.
    let mut torn = start.clone();
    torn.extend_from_slice(&numbered_batch(1));
    let at = torn.len();
    let b = Record::Durable {
        file_id: 0,
        pages: vec![(1, 2), (2, 2)],
    }
    .encode();
    torn.extend_from_slice(&b[..HEADER + 8]);
    torn.extend_from_slice(&vec![0u8; b.len() - HEADER - 8]);
    torn.extend_from_slice(&mark(2));
    torn.extend_from_slice(&numbered_batch(3));
    let d = JournalState::from_bytes(&torn).damage.expect("damage");
    assert!(
        matches!(d.flaw, Flaw::ChecksumMismatch { kind: 2, .. }),
        "{d}"
    );
    assert!(d.to_string().contains(&format!("at offset {at}")), "{d}");
    // The same tear at the very end is the tail a crash leaves: not damage.
    let mut tail = start;
    tail.extend_from_slice(&numbered_batch(1));
    tail.extend_from_slice(&b[..HEADER + 8]);
    let st = JournalState::from_bytes(&tail);
    assert!(st.torn_tail && st.damage.is_none());
}

/// The last batch, written back out of order by a crash before its fdatasync returned: an
/// earlier block lost (zeros, or half a record), a later one kept (its mark, or records and
/// the mark). That is a torn tail, dropped whole; the same followed by another batch is damage
/// (a batch is synced before the next is written).
#[test]
fn the_last_batch_torn_out_of_order_is_a_torn_tail_not_damage() {
    let start = Record::Start {
        run_id: 3,
        files: files(),
    }
    .encode();
    let two = Record::Durable {
        file_id: 0,
        pages: vec![(1, 2), (2, 2)],
    }
    .encode();
    let mut j = start.clone();
    j.extend_from_slice(&numbered_batch(1));
    j.extend_from_slice(&vec![0u8; two.len()]);
    let kept_two = j.clone();
    j.extend_from_slice(&mark(2));
    let st = JournalState::from_bytes(&j);
    assert!(st.torn_tail, "the last batch's own mark after the tear");
    assert!(st.damage.is_none(), "{:?}", st.damage);
    assert_eq!(st.durable_gen(0, 1), 1, "the torn batch is dropped whole");
    // Half a record lost, then a whole record of the same batch and no mark.
    let mut half = start.clone();
    half.extend_from_slice(&numbered_batch(1));
    half.extend_from_slice(&two[..HEADER + 4]);
    half.extend_from_slice(&two);
    let st = JournalState::from_bytes(&half);
    assert!(st.torn_tail && st.damage.is_none(), "{:?}", st.damage);
    // A later batch after the tear: the torn one had been synced.
    let mut later = kept_two.clone();
    later.extend_from_slice(&mark(2));
    later.extend_from_slice(&numbered_batch(3));
    assert!(JournalState::from_bytes(&later).damage.is_some());
    // A mark that does not carry the next number is not the torn batch's.
    let mut skip = kept_two;
    skip.extend_from_slice(&mark(3));
    assert!(JournalState::from_bytes(&skip).damage.is_some());
    // Right after a Start, a fresh run's first batch (mark 1) may be torn; a flaw before any
    // other mark is inside a snapshot (a compaction's, synced before it was renamed in): damage.
    let mut fresh = start.clone();
    fresh.extend_from_slice(&vec![0u8; two.len()]);
    fresh.extend_from_slice(&mark(1));
    assert!(JournalState::from_bytes(&fresh).damage.is_none());
    let mut snapshot = start;
    snapshot.extend_from_slice(&vec![0u8; two.len()]);
    snapshot.extend_from_slice(&two);
    snapshot.extend_from_slice(&mark(7));
    assert!(JournalState::from_bytes(&snapshot).damage.is_some());
}

/// Batch `n` as the journal thread writes it: its acknowledgements, then its numbered mark.
fn numbered_batch(n: u64) -> Vec<u8> {
    let mut b = Record::Durable {
        file_id: 0,
        pages: vec![(1, n), (2, n)],
    }
    .encode();
    b.extend_from_slice(
        &Record::Mark {
            time_us: 1_700_000_000_000_000 + n,
            interval_ms: 10,
            batch: n,
        }
        .encode(),
    );
    b
}

#[test]
fn a_batch_lost_without_a_hole_is_damage_found_by_its_number() {
    let start = Record::Start {
        run_id: 3,
        files: files(),
    }
    .encode();
    // Batch 2 acknowledged and lost, batch 3 appended where it should have been: no hole.
    let mut j = start.clone();
    j.extend_from_slice(&numbered_batch(1));
    let gap = j.len();
    j.extend_from_slice(&numbered_batch(3));
    j.extend_from_slice(&Record::End.encode());
    let st = JournalState::from_bytes(&j);
    let d = st.damage.clone().expect("a missing batch is damage");
    assert_eq!(
        (d.offset, d.flaw.clone()),
        (gap as u64, Flaw::MissingBatches { after: 1, next: 3 })
    );
    assert_eq!((d.records_after, d.end_after), (3, true));
    assert!(d.is_mid_journal(), "whole records follow: not a torn tail");
    assert!(d.to_string().contains(&format!("at offset {gap}")), "{d}");
    assert!(d.to_string().contains("batch 3 follows batch 1"), "{d}");
    assert_eq!(
        st.durable_gen(0, 1),
        1,
        "batch 3's acknowledgements are not trusted"
    );
    assert!(!st.clean);

    // Every batch there, a compaction's snapshot (a Start, then a mark repeating the last
    // number) and the batches after it: no damage.
    let mut whole = start.clone();
    (1..=3).for_each(|n| whole.extend_from_slice(&numbered_batch(n)));
    whole.extend_from_slice(&start);
    whole.extend_from_slice(&numbered_batch(3)[..]);
    (4..=5).for_each(|n| whole.extend_from_slice(&numbered_batch(n)));
    whole.extend_from_slice(&Record::End.encode());
    let st = JournalState::from_bytes(&whole);
    assert!(st.damage.is_none(), "{:?}", st.damage);
    assert_eq!(
        (st.durable_gen(0, 1), st.last_batch, st.clean),
        (5, 5, true)
    );

    // A mark without its batch number (the layout before batches were numbered) is no record
    // of this version: whole and checksummed, but unreadable, so the journal is damaged there.
    let mut old = start;
    let at = old.len();
    let mut payload = 1_700_000_000_000_000u64.to_le_bytes().to_vec();
    payload.extend_from_slice(&10u32.to_le_bytes());
    old.extend_from_slice(&raw_record(6, &payload));
    old.extend_from_slice(&numbered_batch(1));
    old.extend_from_slice(&numbered_batch(2));
    let st = JournalState::from_bytes(&old);
    let d = st.damage.expect("an unnumbered mark is not read");
    assert_eq!(
        (d.offset, d.flaw),
        (at as u64, Flaw::Unreadable { kind: 6 })
    );
}

/// A record of `kind` with `payload` framed as the journal frames it.
#[expect(
    clippy::cast_possible_truncation,
    reason = "test payloads are a few bytes long"
)]
fn raw_record(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.push(kind);
    v.extend_from_slice(&[1, 0, 0]); // version 1, the spare byte
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

/// Crafted bytes after a flaw — a record magic every 20 bytes, each header claiming the length
/// to the end of the journal — cost the scan for whole records the square of their size (4 MiB
/// of them: about 400 GB checksummed, a verify that does not end). The scan's checksum budget
/// bounds it; the whole batches between the flaw and the crafted bytes are still found, so
/// the journal is still damaged at the flaw.
#[test]
#[expect(
    clippy::cast_possible_truncation,
    reason = "`left` is what is left of a small test journal"
)]
fn crafted_record_headers_after_a_flaw_do_not_make_the_scan_quadratic() {
    let mut bytes = Record::Start {
        run_id: 3,
        files: files(),
    }
    .encode();
    bytes.extend_from_slice(&numbered_batch(1));
    let flaw = bytes.len();
    bytes.extend_from_slice(&[0xEE; 40]);
    // Two whole batches: more than the last batch torn out of order.
    bytes.extend_from_slice(&numbered_batch(2));
    bytes.extend_from_slice(&numbered_batch(3));
    let fakes = (4 << 20) / HEADER;
    for i in 0..fakes {
        // Each claims exactly the bytes left after its header: all of them are checksummed.
        let left = (fakes - i - 1) * HEADER;
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&[2, 1, 0, 0]); // Durable, version 1
        bytes.extend_from_slice(&(left as u32).to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
    }
    let st = JournalState::from_bytes(&bytes);
    let d = st.damage.expect("damage at the flaw");
    assert_eq!(d.offset, flaw as u64);
    assert!(d.records_after >= 4, "{d}");
}
