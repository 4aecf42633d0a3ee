//! Journal round trips and replay rules.

use super::*;
use crate::page::FileRole;

fn files() -> Vec<JournalFile> {
    vec![
        JournalFile {
            file_id: 0,
            role: FileRole::Data,
            path: "/d/a.mdx".into(),
            max_pages: Some(200),
        },
        JournalFile {
            file_id: 1,
            role: FileRole::Log,
            path: "/d/a.ldx".into(),
            max_pages: None,
        },
    ]
}

#[test]
fn replay_keeps_the_highest_durable_generation_and_honours_resizes() {
    let recs = vec![
        Record::Start {
            run_id: 5,
            files: files(),
        },
        Record::Durable {
            file_id: 0,
            pages: vec![(3, 2), (9, 1)],
        },
        Record::Durable {
            file_id: 0,
            pages: vec![(3, 4)],
        },
        Record::Log {
            file_id: 1,
            last_block: 512,
            durable_end: 1024,
        },
        Record::Resize {
            file_id: 0,
            pages: 5,
        },
    ];
    let mut bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
    let (decoded, torn) = decode_all(&bytes);
    assert_eq!((decoded.clone(), torn), (recs, false));
    let st = JournalState::replay(&decoded, false);
    assert_eq!(st.run_id, 5);
    assert_eq!(st.durable_gen(0, 3), 4);
    assert_eq!(st.durable_gen(0, 9), 0, "page 9 went with the shrink");
    assert_eq!(st.log[1], Some((512, 1024)));
    assert!(!st.clean);
    // A torn tail is dropped, not fatal.
    bytes.extend_from_slice(&Record::End.encode()[..10]);
    let (again, torn) = decode_all(&bytes);
    assert!(torn);
    assert_eq!(again.len(), 5);
}

#[test]
fn a_damaged_record_ends_the_replay() {
    let mut bytes = Record::Start {
        run_id: 1,
        files: files(),
    }
    .encode();
    let mut d = Record::Durable {
        file_id: 0,
        pages: vec![(1, 1)],
    }
    .encode();
    let last = d.len() - 1;
    d[last] ^= 1;
    bytes.extend_from_slice(&d);
    let (recs, torn) = decode_all(&bytes);
    assert_eq!(recs.len(), 1);
    assert!(torn);
}

#[test]
fn marks_and_void_round_trip_and_a_snapshot_replays_to_the_same_state() {
    let recs = vec![
        Record::Start {
            run_id: 9,
            files: files(),
        },
        Record::Resize {
            file_id: 0,
            pages: 100,
        },
        Record::Durable {
            file_id: 0,
            pages: vec![(3, 2), (99, 7), (3, 5)],
        },
        Record::Log {
            file_id: 1,
            last_block: 512,
            durable_end: 1024,
        },
        Record::Mark {
            time_us: 1_700_000_000_000_000,
            interval_ms: 10,
            batch: 1,
        },
        Record::Void {
            time_us: 1_700_000_000_100_000,
            reason: "ENOSPC".into(),
        },
    ];
    let bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
    let (decoded, torn) = decode_all(&bytes);
    assert_eq!((decoded.clone(), torn), (recs, false));
    let st = JournalState::replay(&decoded, false);
    assert_eq!(st.last_mark, Some((1_700_000_000_000_000, 10)));
    assert_eq!(st.void.as_ref().map(|v| v.1.as_str()), Some("ENOSPC"));
    assert_eq!(st.news(0, &[(3, 5), (3, 6), (4, 1)]), vec![(3, 6), (4, 1)]);
    let snap = st.snapshot();
    let again = JournalState::replay(&snap, false);
    assert_eq!(again, st);
    let snap_bytes: usize = snap.iter().map(|r| r.encode().len()).sum();
    assert!(snap_bytes as u64 <= st.snapshot_len(), "{snap_bytes}");
}

#[test]
fn finished_backups_round_trip_the_last_of_each_kind_is_held_and_a_snapshot_keeps_them() {
    let backup = |log: bool, backup_no: u64| {
        Record::Backup(BackupRecord {
            log,
            backup_no,
            blocks: 3 + backup_no,
            bytes: 1 << 20,
            digest: BackupRecord::digest_of(&[1, 2, u32::try_from(backup_no).unwrap_or(0)]),
            path: if log { "/d/a.trn" } else { "/d/a.bak" }.into(),
        })
    };
    let recs = vec![
        Record::Start {
            run_id: 9,
            files: files(),
        },
        backup(false, 1),
        backup(true, 1),
        backup(true, 2),
        backup(false, 2),
    ];
    let bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
    let (decoded, torn) = decode_all(&bytes);
    assert_eq!((decoded.clone(), torn), (recs.clone(), false));
    let st = JournalState::replay(&decoded, false);
    let held: Vec<(bool, u64)> = st.backups.iter().map(|b| (b.log, b.backup_no)).collect();
    assert_eq!(held, vec![(true, 2), (false, 2)]);
    let snap = st.snapshot();
    assert_eq!(JournalState::replay(&snap, false), st);
    let snap_bytes: usize = snap.iter().map(|r| r.encode().len()).sum();
    assert!(snap_bytes as u64 <= st.snapshot_len(), "{snap_bytes}");
    // A new run's Start holds none of the last run's backups.
    let mut next = decoded;
    next.push(recs[0].clone());
    assert_eq!(JournalState::replay(&next, false).backups, vec![]);
    assert_ne!(
        BackupRecord::digest_of(&[1, 2, 3]),
        BackupRecord::digest_of(&[1, 3, 2]),
        "the fingerprint knows the blocks' order"
    );
}

