//! Read-side faults and bit rot: flip at rest, flip on read, stale read, EIO, delay.

use crate::support::*;
use std::time::{Duration, Instant};

const FILE: &str = "sqliosim.mdx";

/// Writes pages 0..8 as version 1 and returns the open file.
fn setup(fx: &Fixture) -> std::fs::File {
    let f = fx.open_direct(FILE);
    write_pages(&f, 8, 1);
    f
}

#[test]
fn bit_flip_at_rest_changes_exactly_one_bit() {
    let Some(fx) = fixture("bit_flip_at_rest_changes_exactly_one_bit") else {
        return;
    };
    let f = setup(&fx);
    let reply = fx
        .mount
        .command("inject flip file=sqliosim.mdx page=4")
        .expect("flip");
    assert!(reply.contains("byte=") && reply.contains("bit="), "{reply}");
    let on_disk = fx.backing_page(FILE, 4);
    assert_eq!(
        bit_diff(&on_disk, &page(4, 1)),
        1,
        "backing file has one flipped bit"
    );
    assert_eq!(
        bit_diff(&read_page(&f, 4).expect("read"), &page(4, 1)),
        1,
        "and reads show it"
    );
    for i in (0..8).filter(|&i| i != 4) {
        assert!(
            fx.backing_page(FILE, i) == page(i, 1).to_vec(),
            "page {i} untouched"
        );
    }
}

#[test]
fn bit_flip_at_given_byte_and_bit() {
    let Some(fx) = fixture("bit_flip_at_given_byte_and_bit") else {
        return;
    };
    setup(&fx);
    let byte = 3 * PAGE + 100;
    fx.mount
        .inject(&format!("flip file=sqliosim.mdx byte={byte} bit=6"))
        .expect("flip");
    let got = fx.backing_bytes(FILE);
    let want = page(3, 1);
    assert_eq!(got[byte] ^ want[100], 1 << 6);
    assert_eq!(bit_diff(&got[3 * PAGE..4 * PAGE], &want), 1);
}

#[test]
fn bit_flip_on_read_leaves_disk_intact() {
    let Some(fx) = fixture("bit_flip_on_read_leaves_disk_intact") else {
        return;
    };
    let f = setup(&fx);
    let id = fx
        .mount
        .inject("flip-read file=sqliosim.mdx page=6 seed=1")
        .err();
    assert!(id.is_some(), "seed= is not a fault parameter");
    let id = fx
        .mount
        .inject("flip-read file=sqliosim.mdx page=6")
        .expect("inject");
    for _ in 0..2 {
        assert_eq!(
            bit_diff(&read_page(&f, 6).expect("read"), &page(6, 1)),
            1,
            "every read"
        );
    }
    assert!(
        read_page(&f, 5).expect("read") == page(5, 1).to_vec(),
        "other pages clean"
    );
    assert!(
        fx.backing_page(FILE, 6) == page(6, 1).to_vec(),
        "disk intact"
    );
    assert_eq!(fx.mount.fired(id).expect("status"), 2);
    fx.mount.clear().expect("clear");
    assert!(
        read_page(&f, 6).expect("read") == page(6, 1).to_vec(),
        "clean after clear"
    );
}

#[test]
fn stale_read_returns_previous_version_once() {
    let Some(fx) = fixture("stale_read_returns_previous_version_once") else {
        return;
    };
    let f = setup(&fx);
    let id = fx
        .mount
        .inject("stale file=sqliosim.mdx page=7")
        .expect("inject");
    write_page(&f, 7, 2).expect("write v2");
    f.sync_data().expect("fdatasync");
    assert!(
        fx.backing_page(FILE, 7) == page(7, 2).to_vec(),
        "the write itself is stored"
    );
    assert!(
        read_page(&f, 7).expect("read") == page(7, 1).to_vec(),
        "first read is stale"
    );
    assert!(
        read_page(&f, 7).expect("read") == page(7, 2).to_vec(),
        "then current"
    );
    assert_eq!(fx.mount.fired(id).expect("status"), 1);
}

#[test]
fn eio_on_read_then_recovers() {
    let Some(fx) = fixture("eio_on_read_then_recovers") else {
        return;
    };
    let f = setup(&fx);
    fx.mount
        .inject("eio-read file=sqliosim.mdx page=1")
        .expect("inject");
    assert!(read_page(&f, 0).is_ok(), "other pages read fine");
    assert_eq!(errno(read_page(&f, 1)), libc::EIO);
    assert!(read_page(&f, 1).expect("fires once") == page(1, 1).to_vec());
}

#[test]
fn delayed_read_completes_intact() {
    let Some(fx) = fixture("delayed_read_completes_intact") else {
        return;
    };
    let f = setup(&fx);
    fx.mount
        .inject("delay-read file=sqliosim.mdx page=2 ms=150")
        .expect("inject");
    let start = Instant::now();
    let got = read_page(&f, 2).expect("delayed read succeeds");
    assert!(start.elapsed() >= Duration::from_millis(150));
    assert!(got == page(2, 1).to_vec());
}
