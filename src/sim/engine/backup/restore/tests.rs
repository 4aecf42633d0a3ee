//! The restore's engine on the in-memory faulty backend: the zeroing covers the copy from page
//! 1 in 1 MB writes; the pages land at their place in writes of one transfer at most, with the
//! writes in flight bounded by the buffers (all of them in flight when the first ones are held
//! back by a latency); and a write the device fails is reported at its first page once the writes in
//! flight completed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::io::faulty::{Fault, Trigger};
use crate::io::FaultyBackend;
use crate::sim::engine::backup::writer::StreamWriter;

const COPY: &str = "/r/x.mdx.restored";

/// A finished stream of pages 1..=40 of file 0, in blocks of 32 pages, each page filled with
/// its number.
fn stream(backend: &FaultyBackend) -> Arc<dyn Storage> {
    let storage: Arc<dyn Storage> = backend.open_faulty(Path::new("/r/x.bak"));
    let mut w = StreamWriter::new(Arc::clone(&storage), 32, 7, 1).expect("writer");
    for page in 1..=40u64 {
        let c = Carried {
            file: 0,
            page,
            generation: page + 100,
        };
        w.push(c, &[byte(page); PAGE_SIZE]).expect("push");
    }
    w.finish().expect("finish");
    storage
}

/// The byte page `page` is filled with (pages here are numbered below 256).
fn byte(page: u64) -> u8 {
    u8::try_from(page).expect("a page below 256")
}

fn target(backend: &FaultyBackend) -> Vec<Target> {
    let storage: Arc<dyn Storage> = backend.open_faulty(Path::new(COPY));
    vec![Target::new(COPY.into(), 0, storage, 41)]
}

#[test]
fn the_zeroing_covers_the_copy_from_page_1_in_1_mb_writes() {
    let backend = FaultyBackend::new(1);
    let targets = target(&backend);
    targets[0]
        .storage
        .write_at(&[9u8; PAGE_SIZE], 0)
        .expect("header");
    assert_eq!(zero(&targets, &|| false).expect("zero"), 1);
    let bytes = backend.contents(Path::new(COPY)).expect("the copy");
    assert_eq!(bytes.len(), 41 * PAGE_SIZE);
    assert!(
        bytes[..PAGE_SIZE].iter().all(|&b| b == 9),
        "the header was zeroed"
    );
    assert!(bytes[PAGE_SIZE..].iter().all(|&b| b == 0));
}

#[test]
fn pages_land_in_writes_of_one_transfer_with_every_buffer_in_flight() {
    let backend = FaultyBackend::new(2);
    let stream = stream(&backend);
    let mut targets = target(&backend);
    // The first 3 writes complete only 500 ms after they run: all 3 buffers are in flight at
    // once, whatever the machine's load.
    for page in [1, 9, 17] {
        let at = Trigger::Page {
            path: COPY.into(),
            page,
        };
        backend.inject(Fault::Latency(Duration::from_millis(500)), at);
    }
    let transfer = Transfer {
        pages: 8,
        buffers: 3,
    };
    let done = write_back(stream.as_ref(), &mut targets, transfer, &|| false).expect("restore");
    // The block of 32 pages in 4 writes of 8, the block of 8 in one.
    assert_eq!(
        done,
        Restored {
            pages: 40,
            writes: 5,
            most_in_flight: 3
        }
    );
    assert_eq!(targets[0].writes, 5);
    let bytes = backend.contents(Path::new(COPY)).expect("the copy");
    for page in 1..=40usize {
        let at = page * PAGE_SIZE;
        assert!(
            bytes[at..at + PAGE_SIZE]
                .iter()
                .all(|&b| b == byte(page as u64)),
            "page {page}"
        );
        assert_eq!(targets[0].generations[page], Some(page as u64 + 100));
    }
}

#[test]
fn a_write_the_device_fails_is_reported_at_its_first_page() {
    let backend = FaultyBackend::new(3);
    let stream = stream(&backend);
    let mut targets = target(&backend);
    let page20 = Trigger::Page {
        path: COPY.into(),
        page: 20,
    };
    backend.inject(Fault::WriteEio, page20);
    let err = write_back(
        stream.as_ref(),
        &mut targets,
        Transfer::SQL_SERVER_DISK,
        &|| false,
    )
    .expect_err("the EIO");
    assert_eq!((err.target, err.page, err.write), (Some(0), 17, true));
    assert_eq!(err.error.raw_os_error(), Some(libc::EIO));
}