#[test]
fn a_compaction_replaces_the_journal_and_appends_go_on_in_the_new_file() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
    let path = dir.path().join(JOURNAL_NAME);
    let disk = crate::io::BufferedBackend::new();
    let start = JournalState::started(4, files()).snapshot();
    let mut w = JournalWriter::create(&disk, &path, &start).expect("create");
    for g in 1..50 {
        w.append(&[Record::Durable {
            file_id: 0,
            pages: vec![(1, g)],
        }])
        .expect("append");
    }
    let before = w.len();
    let st = JournalState::load(&disk, &path).expect("load");
    let n = w.compact(&st.snapshot()).expect("compact");
    assert!(n < before / 4, "{n} vs {before}");
    w.append(&[Record::End]).expect("append");
    assert!(!compaction_path(&path).exists());
    let after = JournalState::load(&disk, &path).expect("load");
    assert_eq!(after.durable_gen(0, 1), 49);
    assert!(after.clean);
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), w.len());
}

#[test]
fn a_batch_carries_each_page_once_and_replays_the_same() {
    let d = |pages: Vec<(u64, u64)>| Record::Durable { file_id: 0, pages };
    let batch = vec![
        d(vec![(1, 2), (2, 5)]),
        d(vec![(1, 3)]),
        Record::Durable {
            file_id: 2,
            pages: vec![(7, 1)],
        },
        Record::Resize {
            file_id: 0,
            pages: 2,
        },
        d(vec![(1, 4)]),
        d(vec![(1, 6), (0, 1)]),
    ];
    let merged = record::coalesce_durable(batch.clone());
    assert_eq!(
        merged,
        vec![
            d(vec![(1, 3), (2, 5)]),
            Record::Durable {
                file_id: 2,
                pages: vec![(7, 1)],
            },
            Record::Resize {
                file_id: 0,
                pages: 2,
            },
            d(vec![(0, 1), (1, 6)]),
        ]
    );
    let start = Record::Start {
        run_id: 5,
        files: files(),
    };
    let replay = |recs: &[Record]| {
        let mut s = JournalState::default();
        s.apply(&start);
        recs.iter().for_each(|r| s.apply(r));
        s.durable
    };
    assert_eq!(replay(&batch), replay(&merged));
}

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

fn mark(n: u64) -> Vec<u8> {
    Record::Mark {
        time_us: 1_700_000_000_000_000 + n,
        interval_ms: 10,
        batch: n,
    }
    .encode()
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

    // Marks written before batches were numbered (12-byte payload) are not checked.
    let mut old = start;
    for n in [1u64, 3] {
        let durable = Record::Durable {
            file_id: 0,
            pages: vec![(1, n)],
        };
        old.extend_from_slice(&durable.encode());
        let mut payload = (1_700_000_000_000_000u64 + n).to_le_bytes().to_vec();
        payload.extend_from_slice(&10u32.to_le_bytes());
        old.extend_from_slice(&raw_record(6, &payload));
    }
    let st = JournalState::from_bytes(&old);
    assert!(st.damage.is_none(), "{:?}", st.damage);
    assert_eq!(st.durable_gen(0, 1), 3);
}

/// A record of `kind` with `payload` framed as the journal frames it.
#[expect(
    clippy::cast_possible_truncation,
    reason = "test payloads are a few bytes long"
)]
fn raw_record(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.push(kind);
    v.extend_from_slice(&[0, 0, 0]);
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    v.extend_from_slice(payload);
    v
}

#[test]
fn a_snapshot_keeps_the_end_of_a_clean_run() {
    let mut st = JournalState::started(3, files());
    st.apply(&Record::Durable {
        file_id: 0,
        pages: vec![(1, 4)],
    });
    st.apply(&Record::End);
    let again = JournalState::replay(&st.snapshot(), false);
    assert!(again.clean, "the snapshot dropped the End record");
    assert_eq!(again, st);
}

