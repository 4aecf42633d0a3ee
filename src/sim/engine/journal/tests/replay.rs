//! Replay: records decoded and applied, the state they leave, what a restart carries over,
//! and paths kept byte for byte.

use super::*;

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
    more.extend(mark(10));
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
