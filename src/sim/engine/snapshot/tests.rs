//! A snapshot file's copy-on-write against a faulty backend: a page copied once, as it was
//! when first captured, and a source page that is not what the snapshot expects reported and
//! not held. `lazy` holds the check's view of pages captured or not, `states` the sparse and
//! dense forms of the states.

mod lazy;
mod states;

use super::*;
use crate::io::{Backend, FaultyBackend, OpenOptions};
use crate::page::{verify, PAGE_SIZE};
use crate::sim::engine::oracle::Oracle;

fn file(b: &FaultyBackend, name: &str, pages: u64) -> Arc<dyn Storage> {
    let s = b
        .open(
            std::path::Path::new(name),
            OpenOptions {
                create: true,
                direct: false,
                write_through: false,
            },
        )
        .expect("open");
    s.set_len(pages * PAGE_SIZE as u64).expect("size");
    s
}

fn stamped(run: u64, file: u32, page: u64, gen: u64) -> Vec<u8> {
    let mut b = vec![0u8; PAGE_SIZE];
    let st = crate::page::layout::PageStamp {
        run_id: run,
        file_id: file,
        page_id: page,
        generation: gen,
        lsn: 0,
        writer_kind: crate::page::ActorKind::LazyWriter,
        writer_id: 0,
        write_time_us: 1,
    };
    crate::page::layout::stamp_page(&mut b, &st);
    b
}

#[test]
fn a_page_is_copied_once_as_it_was_and_its_state_is_the_one_captured_first() {
    let oracle = Oracle::new(7, 0, 16);
    let b = FaultyBackend::new(1);
    let source = file(&b, "d.mdx", 16);
    for p in 1..16 {
        let g = oracle.begin_write(p);
        oracle.complete_write(p, g, true);
        source
            .write_at(&stamped(7, 0, p, g), p * PAGE_SIZE as u64)
            .expect("write");
    }
    let sparse = file(&b, "d.mdx_MSSQL_DBCC0", 16);
    let snap = SnapFile::new(0, "d.mdx_MSSQL_DBCC0".into(), sparse.clone(), 16);
    let mut writes = Vec::new();
    let mut on_io = |io: CopyIo| {
        if io.write {
            writes.push(io.bytes);
        }
    };
    assert!(snap
        .preserve(source.as_ref(), &oracle, 3, 4, &mut on_io)
        .is_empty());
    assert_eq!((snap.copied(), snap.copy_writes()), (4, 4));
    assert_eq!(writes, [PAGE_SIZE as u64; 4], "one 8 KB write per page");
    // Page 4 is then written twice: its snapshot state stays generation 1.
    for _ in 0..2 {
        assert!(snap
            .preserve(source.as_ref(), &oracle, 4, 1, &mut |_| {})
            .is_empty());
        let g = oracle.begin_write(4);
        oracle.complete_write(4, g, true);
    }
    assert_eq!(snap.copied(), 4, "a page is copied once");
    assert_eq!(
        snap.state(4),
        Some(ExpectedState::Written { generation: 1 })
    );
    let mut b = vec![0u8; PAGE_SIZE];
    sparse.read_at(&mut b, 4 * PAGE_SIZE as u64).expect("read");
    let exp = snap.expect(7, 0, 4).expect("captured");
    assert!(verify::verify(&b, &exp).is_ok());
    assert!(!snap.is_copied(9) && snap.state(9).is_none());
    // Beyond the snapshot's pages nothing is copied.
    assert!(snap
        .preserve(source.as_ref(), &oracle, 15, 5, &mut |_| {})
        .is_empty());
    assert_eq!(snap.copied(), 5);
}

#[test]
fn a_source_page_that_is_not_what_the_snapshot_expects_is_reported_and_not_held() {
    let oracle = Oracle::new(7, 0, 8);
    let g = oracle.begin_write(2);
    oracle.complete_write(2, g, true);
    // The device lost the write: page 2 reads as zeros.
    let b = FaultyBackend::new(1);
    let source = file(&b, "d.mdx", 8);
    let sparse = file(&b, "s", 8);
    let snap = SnapFile::new(0, "s".into(), sparse, 8);
    let problems = snap.preserve(source.as_ref(), &oracle, 2, 1, &mut |_| {});
    assert!(
        matches!(
            problems.as_slice(),
            [CopyProblem::BadSource { page: 2, .. }]
        ),
        "{problems:?}"
    );
    assert!(snap.is_lost(2) && !snap.is_copied(2));
    assert_eq!(snap.copied(), 0);
}
