//! The volatile write cache through the kernel: what a power cut drops and what it keeps,
//! a device that lies about flushes, and coherence of reads, sizes and truncation.

use crate::support::*;
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

const F: &str = "x.dat";

/// A mount with the cache on, and `F` holding pages 0..4 at counter 1, durable.
fn cached(test: &str, args: &[&str]) -> Option<(Fixture, std::fs::File)> {
    let mut all = vec!["--volatile-cache"];
    all.extend_from_slice(args);
    let fx = fixture_with(test, &all)?;
    let f = fx.open_direct(F);
    write_pages(&f, 4, 1);
    Some((fx, f))
}

fn cut(fx: &Fixture, how: &str) -> String {
    fx.mount.command(how).expect("power-cut")
}

#[test]
fn unsynced_writes_are_read_back_then_lost_in_a_power_cut() {
    let Some((fx, f)) = cached("unsynced_writes_lost", &[]) else {
        return;
    };
    write_page(&f, 1, 2).expect("write");
    write_page(&f, 6, 2).expect("write past the end");
    assert_eq!(
        read_page(&f, 1).expect("read"),
        page(1, 2).to_vec(),
        "reads see the cache"
    );
    assert_eq!(
        fx.backing_page(F, 1),
        page(1, 1).to_vec(),
        "not on the medium yet"
    );
    let len = std::fs::metadata(fx.mount.path(F)).expect("stat").len();
    assert_eq!(len, 7 * PAGE as u64, "the cached write extends the file");
    let reply = cut(&fx, "power-cut");
    assert!(
        reply.contains("dropped_writes=2 dropped_bytes=16384"),
        "{reply}"
    );
    assert_eq!(
        read_page(&f, 1).expect("read"),
        page(1, 1).to_vec(),
        "old content"
    );
    let len = std::fs::metadata(fx.mount.path(F)).expect("stat").len();
    assert_eq!(len, 4 * PAGE as u64, "the extension was never persisted");
    let status = fx.mount.status().expect("status");
    assert!(status.contains("power_cuts=1"), "{status}");
}

#[test]
fn synced_writes_survive_a_power_cut() {
    let Some((fx, f)) = cached("synced_writes_survive", &[]) else {
        return;
    };
    write_page(&f, 2, 3).expect("write");
    f.sync_data().expect("fdatasync");
    write_page(&f, 3, 3).expect("write");
    assert_eq!(
        fx.backing_page(F, 2),
        page(2, 3).to_vec(),
        "written back by the sync"
    );
    cut(&fx, "power-cut");
    assert_eq!(read_page(&f, 2).expect("read"), page(2, 3).to_vec());
    assert_eq!(
        read_page(&f, 3).expect("read"),
        page(3, 1).to_vec(),
        "unsynced: lost"
    );
}

#[test]
fn o_dsync_writes_are_durable_on_completion() {
    let Some((fx, _f)) = cached("o_dsync_durable", &[]) else {
        return;
    };
    let g = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
        .open(fx.mount.path(F))
        .expect("open O_DSYNC");
    write_page(&g, 0, 4).expect("write");
    cut(&fx, "power-cut");
    assert_eq!(fx.backing_page(F, 0), page(0, 4).to_vec());
}

#[test]
fn a_lying_device_acknowledges_the_sync_and_loses_the_write() {
    let Some((fx, f)) = cached("lie_then_power_cut", &[]) else {
        return;
    };
    let reply = fx
        .mount
        .command(&format!("lie on file={F}"))
        .expect("lie on");
    assert!(reply.starts_with("ok lie=on"), "{reply}");
    write_page(&f, 1, 5).expect("write");
    write_page(&f, 3, 5).expect("write");
    f.sync_data().expect("the lie: fdatasync succeeds");
    assert_eq!(fx.backing_page(F, 1), page(1, 1).to_vec(), "not persisted");
    let status = fx.mount.status().expect("status");
    assert!(
        status.contains("lie=x.dat") && status.contains("lied_flushes=1 lied_writes=2"),
        "{status}"
    );
    let reply = cut(&fx, "power-cut");
    assert!(reply.contains("lied_lost=2"), "{reply}");
    assert_eq!(read_page(&f, 1).expect("read"), page(1, 1).to_vec(), "gone");
    assert_eq!(read_page(&f, 3).expect("read"), page(3, 1).to_vec(), "gone");
    let lied = fx.mount.command("lied").expect("lied");
    assert_eq!(
        lied,
        "ok lied=2\nx.dat 8192 8192 lost\nx.dat 24576 8192 lost\n"
    );
    // Honest again: a sync persists.
    fx.mount.command("lie off").expect("lie off");
    write_page(&f, 1, 6).expect("write");
    f.sync_data().expect("fdatasync");
    cut(&fx, "power-cut");
    assert_eq!(fx.backing_page(F, 1), page(1, 6).to_vec());
}

