//! The device and filesystem matrix: ext4 and XFS, each over loop devices with 512-byte and
//! with 4096-byte logical sectors (direct I/O on), plus btrfs and tmpfs, where O_DIRECT is not
//! honoured. In every cell a new user's sequence runs through the real binary: a short
//! simulation, `verify`, a `--resume`, and a short bench with `--verify`. Every step must end
//! clean (exit 0) with no finding; on btrfs and tmpfs the run must also say that direct I/O is
//! not honoured there.
//!
//! Needs root (losetup, mkfs, mount). Without it the tests print why and pass, unless
//! SQLIOSIM_REQUIRE_LOOP=1 (as in CI), where they fail instead.

mod crash_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use crash_support::{bin, small_config};

/// `losetup -f` picks the first free device: attach one at a time.
static LOSETUP: Mutex<()> = Mutex::new(());

/// A filesystem mounted for one cell; unmounted and its loop device detached on drop.
struct Mounted {
    mnt: tempfile::TempDir,
    dev: Option<String>,
    _image_dir: tempfile::TempDir,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
        if let Some(dev) = &self.dev {
            let _ = Command::new("losetup").arg("-d").arg(dev).status();
        }
    }
}

/// Says why a cell cannot run here: fails under SQLIOSIM_REQUIRE_LOOP, else skips.
fn cannot(why: String) -> Option<Mounted> {
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
        "SQLIOSIM_REQUIRE_LOOP is set: {why}"
    );
    eprintln!("skipped: {why}");
    None
}

fn ok(cmd: &mut Command) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        other => Err(format!("{cmd:?}: {other:?}")),
    }
}

