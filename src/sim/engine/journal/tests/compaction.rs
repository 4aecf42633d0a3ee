//! Compaction: the journal replaced by its snapshot, appends going on in the new file, and
//! the End of a clean run kept through it.

use super::*;

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
    let svc = JournalService::start(writer, state, Vec::new(), opts, Box::new(|_| {}), None)
        .expect("start");
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
