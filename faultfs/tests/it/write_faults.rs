//! Write faults: lost, torn at 512 B and 4 KB, misdirected, EIO, delayed; seen in the backing file.

use crate::support::*;
use std::time::{Duration, Instant};

const FILE: &str = "sqliosim.mdx";

/// Writes pages 0..8 as version 1, arms `spec`, writes them all again as version 2.
fn rewrite_with_fault(fx: &Fixture, spec: &str) -> u64 {
    let f = fx.open_direct(FILE);
    write_pages(&f, 8, 1);
    let id = fx.mount.inject(spec).expect("inject");
    write_pages(&f, 8, 2);
    id
}

/// Asserts every page but `except` holds version 2 in the backing file.
fn others_are_new(fx: &Fixture, except: &[usize]) {
    for i in (0..8).filter(|i| !except.contains(i)) {
        assert!(
            fx.backing_page(FILE, i) == page(i, 2).to_vec(),
            "page {i} should be new"
        );
    }
}

#[test]
fn lost_write_leaves_old_content() {
    let Some(fx) = fixture("lost_write_leaves_old_content") else {
        return;
    };
    let id = rewrite_with_fault(&fx, "lost file=sqliosim.mdx page=5");
    assert!(
        fx.backing_page(FILE, 5) == page(5, 1).to_vec(),
        "page 5 must still be old"
    );
    let f = fx.open_direct(FILE);
    assert!(read_page(&f, 5).expect("read") == page(5, 1).to_vec());
    others_are_new(&fx, &[5]);
    assert_eq!(fx.mount.fired(id).expect("status"), 1);
}

fn check_torn(test: &str, keep: usize) {
    let Some(fx) = fixture(test) else { return };
    let id = rewrite_with_fault(&fx, &format!("torn file={FILE} page=3 keep={keep}"));
    let got = fx.backing_page(FILE, 3);
    assert!(
        got[..keep] == page(3, 2)[..keep],
        "first {keep} bytes must be new"
    );
    assert!(
        got[keep..] == page(3, 1)[keep..],
        "bytes after {keep} must be old"
    );
    others_are_new(&fx, &[3]);
    assert_eq!(fx.mount.fired(id).expect("status"), 1);
}

#[test]
fn torn_write_at_512_keeps_first_sector_only() {
    check_torn("torn_write_at_512_keeps_first_sector_only", 512);
}

#[test]
fn torn_write_at_4k_keeps_first_half_only() {
    check_torn("torn_write_at_4k_keeps_first_half_only", 4096);
}

#[test]
fn misdirected_write_lands_one_page_further() {
    let Some(fx) = fixture("misdirected_write_lands_one_page_further") else {
        return;
    };
    let f = fx.open_direct(FILE);
    write_pages(&f, 8, 1);
    let id = fx
        .mount
        .inject("misdirect file=sqliosim.mdx page=2")
        .expect("inject");
    write_page(&f, 2, 2).expect("write");
    f.sync_data().expect("fdatasync");
    assert!(
        fx.backing_page(FILE, 2) == page(2, 1).to_vec(),
        "source keeps old content"
    );
    assert!(
        fx.backing_page(FILE, 3) == page(2, 2).to_vec(),
        "destination holds the new page 2"
    );
    assert_eq!(fx.mount.fired(id).expect("status"), 1);
}

#[test]
fn misdirected_write_into_another_file() {
    let Some(fx) = fixture("misdirected_write_into_another_file") else {
        return;
    };
    let f = fx.open_direct(FILE);
    let other = fx.open_direct("other.ldf");
    write_pages(&f, 4, 1);
    write_pages(&other, 4, 1);
    fx.mount
        .inject("misdirect file=sqliosim.mdx page=1 shift=0 to=other.ldf")
        .expect("inject");
    write_page(&f, 1, 2).expect("write");
    assert!(
        fx.backing_page(FILE, 1) == page(1, 1).to_vec(),
        "source keeps old content"
    );
    assert!(
        fx.backing_page("other.ldf", 1) == page(1, 2).to_vec(),
        "other file got the write"
    );
}

#[test]
fn eio_on_write_stores_nothing() {
    let Some(fx) = fixture("eio_on_write_stores_nothing") else {
        return;
    };
    let f = fx.open_direct(FILE);
    write_pages(&f, 4, 1);
    fx.mount
        .inject("eio-write file=sqliosim.mdx page=1")
        .expect("inject");
    assert_eq!(errno(write_page(&f, 1, 2)), libc::EIO);
    assert!(fx.backing_page(FILE, 1) == page(1, 1).to_vec());
    write_page(&f, 1, 3).expect("fires once only");
    assert!(fx.backing_page(FILE, 1) == page(1, 3).to_vec());
}

#[test]
fn next_n_matching_writes_after_skip() {
    let Some(fx) = fixture("next_n_matching_writes_after_skip") else {
        return;
    };
    let f = fx.open_direct(FILE);
    write_pages(&f, 8, 1);
    let id = fx
        .mount
        .inject("lost file=sqliosim.mdx skip=2 count=3")
        .expect("inject");
    write_pages(&f, 8, 2);
    for i in 0..8 {
        let version = if (2..5).contains(&i) { 1 } else { 2 };
        assert!(
            fx.backing_page(FILE, i) == page(i, version).to_vec(),
            "page {i} want v{version}"
        );
    }
    let status = fx.mount.status().expect("status");
    assert!(status.contains("matched=8 fired=3"), "{status}");
    assert!(status.contains("hits=sqliosim.mdx@16384+8192,"), "{status}");
    assert_eq!(fx.mount.fired(id).expect("fired"), 3);
}

#[test]
fn delayed_write_completes_intact() {
    let Some(fx) = fixture("delayed_write_completes_intact") else {
        return;
    };
    let f = fx.open_direct(FILE);
    fx.mount
        .inject("delay-write file=sqliosim.mdx page=0 ms=150")
        .expect("inject");
    let start = Instant::now();
    write_page(&f, 0, 1).expect("delayed write succeeds");
    // A lower bound only: sleeping is guaranteed, an upper bound would be flaky here.
    assert!(start.elapsed() >= Duration::from_millis(150));
    assert!(fx.backing_page(FILE, 0) == page(0, 1).to_vec());
}

#[test]
fn fault_given_at_mount_time() {
    let args = ["--fault", "lost file=sqliosim.mdx page=2", "--seed", "11"];
    let Some(fx) = fixture_with("fault_given_at_mount_time", &args) else {
        return;
    };
    let f = fx.open_direct(FILE);
    write_pages(&f, 4, 1);
    let bytes = fx.backing_bytes(FILE);
    assert!(
        bytes[2 * PAGE..3 * PAGE].iter().all(|&b| b == 0),
        "page 2 never stored"
    );
    assert!(bytes[3 * PAGE..] == page(3, 1)[..]);
    assert!(fx
        .mount
        .status()
        .expect("status")
        .starts_with("seed=11 faults=1"));
}