#[test]
fn a_lie_about_one_file_leaves_the_others_honest() {
    let Some((fx, f)) = cached("lie_about_one_file", &[]) else {
        return;
    };
    let other = fx.open_direct("other.dat");
    fx.mount
        .command(&format!("lie on file={F}"))
        .expect("lie on");
    write_page(&other, 0, 7).expect("write");
    other.sync_data().expect("fdatasync");
    write_page(&f, 0, 7).expect("write");
    f.sync_data().expect("fdatasync");
    cut(&fx, "power-cut");
    assert_eq!(fx.backing_page("other.dat", 0), page(0, 7).to_vec());
    assert_eq!(fx.backing_page(F, 0), page(0, 1).to_vec());
}

#[test]
fn a_torn_power_cut_keeps_the_first_sectors_of_the_newest_write() {
    let Some((fx, f)) = cached("torn_power_cut", &[]) else {
        return;
    };
    write_page(&f, 2, 8).expect("write");
    let reply = cut(&fx, "power-cut torn");
    assert!(reply.contains("torn=x.dat@16384+8192 kept=4096"), "{reply}");
    let got = fx.backing_page(F, 2);
    assert_eq!(&got[..4096], &page(2, 8)[..4096]);
    assert_eq!(&got[4096..], &page(2, 1)[4096..]);
}

#[test]
fn a_full_cache_writes_back_its_oldest_data() {
    let Some((fx, f)) = cached("cache_max_evicts", &["--cache-max", "1"]) else {
        return;
    };
    // 192 pages (1.5 MiB) into a 1 MiB cache: the oldest reach the medium early.
    for i in 0..192 {
        write_page(&f, i, 9).expect("write");
    }
    let status = fx.mount.status().expect("status");
    let dirty = field(&status, "dirty_bytes");
    assert!(dirty <= 1 << 20, "{status}");
    assert!(field(&status, "evicted") >= 512 << 10, "{status}");
    cut(&fx, "power-cut");
    assert_eq!(
        fx.backing_page(F, 0),
        page(0, 9).to_vec(),
        "oldest persisted"
    );
    let len = fx.backing_bytes(F).len();
    assert!(
        len < 191 * PAGE,
        "the newest pages were dropped, file is {len} bytes"
    );
}

#[test]
fn truncate_and_unmount_stay_coherent_with_the_cache() {
    let Some((fx, f)) = cached("truncate_and_unmount", &[]) else {
        return;
    };
    write_page(&f, 3, 10).expect("write");
    f.set_len(3 * PAGE as u64).expect("truncate");
    f.set_len(4 * PAGE as u64).expect("extend");
    assert_eq!(
        read_page(&f, 3).expect("read"),
        vec![0; PAGE],
        "the cached page went"
    );
    let buffered = OpenOptions::new()
        .read(true)
        .write(true)
        .open(fx.mount.path(F))
        .expect("open buffered");
    buffered.write_all_at(b"hello", 100).expect("write");
    let mut b = [0u8; 5];
    buffered.read_exact_at(&mut b, 100).expect("read");
    assert_eq!(&b, b"hello");
    drop((f, buffered));
    let Fixture {
        mount,
        backing,
        _dir,
    } = fx;
    mount.unmount().expect("clean unmount");
    let bytes = std::fs::read(backing.join(F)).expect("backing");
    assert_eq!(
        &bytes[100..105],
        b"hello",
        "a clean unmount writes the cache back"
    );
}

fn field(status: &str, key: &str) -> u64 {
    status
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {status}"))
}
