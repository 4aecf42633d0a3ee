//! Finished backups: their records round trip, the last of each kind is held, a snapshot
//! keeps them.

use super::*;

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
