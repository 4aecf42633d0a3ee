//! With no fault armed, faultfs is a byte-exact pass-through that acts like a 512-byte-sector disk.

use crate::support::*;
use std::io::Write;
use std::os::unix::fs::FileExt;

#[test]
fn pages_pass_through_byte_exact() {
    let Some(fx) = fixture("pages_pass_through_byte_exact") else {
        return;
    };
    let f = fx.open_direct("data.mdf");
    write_pages(&f, 16, 1);
    let expected: Vec<u8> = (0..16).flat_map(|i| page(i, 1).to_vec()).collect();
    assert!(
        fx.backing_bytes("data.mdf") == expected,
        "backing file differs"
    );
    for i in 0..16 {
        assert!(
            read_page(&f, i).expect("read") == page(i, 1).to_vec(),
            "page {i} read back differs"
        );
    }
    assert_eq!(f.metadata().expect("stat").len(), 16 * PAGE as u64);
}

#[test]
fn misaligned_direct_io_is_einval_like_a_disk() {
    let Some(fx) = fixture("misaligned_direct_io_is_einval_like_a_disk") else {
        return;
    };
    let f = fx.open_direct("a.dat");
    write_pages(&f, 2, 1);
    let buf = Aligned::zeroed(4096);
    assert_eq!(
        errno(f.write_at(&buf[..1000], 0)),
        libc::EINVAL,
        "length 1000"
    );
    assert_eq!(
        errno(f.write_at(&buf[..512], 100)),
        libc::EINVAL,
        "offset 100"
    );
    let mut rbuf = Aligned::zeroed(4096);
    assert_eq!(
        errno(f.read_at(&mut rbuf[..1000], 0)),
        libc::EINVAL,
        "read length 1000"
    );
    assert_eq!(
        errno(f.read_at(&mut rbuf[..512], 700)),
        libc::EINVAL,
        "read offset 700"
    );
    // Sector-aligned requests smaller than a page are fine, as on ext4 over a 512-byte disk.
    assert_eq!(f.write_at(&buf[..512], 1536).expect("512 at 1536"), 512);
    assert_eq!(f.read_at(&mut rbuf[..512], 1536).expect("read 512"), 512);
    assert!(fx.backing_page("a.dat", 0)[1536..2048]
        .iter()
        .all(|&b| b == 0));
    assert!(
        fx.backing_page("a.dat", 1) == page(1, 1).to_vec(),
        "rejected writes stored nothing"
    );
}

#[test]
fn buffered_io_and_namespace_operations_work() {
    let Some(fx) = fixture("buffered_io_and_namespace_operations_work") else {
        return;
    };
    let path = fx.mount.path("log.ldf");
    let mut f = std::fs::File::create(&path).expect("create");
    f.write_all(b"hello, faultfs").expect("buffered write");
    f.write_all_at(b"F", 7)
        .expect("unaligned buffered pwrite is allowed");
    f.sync_all().expect("fsync");
    assert_eq!(std::fs::read(&path).expect("read"), b"hello, Faultfs");
    f.set_len(5).expect("truncate");
    assert_eq!(
        std::fs::read(fx.backing.join("log.ldf")).expect("backing"),
        b"hello"
    );
    let renamed = fx.mount.path("log2.ldf");
    std::fs::rename(&path, &renamed).expect("rename");
    let names: Vec<String> = std::fs::read_dir(fx.mount.mountpoint())
        .expect("readdir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.contains(&"log2.ldf".to_string()) && !names.contains(&"log.ldf".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&".faultfs-control".to_string()), "{names:?}");
    std::fs::remove_file(&renamed).expect("unlink");
    assert!(!fx.backing.join("log2.ldf").exists());
    let st = statfs_blocks(fx.mount.mountpoint());
    assert!(st > 0, "statfs reports a size");
}

/// Block count that statfs reports for `path`, via coreutils `stat -f`.
fn statfs_blocks(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("stat")
        .args(["-f", "-c", "%b"])
        .arg(path)
        .output()
        .expect("run stat -f");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("block count")
}