#[test]
fn an_end_batch_that_crosses_the_compaction_threshold_is_still_read_as_a_clean_end() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
    let path = dir.path().join(JOURNAL_NAME);
    let disk = crate::io::BufferedBackend::new();
    let state = JournalState::started(4, files());
    let writer = JournalWriter::create(&disk, &path, &state.snapshot()).expect("create");
    // The threshold is set where the journal stands before the End: that batch crosses it.
    let batches = 100u64;
    let per_batch = (Record::Durable {
        file_id: 0,
        pages: vec![(1, 1)],
    })
    .encode()
    .len()
        + (Record::Mark {
            time_us: 0,
            interval_ms: 10,
            batch: 1,
        })
        .encode()
        .len();
    let opts = JournalOptions {
        compact_min_bytes: writer.len() + batches * per_batch as u64,
        ..JournalOptions::default()
    };
    let svc = JournalService::start(writer, state, opts, Box::new(|_| {}), None).expect("start");
    for g in 1..=batches {
        assert!(svc.commit(vec![Record::Durable {
            file_id: 0,
            pages: vec![(1, g)],
        }]));
    }
    assert_eq!(svc.summary().compactions, 0, "no compaction before the End");
    assert!(svc.commit(vec![Record::End]));
    svc.finish();
    assert_eq!(
        svc.summary().compactions,
        1,
        "the End batch crossed the threshold"
    );
    let after = JournalState::load(&disk, &path).expect("load");
    assert!(after.clean, "the compacted journal lost the End record");
    assert_eq!(after.durable_gen(0, 1), batches);
}

#[test]
fn a_restart_carries_over_every_held_generation_and_no_end() {
    let mut prior = JournalState::started(7, files());
    for r in [
        Record::Resize {
            file_id: 0,
            pages: 64,
        },
        Record::Durable {
            file_id: 0,
            pages: vec![(1, 4100), (2, 4099), (63, 5)],
        },
        Record::Log {
            file_id: 1,
            last_block: 4096,
            durable_end: 4608,
        },
        Record::Mark {
            time_us: 1_700_000_000_000_000,
            interval_ms: 10,
            batch: 9,
        },
        Record::End,
    ] {
        prior.apply(&r);
    }
    let mut moved = files();
    moved[0].path = "/elsewhere/a.mdx".into();
    let st = JournalState::carried_over(&prior, 7, moved.clone());
    assert_eq!(st.files, moved, "the restarted run's files are named");
    for p in [1, 2, 63, 10] {
        assert_eq!(st.durable_gen(0, p), prior.durable_gen(0, p), "page {p}");
    }
    assert_eq!(st.pages[0], Some(64));
    assert_eq!(st.log[1], Some((4096, 4608)));
    assert_eq!(st.last_batch, 9);
    assert!(!st.clean, "the restarted run has not ended");
    // What the restart finds and journals at its first sync point: the same generations are no
    // news, an older one (a page the device rolled back) does not lower the floor.
    assert!(st.news(0, &[(1, 4100), (2, 4099)]).is_empty());
    let mut after = st.clone();
    after.apply(&Record::Durable {
        file_id: 0,
        pages: vec![(1, 3)],
    });
    assert_eq!(after.durable_gen(0, 1), 4100);
    // Written as the new journal's beginning, it replays to the same state, and the batch
    // numbers go on from the old journal's.
    let bytes: Vec<u8> = st.snapshot().iter().flat_map(Record::encode).collect();
    let read = JournalState::from_bytes(&bytes);
    assert_eq!(read, st);
    let mut more = bytes.clone();
    more.extend(numbered_mark(10));
    assert_eq!(JournalState::from_bytes(&more).damage, None);
    // What earlier versions journaled when a resumed run had flushed nothing yet (the next
    // lap's first LSN, no block behind it) claims nothing.
    let mut old = st.clone();
    old.apply(&Record::Log {
        file_id: 1,
        last_block: u64::MAX,
        durable_end: 670_924_800,
    });
    assert_eq!(old.log[1], Some((4096, 4608)));
}

fn numbered_mark(batch: u64) -> Vec<u8> {
    Record::Mark {
        time_us: 1_700_000_000_000_000 + batch,
        interval_ms: 10,
        batch,
    }
    .encode()
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
        bytes.extend_from_slice(&[2, 0, 0, 0]);
        bytes.extend_from_slice(&(left as u32).to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
    }
    let st = JournalState::from_bytes(&bytes);
    let d = st.damage.expect("damage at the flaw");
    assert_eq!(d.offset, flaw as u64);
    assert!(d.records_after >= 4, "{d}");
}

/// A path whose bytes are not UTF-8 (a directory named in Latin-1) comes back with the same
/// bytes, in a Start record and a Backup record: a lossy record (U+FFFD for 0xE9) would name a
/// file that does not exist, and verify would call the real one lost.
#[test]
fn paths_that_are_not_utf8_round_trip_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let odd = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/d/caf\xe9/a.mdx"));
    let mut fs = files();
    fs[0].path = odd.clone();
    let stream = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"/d/caf\xe9/a.bak"));
    let recs = vec![
        Record::Start {
            run_id: 3,
            files: fs,
        },
        Record::Backup(BackupRecord::finished(
            false,
            1,
            &[7, 8],
            8192,
            stream.clone(),
        )),
    ];
    let bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
    let (back, _) = decode_all(&bytes);
    assert_eq!(back, recs);
    let Record::Start { files, .. } = &back[0] else {
        panic!("not a Start: {back:?}");
    };
    assert_eq!(
        files[0].path.as_os_str().as_bytes(),
        odd.as_os_str().as_bytes()
    );
}
