//! The device LBA of a corrupt page (issue #23 §4), checked on a real block device: ext4 on a
//! loop device of 4096-byte logical sectors, a run leaves its files, the test damages one page
//! through the file, `verify` reports the page with its LBA, and the loop device read at that
//! LBA (O_DIRECT, past the page cache) holds the damaged bytes, as does the image file beneath.
//! Once on the whole disk, once on a partition that starts at an odd sector: the LBA is the
//! disk's (what a vendor's tools read), not the partition's.
//! Needs root and a loop device: skipped without them unless SQLIOSIM_REQUIRE_LOOP is set.

use std::path::Path;
use std::process::Command;

use crate::crash_support::{assert_exit, bin};
use crate::loop_support::{is_root, skip, sparse_image, LoopDev, Mounted};

const DAMAGED: u64 = 100;

/// Page size of the data files.
const PAGE: u64 = 8192;

/// Writes one page of a file through the filesystem (buffered, then synced), as a device
/// damaging it at rest would leave it.
fn write_page(path: &Path, page: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    f.write_all_at(bytes, page * PAGE).expect("write page");
    f.sync_all().expect("sync");
}

/// `count` bytes of `dev` from byte `at`, read with O_DIRECT by dd.
fn dd_direct(dev: &Path, at: u64, count: u64) -> Vec<u8> {
    let out = Command::new("dd")
        .arg(format!("if={}", dev.display()))
        .args(["bs=4096", "iflag=direct,skip_bytes"])
        .arg(format!("skip={at}"))
        .arg(format!("count={}", count / 4096))
        .output()
        .expect("dd");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn the_lba_of_a_damaged_page_on_a_loop_device_holds_its_bytes() {
    lba_holds_the_damaged_page(None);
}

/// The partition's first sector, in the disk's 4096-byte sectors: not a multiple of 256
/// (1 MiB), so an LBA that forgot the partition start, or counted it in the wrong unit, reads
/// other bytes.
const PARTITION_START: u64 = 259;

#[test]
fn the_lba_of_a_damaged_page_on_a_partition_is_the_disks_and_holds_its_bytes() {
    lba_holds_the_damaged_page(Some(PARTITION_START));
}

/// A run on ext4 over a 4096-byte-sector loop device (its partition from sector `partition`
/// when given), one page damaged, verify's LBA read back from the disk and the image.
fn lba_holds_the_damaged_page(partition: Option<u64>) {
    if !is_root() {
        return skip("the device LBA test needs root for losetup and mount");
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let image = sparse_image(tmp.path(), "lba.img", 64 << 20);
    let dev = match partition {
        None => LoopDev::attach(&image, true, 4096),
        Some(start) => LoopDev::attach_partitioned(&image, true, 4096, start),
    };
    let Some(dev) = dev else {
        return;
    };
    let dir = tmp.path().join("mnt");
    let Some(m) = Mounted::new(dev, "ext4", &dir) else {
        return;
    };
    let cfg = crate::verify_readonly::config(tmp.path());
    let run = bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .arg("--dir")
        .arg(m.dir())
        .args(["--seed", "23"])
        .output()
        .expect("run");
    assert_exit(&run, 0);
    // The console header names the device under each file (issue #23 §5).
    let console = String::from_utf8_lossy(&run.stdout);
    let base = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    let (device, name) = (base(m.device()), base(m.disk()));
    // A partition is named with its disk.
    let shown = match partition {
        None => device.clone(),
        Some(_) => format!("{device} on disk {name}"),
    };
    let under = format!(
        "Device under {}: {shown}, model ",
        m.dir().join("sqliosim.mdx").display()
    );
    assert!(console.contains(&under), "{console}");
    assert!(
        console.contains(&format!("; ext4 mounted at {}", m.dir().display())),
        "{console}"
    );

    // A page no run would write: a marker repeated, on disk through the file.
    let mut bad = vec![0u8; PAGE as usize];
    for (i, b) in bad.iter_mut().enumerate() {
        *b = b"sqliosim-lba-test"[i % 17];
    }
    let mdx = m.dir().join("sqliosim.mdx");
    write_page(&mdx, DAMAGED, &bad);

    let json = tmp.path().join("verify.json");
    let out = bin()
        .args(["verify", "--dir"])
        .arg(m.dir())
        .arg("--log")
        .arg(tmp.path().join("verify.xml"))
        .arg("--json")
        .arg(&json)
        .output()
        .expect("verify");
    assert_exit(&out, 1);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("read json")).expect("json");
    let f = doc["findings"]
        .as_array()
        .and_then(|v| v.iter().find(|f| f["page_id"] == DAMAGED))
        .unwrap_or_else(|| panic!("no finding on page {DAMAGED}: {doc:#}"));
    let loc = &f["location"];
    assert_eq!(loc["device"], device.as_str(), "{loc:#}");
    assert_eq!(loc["disk"], name.as_str(), "{loc:#}");
    assert_eq!(loc["logical_sector_size"], 4096, "{loc:#}");
    // sysfs gives a partition's start in 512-byte sectors.
    let start = partition.unwrap_or(0) * 8;
    assert_eq!(loc["partition_start"], start, "{loc:#}");
    let pieces = loc["pieces"].as_array().expect("pieces");
    let (mut on_disk, mut on_partition) = (Vec::new(), Vec::new());
    for p in pieces {
        let lba = p["lba"].as_u64().expect("lba");
        let len = p["length"].as_u64().expect("length");
        let at = p["device_offset"].as_u64().expect("device_offset");
        assert_eq!(lba * 4096, start * 512 + at, "{loc:#}");
        on_disk.extend(dd_direct(m.disk(), lba * 4096, len));
        on_partition.extend(dd_direct(m.device(), at, len));
    }
    assert!(
        on_disk == bad,
        "the disk {name} at the reported LBA does not hold the damaged page: {loc:#}"
    );
    assert!(
        on_partition == bad,
        "{device} at the reported byte does not hold the damaged page: {loc:#}"
    );
    // The image file beneath the loop device holds it at the same byte.
    let first = pieces[0]["lba"].as_u64().unwrap() * 4096;
    let mut beneath = vec![0u8; pieces[0]["length"].as_u64().unwrap() as usize];
    std::os::unix::fs::FileExt::read_exact_at(
        &std::fs::File::open(&image).expect("image"),
        &mut beneath,
        first,
    )
    .expect("read image");
    assert_eq!(&beneath[..], &bad[..beneath.len()]);

    // The XML log and the dump text say it too.
    let xml = std::fs::read_to_string(tmp.path().join("verify.xml")).expect("xml");
    let lba = pieces[0]["lba"].as_u64().unwrap();
    assert!(xml.contains(&format!("LBA='{lba}'")), "{xml}");
    let dump = f["dump"].as_str().expect("dump path");
    let dump = std::fs::read_to_string(tmp.path().join(dump).as_path())
        .or_else(|_| std::fs::read_to_string(dump))
        .expect("dump text");
    assert!(
        dump.contains(&format!(
            "On the device: disk {name} LBA {lba} (4096-byte sectors"
        )),
        "{dump}"
    );
}