/// Attaches an image of `size_mb` with `sector` -byte logical sectors and direct I/O on.
fn attach(image: &Path, sector: u32) -> Result<String, String> {
    let _one = LOSETUP.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on", "--sector-size"])
        .arg(sector.to_string())
        .arg(image)
        .output()
        .map_err(|e| format!("losetup: {e}"))?;
    if !out.status.success() {
        return Err(format!("losetup: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn mkfs(fs: &str, dev: &str) -> Command {
    let mut cmd = Command::new(format!("mkfs.{fs}"));
    match fs {
        "ext4" => cmd.arg("-q"),
        "xfs" => cmd.args(["-q", "-f"]),
        _ => cmd.args(["-q", "-f"]),
    };
    cmd.arg(dev);
    cmd
}

/// A fresh `fs` over a loop device with `sector`-byte sectors, mounted in a temporary dir.
fn loop_fs(fs: &str, sector: u32, size_mb: u64) -> Option<Mounted> {
    let image_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let image = image_dir.path().join(format!("{fs}-{sector}.img"));
    let f = std::fs::File::create(&image).expect("create image");
    f.set_len(size_mb << 20).expect("size image");
    let dev = match attach(&image, sector) {
        Ok(dev) => dev,
        Err(why) => return cannot(format!("cannot attach a loop device here: {why}")),
    };
    let mnt = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("mount point");
    let cell = Mounted {
        mnt,
        dev: Some(dev.clone()),
        _image_dir: image_dir,
    };
    if let Err(why) = ok(&mut mkfs(fs, &dev)) {
        return cannot(format!("cannot make {fs} here: {why}"));
    }
    if let Err(why) = ok(Command::new("mount").arg(&dev).arg(cell.mnt.path())) {
        return cannot(format!("cannot mount {fs} here: {why}"));
    }
    Some(cell)
}

/// A fresh tmpfs mounted in a temporary dir.
fn tmpfs(size_mb: u64) -> Option<Mounted> {
    let image_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let mnt = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("mount point");
    let cell = Mounted {
        mnt,
        dev: None,
        _image_dir: image_dir,
    };
    let size = format!("size={size_mb}m");
    if let Err(why) = ok(Command::new("mount")
        .args(["-t", "tmpfs", "-o", &size, "tmpfs"])
        .arg(cell.mnt.path()))
    {
        return cannot(format!("cannot mount tmpfs here: {why}"));
    }
    Some(cell)
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd`, asserts exit 0 and no error line; returns what it printed.
fn clean(cell: &str, step: &str, cmd: &mut Command) -> String {
    let out = cmd.output().expect("run sqliosim");
    let said = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{cell}: {step} did not end clean:\n{said}"
    );
    assert!(
        !said.contains("ERROR #") && !said.contains("INTEGRITY ERROR"),
        "{cell}: {step} reported a finding:\n{said}"
    );
    said
}

/// One cell: simulation, verify, resume, bench; returns the simulation's output.
fn run_cell(cell: &str, dir: &Path, write_through: bool) -> String {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("config dir");
    let config = small_config(cfg_dir.path(), 1, 3, write_through);
    let run = |extra: &[&str]| {
        let mut cmd = bin();
        cmd.args(["run", "--config"])
            .arg(&config)
            .arg("--dir")
            .arg(dir)
            .args(["--seed", "7"])
            .args(extra);
        cmd
    };
    let first = clean(cell, "the simulation", &mut run(&[]));
    clean(cell, "verify", bin().args(["verify", "--dir"]).arg(dir));
    clean(
        cell,
        "the resumed run",
        &mut run(&["--resume", "--duration", "2"]),
    );
    clean(
        cell,
        "verify after the resume",
        bin().args(["verify", "--dir"]).arg(dir),
    );
    bench_cell(cell, dir);
    first
}

/// A short stamped write bench, then a read bench that checks every block it reads.
fn bench_cell(cell: &str, dir: &Path) {
    let file: PathBuf = dir.join("bench.dat");
    let bench = |rw: &str, verify: bool| {
        let mut cmd = bin();
        cmd.args(["bench", "--file"])
            .arg(&file)
            .args(["--size", "16M", "--block-size", "8K,64K", "--rw", rw])
            .args(["--outstanding", "4", "--duration", "0.5", "--warmup", "0"]);
        if verify {
            cmd.arg("--verify");
        }
        cmd
    };
    clean(cell, "the write bench", &mut bench("write", false));
    clean(cell, "the verifying bench", &mut bench("mix", true));
}

/// The loop cells: `fs` over `sector`-byte sectors, with direct I/O honoured.
fn honoured_cell(fs: &str, sector: u32, write_through: bool) {
    // mkfs.xfs wants 300 MiB at least.
    let Some(m) = loop_fs(fs, sector, 320) else {
        return;
    };
    let cell = format!("{fs} on {sector}-byte sectors");
    let said = run_cell(&cell, m.mnt.path(), write_through);
    assert!(
        !warns_unhonoured(&said),
        "{cell}: direct I/O is honoured here, yet the run said otherwise:\n{said}"
    );
}

#[test]
fn ext4_on_512_byte_sectors() {
    honoured_cell("ext4", 512, false);
}

#[test]
fn ext4_on_4096_byte_sectors() {
    honoured_cell("ext4", 4096, true);
}

#[test]
fn xfs_on_512_byte_sectors() {
    honoured_cell("xfs", 512, true);
}

#[test]
fn xfs_on_4096_byte_sectors() {
    honoured_cell("xfs", 4096, false);
}

/// True when the run said that direct I/O is not honoured where its files are.
fn warns_unhonoured(said: &str) -> bool {
    said.contains("without honouring") || said.contains("not honoured")
}

/// Filesystems that accept O_DIRECT without honouring it: the run warns and stays correct.
fn unhonoured_cell(cell: &str, m: Mounted) {
    let said = run_cell(cell, m.mnt.path(), false);
    assert!(
        warns_unhonoured(&said),
        "{cell}: the run did not warn that direct I/O is not honoured:\n{said}"
    );
}

#[test]
fn btrfs_warns_and_stays_correct() {
    // mkfs.btrfs needs about 114 MiB at least.
    if let Some(m) = loop_fs("btrfs", 4096, 320) {
        unhonoured_cell("btrfs on 4096-byte sectors", m);
    }
}

#[test]
fn tmpfs_warns_and_stays_correct() {
    if let Some(m) = tmpfs(160) {
        unhonoured_cell("tmpfs", m);
    }
}
