//! The journal's format through the shared codec: every kind of record round-trips, the kind
//! byte and the version are where the frame says, and a journal of another version is refused
//! by its path, its version and the versions this build reads.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::codec::{Reader, Versioned};

fn path() -> impl Strategy<Value = PathBuf> {
    proptest::collection::vec(any::<u8>(), 0..40).prop_map(|b| PathBuf::from(OsStr::from_bytes(&b)))
}

fn file() -> impl Strategy<Value = JournalFile> {
    (
        any::<u32>(),
        any::<bool>(),
        path(),
        proptest::option::of(1..u64::MAX),
    )
        .prop_map(|(file_id, log, path, max_pages)| JournalFile {
            file_id,
            role: if log { FileRole::Log } else { FileRole::Data },
            path,
            max_pages,
        })
}

/// A record of any kind with any fields.
fn record() -> impl Strategy<Value = Record> {
    prop_oneof![
        (any::<u64>(), proptest::collection::vec(file(), 0..4))
            .prop_map(|(run_id, files)| Record::Start { run_id, files }),
        (
            any::<u32>(),
            proptest::collection::vec(any::<(u64, u64)>(), 0..8)
        )
            .prop_map(|(file_id, pages)| Record::Durable { file_id, pages }),
        any::<(u32, u64)>().prop_map(|(file_id, pages)| Record::Resize { file_id, pages }),
        any::<(u32, u64, u64)>().prop_map(|(file_id, last_block, durable_end)| Record::Log {
            file_id,
            last_block,
            durable_end
        }),
        Just(Record::End),
        any::<(u64, u32, u64)>().prop_map(|(time_us, interval_ms, batch)| Record::Mark {
            time_us,
            interval_ms,
            batch
        }),
        (any::<u64>(), ".{0,30}").prop_map(|(time_us, reason)| Record::Void { time_us, reason }),
        (any::<(bool, u64, u64, u64, u32)>(), path()).prop_map(
            |((log, backup_no, blocks, bytes, digest), path)| Record::Backup(BackupRecord {
                log,
                backup_no,
                blocks,
                bytes,
                digest,
                path,
            })
        ),
    ]
}

proptest! {
    #[test]
    fn every_kind_of_record_reads_back_as_written(r in record()) {
        let b = r.encode();
        prop_assert_eq!(RecordKind::try_from(b[8]), Ok(r.kind()));
        prop_assert_eq!(Reader::at(&b, 9).u16(), Some(1));
        let (back, n) = record::decode_one(&b).expect("a whole record");
        prop_assert_eq!((back, n), (r, b.len()));
    }

    #[test]
    fn a_torn_record_is_never_an_error(r in record(), cut in any::<prop::sample::Index>()) {
        let b = r.encode();
        let cut = cut.index(b.len());
        prop_assert!(record::decode_one(&b[..cut]).is_none());
        prop_assert_eq!(version_of(&b[..cut]).ok(), Some(if cut >= 11 { Some(JournalVersion::V1) } else { None }));
    }
}

#[test]
fn every_kind_byte_names_its_kind_and_no_other_byte_does() {
    for k in RecordKind::ALL {
        assert_eq!(RecordKind::try_from(u8::from(k)), Ok(k));
    }
    assert_eq!(RecordKind::try_from(0), Err(0));
    assert_eq!(RecordKind::try_from(9), Err(9));
}

#[test]
fn a_journal_of_another_version_is_refused_by_path_and_versions() {
    let mut bytes = Record::Start {
        run_id: 3,
        files: files(),
    }
    .encode();
    bytes.extend_from_slice(&mark(1));
    let path = Path::new("/runs/a/sqliosim.journal");
    assert!(JournalState::read(path, &bytes).is_ok());
    for found in [0u16, 2] {
        bytes[9..11].copy_from_slice(&found.to_le_bytes());
        let e = JournalState::read(path, &bytes).expect_err("another version");
        let text = e.to_string();
        assert!(
            text.starts_with("/runs/a/sqliosim.journal: journal format version "),
            "{text}"
        );
        assert!(text.contains(&format!("version {found};")), "{text}");
        assert!(text.contains("reads version 1"), "{text}");
        assert_eq!(JournalVersion::READS, &[1]);
    }
}

#[test]
fn a_frame_of_another_version_amid_the_journal_is_damage() {
    let mut bytes = Record::Start {
        run_id: 3,
        files: files(),
    }
    .encode();
    let at = bytes.len();
    let mut m = mark(1);
    m[9] = 2;
    bytes.extend_from_slice(&m);
    bytes.extend_from_slice(&mark(2));
    let st = JournalState::read(Path::new("j"), &bytes).expect("the first frame is ours");
    let d = st.damage.expect("damage where the version changes");
    assert_eq!(d.offset, at as u64);
}
