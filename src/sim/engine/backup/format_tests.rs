//! The `.bak` and `.trn` block headers through the shared codec: any header reads back as
//! sealed, and a stream whose first block states another version is refused by its path, its
//! version and the versions this build reads; a later block of another version is a problem
//! of the stream, as any damaged header is.

use std::path::Path;

use proptest::prelude::*;

use super::logstream::{self, TrnHead};
use super::*;
use crate::io::{FaultyBackend, Storage};

fn carried() -> impl Strategy<Value = Carried> {
    any::<(u32, u64, u64)>().prop_map(|(file, page, generation)| Carried {
        file,
        page,
        generation,
    })
}

proptest! {
    #[test]
    fn a_bak_header_reads_back_as_sealed(
        (flags, run_id, backup_no, block_no, offset, total_pages) in any::<(u32, u64, u64, u64, u64, u64)>(),
        pages in proptest::collection::vec(carried(), 0..4),
    ) {
        let mut h = BlockHead { flags, run_id, backup_no, block_no, offset, pages, total_pages, crc: 0 };
        let mut block = vec![0u8; h.len()];
        h.crc = seal(&h, &mut block);
        prop_assert_eq!(crc_of(&block), h.crc);
        prop_assert_eq!(read_head(&block), Ok(h));
    }

    #[test]
    fn a_trn_header_reads_back_as_sealed(
        (flags, run_id, backup_no, block_no, offset, file_id) in any::<(u32, u64, u64, u64, u64, u32)>(),
        (payload, first_lsn, end_lsn, prev_lsn, total_blocks) in (0u64..20_000, any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
    ) {
        let mut h = TrnHead { flags, run_id, backup_no, block_no, offset, file_id, payload, first_lsn, end_lsn, prev_lsn, total_blocks, crc: 0 };
        let mut block = vec![0u8; h.len()];
        h.crc = logstream::seal(&h, &mut block);
        prop_assert_eq!(logstream::crc_of(&block), h.crc);
        prop_assert_eq!(logstream::read_head(&block), Ok(h));
    }
}

#[test]
fn a_stream_of_another_version_is_refused_by_path_and_versions() {
    let backend = FaultyBackend::new(1);
    for (log, name, format) in [
        (false, "/b/x.bak", "backup stream"),
        (true, "/b/x.trn", "log backup stream"),
    ] {
        let storage = backend.open_faulty(Path::new(name));
        storage
            .write_at(&stream_of_version(log, 1), 0)
            .expect("write");
        assert_eq!(
            refuse_foreign(storage.as_ref(), Path::new(name), log),
            Ok(())
        );
        storage
            .write_at(&stream_of_version(log, 9), 0)
            .expect("write");
        let e = refuse_foreign(storage.as_ref(), Path::new(name), log).expect_err("version 9");
        assert_eq!(
            e.to_string(),
            format!("{name}: {format} format version 9; this build of sqliosim reads version 1: refused, not read (use the sqliosim that wrote it)")
        );
    }
    // Not ours at all: left to the scan, which says so.
    let other = backend.open_faulty(Path::new("/b/notes.bak"));
    other.write_at(&[b'x'; 4096], 0).expect("write");
    assert_eq!(
        refuse_foreign(other.as_ref(), Path::new("/b/notes.bak"), false),
        Ok(())
    );
}

#[test]
fn a_forged_stream_states_its_version_under_a_crc_that_holds() {
    for log in [false, true] {
        let s = stream_of_version(log, 9);
        assert_eq!(&s[..8], magic_of(log));
        assert_eq!(Reader::at(&s, OFF_VERSION).u32(), Some(9));
        assert_eq!(Reader::at(&s, OFF_CRC).u32(), Some(crc_of(&s)), "sealed");
    }
    let bak = read_head(&stream_of_version(false, 1)).expect("a .bak header");
    assert!(bak.is_end() && bak.is_empty(), "{bak:?}");
    let trn = logstream::read_head(&stream_of_version(true, 1)).expect("a .trn header");
    assert!(trn.flags & FLAG_END != 0 && trn.is_empty(), "{trn:?}");
}

#[test]
fn a_header_of_another_version_reads_as_such() {
    assert_eq!(
        read_head(&stream_of_version(false, 2)),
        Err(HeadError::Version(UnknownVersion {
            format: "backup stream",
            found: 2,
            reads: &[1],
        }))
    );
    assert!(matches!(
        logstream::read_head(&stream_of_version(true, 0)),
        Err(logstream::TrnHeadError::Version(v)) if v.found == 0
    ));
}
