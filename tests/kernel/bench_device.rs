//! Capacity runs on block devices: loop devices over image files in the build's temporary
//! directory. A device without our header is read but never written unless forced; a forced
//! run stamps it; `--verify` then checks it and catches a sector changed behind its back; a
//! loop device that goes through the page cache is reported as not honouring direct I/O.
//!
//! Needs root (losetup). Without it the tests print why and pass, unless
//! SQLIOSIM_REQUIRE_LOOP=1 (as in CI), where they fail instead.

use crate::loop_support::LoopDev;
use sqliosim::bench;
use sqliosim::exit::Outcome;
use std::ffi::OsString;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

fn image(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let path = dir.join(name);
    let mut bytes = content.to_vec();
    bytes.resize(32 << 20, 0x5A);
    std::fs::write(&path, bytes).expect("write image");
    path
}

fn bench(args: &[&str]) -> anyhow::Result<(Outcome, String)> {
    let args: Vec<OsString> = std::iter::once("sqliosim bench")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    let mut out = Vec::new();
    let outcome = bench::cmd::run_with(&args, &mut out)?;
    Ok((outcome, String::from_utf8(out).expect("utf-8")))
}

fn device_bytes(dev: &str) -> Vec<u8> {
    std::fs::read(dev).expect("read the device")
}

#[test]
fn a_foreign_device_is_read_but_never_written_unless_forced() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = image(dir.path(), "foreign.img", b"a filesystem superblock, say");
    let Some(lo) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let dev = lo.path().to_str().expect("utf-8 device path");
    let before = device_bytes(dev);
    let short = ["--duration", "0.2", "--warmup", "0"];

    let (outcome, text) = bench(&[&["--file", dev, "--outstanding", "4"][..], &short].concat())
        .expect("a read run on a foreign device is allowed");
    assert_eq!(outcome, Outcome::Clean, "{text}");
    assert!(
        text.contains("loop device with direct I/O, direct I/O honoured"),
        "{text}"
    );
    assert!(text.contains("32 MiB"), "{text}");

    let err = bench(&[&["--file", dev, "--rw", "write"][..], &short].concat())
        .expect_err("writing a foreign device needs --force");
    assert!(err.to_string().contains("pass --force"), "{err}");
    let err = bench(&[&["--file", dev, "--verify"][..], &short].concat())
        .expect_err("--verify needs a prepared device");
    assert!(err.to_string().contains("--verify needs a device"), "{err}");
    assert!(device_bytes(dev) == before, "the device was modified");

    let (outcome, text) = bench(
        &[
            &["--file", dev, "--rw", "mix", "--verify", "--force"][..],
            &short,
        ]
        .concat(),
    )
    .expect("forced");
    assert_eq!(outcome, Outcome::Clean, "{text}");
    let now = device_bytes(dev);
    assert!(now.starts_with(b"SQLIOSIM-BENCH v2\n"), "header written");
    assert!(
        String::from_utf8_lossy(&now[..200]).contains(&format!("size={}", 32 << 20)),
        "the whole device was prepared"
    );

    // Ours now: writes and --verify need no --force, and a changed sector is caught.
    let (outcome, text) = bench(
        &[
            &["--file", dev, "--rw", "write", "--outstanding", "8"][..],
            &short,
        ]
        .concat(),
    )
    .expect("ours now");
    assert_eq!(outcome, Outcome::Clean, "{text}");
    let verify_all = [
        "--file",
        dev,
        "--verify",
        "--pattern",
        "sequential",
        "--block-size",
        "64K",
        "--duration",
        "1",
        "--warmup",
        "0",
    ];
    let (outcome, text) = bench(&verify_all).expect("verify");
    assert_eq!(outcome, Outcome::Clean, "{text}");
    std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .expect("open the device")
        .write_all_at(&[0xEE; 512], (2 << 20) + 4096 + 512)
        .expect("corrupt one sector");
    let (outcome, text) = bench(&verify_all).expect("verify");
    assert_eq!(outcome, Outcome::Findings, "{text}");
    assert!(
        text.contains("VERIFY:") && text.contains("sector at offset 2101248"),
        "{text}"
    );
}

#[test]
fn a_loop_device_through_the_page_cache_is_not_called_direct() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = image(dir.path(), "cached.img", b"");
    let Some(lo) = LoopDev::attach(&img, false, 512) else {
        return;
    };
    let (outcome, text) = bench(&[
        "--file",
        lo.path().to_str().expect("utf-8"),
        "--duration",
        "0.2",
        "--warmup",
        "0",
    ])
    .expect("read run");
    assert_eq!(outcome, Outcome::Clean, "{text}");
    assert!(text.contains("direct I/O NOT honoured"), "{text}");
    assert!(text.contains("losetup --direct-io=on"), "{text}");
}
