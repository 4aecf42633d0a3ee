//! Device nodes are never written, replaced or invented (issue #20 §1), through the binary:
//! a block device (or a FIFO) named as a data file is refused with exit 2 and kept; no file is
//! ever created in /dev; `bench --force` (and `--verify --force`, `run --bench "… --force"`,
//! `diskspd`) refuses a device that is mounted, whose partition is mounted, or that is active
//! swap, or that another program holds open with O_EXCL, naming the mount point or the use,
//! without telling the user to add --force, and the filesystem is intact after (`e2fsck -fn`).
//!
//! The loop-device cases need root, losetup, mkfs.ext4, sfdisk and mkswap; without them they
//! print why and pass, unless SQLIOSIM_REQUIRE_LOOP=1 (as in CI), where they fail instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::loop_support::{is_root, skip, unmount, LoopDev, Mounted};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sqliosim"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_exit_2(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

/// A configuration whose data file is `data` (an absolute path), log in `dir`.
fn config(dir: &Path, data: &Path) -> PathBuf {
    let text = format!(
        "[CONFIG]\nTestCycles=1\nTestCycleDuration=1\nMaxMemoryMB=4\n\
         [File1]\nFileName={}\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName={}\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n",
        data.display(),
        dir.join("t.ldx").display()
    );
    let path = dir.join("dev.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

fn run_with_data_file(dir: &Path, data: &Path) -> Output {
    bin()
        .args(["run", "--config"])
        .arg(config(dir, data))
        .args(["--duration", "1"])
        .arg("--log")
        .arg(dir.join("t.log.xml"))
        .output()
        .expect("run")
}

fn rdev(path: &Path) -> Option<u64> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| m.rdev())
}

#[test]
fn a_fifo_named_as_a_data_file_is_refused_and_kept() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let fifo = dir.path().join("t.mdx");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("mkfifo");
    let err = assert_exit_2(&run_with_data_file(dir.path(), &fifo));
    assert!(err.contains("FIFO") && err.contains("t.mdx"), "{err}");
    use std::os::unix::fs::FileTypeExt;
    let kept = std::fs::symlink_metadata(&fifo).expect("the FIFO is still there");
    assert!(kept.file_type().is_fifo());
    assert!(
        !dir.path().join("t.mdx.lock").exists(),
        "nothing was created beside it"
    );
}

#[test]
fn bench_on_a_missing_device_node_creates_nothing_in_dev() {
    let missing = Path::new("/dev/sqliosim-no-such-device");
    assert!(!missing.exists());
    for args in [
        &[
            "bench",
            "--file",
            "/dev/sqliosim-no-such-device",
            "--duration",
            "0.1",
        ][..],
        &[
            "bench",
            "--file",
            "/dev/sqliosim-no-such-device",
            "--rw",
            "write",
            "--force",
        ][..],
        &[
            "diskspd",
            "-c8M",
            "-d1",
            "-w100",
            "/dev/sqliosim-no-such-device",
        ][..],
    ] {
        let err = assert_exit_2(&bin().args(args).output().expect("bench"));
        assert!(
            err.contains("/dev/sqliosim-no-such-device")
                && err.contains("never creates files under /dev"),
            "{args:?}: {err}"
        );
        assert!(!missing.exists(), "{args:?} created {}", missing.display());
    }
}

#[test]
fn a_block_device_named_as_a_data_file_is_refused_and_kept() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = crate::loop_support::sparse_image(dir.path(), "d.img", 32 << 20);
    let Some(lo) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let dev = lo.path().to_path_buf();
    let number = rdev(&dev).expect("a block device");
    for delete in ["TRUE", "FALSE"] {
        let cfg = config(dir.path(), &dev);
        let text = std::fs::read_to_string(&cfg).expect("config");
        std::fs::write(
            &cfg,
            text.replace(
                "[CONFIG]\n",
                &format!("[CONFIG]\nDeleteFilesAtStartup={delete}\n"),
            ),
        )
        .expect("config");
        let out = bin()
            .args(["run", "--config"])
            .arg(&cfg)
            .args(["--duration", "1", "--log"])
            .arg(dir.path().join("t.log.xml"))
            .output()
            .expect("run");
        let err = assert_exit_2(&out);
        assert!(
            err.contains("is a block device")
                && err.contains("--dir")
                && err.contains("sqliosim bench --file"),
            "{err}"
        );
        assert_eq!(rdev(&dev), Some(number), "the device node was replaced");
    }
    let mut lock = dev.clone().into_os_string();
    lock.push(".lock");
    assert!(
        !Path::new(&lock).exists(),
        "a lock file was created in /dev"
    );
    assert!(
        !Path::new("/dev/sqliosim.journal").exists(),
        "a journal was created in /dev"
    );
}

/// The ways a user asks to write a device with --force.
fn forced_writes(dev: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&[
            "bench",
            "--file",
            dev,
            "--rw",
            "write",
            "--force",
            "--duration",
            "0.2",
            "--warmup",
            "0",
        ]),
        v(&[
            "bench",
            "--file",
            dev,
            "--verify",
            "--force",
            "--duration",
            "0.2",
            "--warmup",
            "0",
        ]),
        v(&["diskspd", "-d1", "-w100", "-Sh", "--force", dev]),
    ]
}

/// Asserts every forced write of `dev` is refused with `want` in the message and no advice to
/// add --force.
fn assert_all_refused(dev: &str, want: &[&str], workdir: &Path) {
    for args in forced_writes(dev) {
        let err = assert_exit_2(&bin().args(&args).output().expect("bench"));
        assert!(
            err.contains(dev) && err.contains("in use"),
            "{args:?}: {err}"
        );
        for w in want {
            assert!(err.contains(w), "{args:?}: no `{w}` in: {err}");
        }
        assert!(
            !err.contains("pass --force"),
            "{args:?} advises --force: {err}"
        );
    }
    // The same through a simulation's --bench.
    let out = bin()
        .args(["run", "--config"])
        .arg(config(workdir, &workdir.join("t.mdx")))
        .args(["--duration", "1", "--log"])
        .arg(workdir.join("t.log.xml"))
        .arg("--bench")
        .arg(format!("--file {dev} --rw write --force --duration 0.2"))
        .output()
        .expect("run --bench");
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("in use"), "run --bench: {err}");
}

/// A 64 MB image `disk.img` in `dir`, attached as a loop device, with ext4 made and mounted
/// on `dir/mnt` and a file written there: the image, the loop device's name and the mount
/// (which detaches the device when dropped). `None` after saying why when it cannot be made.
fn mounted_image(dir: &Path) -> Option<(PathBuf, String, Mounted)> {
    let img = crate::loop_support::sparse_image(dir, "disk.img", 64 << 20);
    let lo = LoopDev::attach(&img, false, 512)?;
    let lo_name = lo.path().display().to_string();
    let m = Mounted::new(lo, "ext4", &dir.join("mnt"))?;
    std::fs::write(m.dir().join("kept"), b"a file on the filesystem").expect("write");
    Some((img, lo_name, m))
}

/// Attaches `img` again, once its mount is gone, and checks its ext4 untouched.
fn fsck_image(img: &Path) {
    let lo = LoopDev::attach(img, false, 512).expect("attach again");
    fsck_clean(lo.path());
}

fn fsck_clean(dev: &Path) {
    let out = Command::new("e2fsck")
        .arg("-fn")
        .arg(dev)
        .output()
        .expect("e2fsck");
    assert!(
        out.status.success(),
        "e2fsck -fn {}: {}{}",
        dev.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_mounted_filesystem_is_never_written_even_with_force() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = crate::loop_support::sparse_image(dir.path(), "fs.img", 64 << 20);
    let Some(lo) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let mnt = dir.path().join("mnt");
    let Some(m) = Mounted::new(lo, "ext4", &mnt) else {
        return;
    };
    let dev = m.device().to_str().expect("utf-8").to_string();
    assert_all_refused(
        &dev,
        &[&format!("mounted on {}", mnt.display())],
        dir.path(),
    );
    unmount(&mnt);
    fsck_clean(Path::new(&dev));
}

#[test]
fn a_disk_whose_partition_is_mounted_is_never_written() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = crate::loop_support::sparse_image(dir.path(), "disk.img", 64 << 20);
    let Some(disk) = LoopDev::attach_partitioned(&img, false, 512, 2048) else {
        return;
    };
    let part = disk.path().to_path_buf();
    let made = Command::new("mkfs.ext4")
        .args(["-F", "-q"])
        .arg(&part)
        .output();
    if !made.is_ok_and(|o| o.status.success()) {
        return skip(&format!("mkfs.ext4 on {} failed", part.display()));
    }
    let mnt = dir.path().join("mnt");
    std::fs::create_dir_all(&mnt).expect("mount point");
    let mounted = Command::new("mount")
        .arg(&part)
        .arg(&mnt)
        .output()
        .expect("mount");
    assert!(mounted.status.success(), "mount: {mounted:?}");
    let disk_path = disk.disk().to_str().expect("utf-8").to_string();
    let name = part
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert_all_refused(
        &disk_path,
        &[&format!(
            "partition /dev/{name} is mounted on {}",
            mnt.display()
        )],
        dir.path(),
    );
    unmount(&mnt);
    fsck_clean(&part);
}

/// A loop device attached over another (`losetup /dev/loopB /dev/loopA`, as kubelet maps a
/// raw block volume, or an image reached at an offset of a disk) and mounted: the lower device
/// is in use, though nothing mounts it, nothing holds it open with `O_EXCL` and sysfs lists no
/// holder. Before, `bench --file /dev/loopA --rw write --force` wrote it, exit 0, and the
/// mounted filesystem above was destroyed (`e2fsck -fn` aborted).
#[test]
fn a_device_backing_a_mounted_loop_device_is_never_written() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = crate::loop_support::sparse_image(dir.path(), "lower.img", 64 << 20);
    // Declared first, so dropped last: the upper device is unmounted and detached before it.
    let Some(lower) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let Some(upper) = LoopDev::attach(lower.path(), false, 512) else {
        return;
    };
    let upper_name = upper.path().display().to_string();
    let mnt = dir.path().join("mnt");
    let Some(m) = Mounted::new(upper, "ext4", &mnt) else {
        return;
    };
    std::fs::write(m.dir().join("kept"), b"a file on the filesystem above").expect("write");
    let dev = lower.path().to_str().expect("utf-8").to_string();
    assert_all_refused(
        &dev,
        &[&format!("backing device of {upper_name}")],
        dir.path(),
    );
    drop(m);
    let upper = LoopDev::attach(lower.path(), false, 512).expect("attach again");
    fsck_clean(upper.path());
}

/// An image file attached as a loop device whose filesystem is mounted (a VM's disk image, an
/// `losetup -f --show disk.img` left attached): the file is the device's media, in use as the
/// device is. Before, `bench --file disk.img --rw write --force` wrote it, exit 0, and the
/// mounted filesystem was destroyed (`e2fsck -fn`: "Bad magic number in super-block").
#[test]
fn a_file_backing_a_mounted_loop_device_is_never_written() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some((img, lo_name, m)) = mounted_image(dir.path()) else {
        return;
    };
    let file = img.to_str().expect("utf-8").to_string();
    assert_all_refused(&file, &[&format!("backing file of {lo_name}")], dir.path());
    drop(m);
    fsck_image(&img);
}

/// The same image named as a data file (`FileName=disk.img`) of `run --force`: refused, exit 2,
/// with `DeleteFilesAtStartup` TRUE (which would delete the image's name) or FALSE (which would
/// write it in place). Before, with FALSE, the run wrote the image under the mounted
/// filesystem, cut it to 16 MB, reported a false `lost_write` (the filesystem wrote over the
/// run's pages) and left the filesystem destroyed; with TRUE it deleted the image's name.
#[test]
fn a_file_backing_a_mounted_loop_device_is_never_a_data_file() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some((img, lo_name, m)) = mounted_image(dir.path()) else {
        return;
    };
    let inode = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).map(|m| (m.ino(), m.len())).ok()
    };
    let before = inode(&img);
    for delete in ["TRUE", "FALSE"] {
        let cfg = config(dir.path(), &img);
        let text = std::fs::read_to_string(&cfg).expect("config");
        let text = text.replace(
            "[CONFIG]\n",
            &format!("[CONFIG]\nDeleteFilesAtStartup={delete}\n"),
        );
        std::fs::write(&cfg, text).expect("config");
        let out = bin()
            .args(["run", "--force", "--config"])
            .arg(&cfg)
            .args(["--duration", "1", "--log"])
            .arg(dir.path().join("t.log.xml"))
            .output()
            .expect("run");
        let err = assert_exit_2(&out);
        assert!(
            err.contains(&format!("backing file of {lo_name}")),
            "DeleteFilesAtStartup={delete}: {err}"
        );
        assert_eq!(
            inode(&img),
            before,
            "DeleteFilesAtStartup={delete}: the image"
        );
    }
    drop(m);
    fsck_image(&img);
}

#[test]
fn active_swap_is_never_written() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = crate::loop_support::sparse_image(dir.path(), "swap.img", 32 << 20);
    let Some(lo) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let dev = lo.path().to_str().expect("utf-8").to_string();
    let made = Command::new("mkswap").arg(&dev).output();
    if !made.is_ok_and(|o| o.status.success()) {
        return skip("mkswap failed or is missing");
    }
    let on = Command::new("swapon").arg(&dev).output().expect("swapon");
    if !on.status.success() {
        // Some kernels and containers refuse swap on a loop device: nothing to test then.
        eprintln!(
            "skipped: swapon {dev} refused: {}",
            String::from_utf8_lossy(&on.stderr)
        );
        return;
    }
    // The swap header page; the kernel may write swapped pages to the rest at any time.
    let header = || std::fs::read(&dev).expect("read the device")[..4096].to_vec();
    let before = header();
    let result = std::panic::catch_unwind(|| assert_all_refused(&dev, &["swap"], dir.path()));
    let _ = Command::new("swapoff").arg(&dev).status();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
    assert!(header() == before, "the swap header was written");
}

#[test]
fn a_device_another_program_holds_exclusively_is_never_written() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let img = crate::loop_support::sparse_image(dir.path(), "held.img", 32 << 20);
    let Some(lo) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let dev = lo.path().to_str().expect("utf-8").to_string();
    // Another program claims the device as mkfs or a database would: O_EXCL, held open.
    let holder = Command::new("python3")
        .args([
            "-c",
            "import os, sys; os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); print('held', flush=True); sys.stdin.read()",
            &dev,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let Ok(mut holder) = holder else {
        return skip("python3 is missing");
    };
    let mut line = String::new();
    use std::io::BufRead;
    let mut out = std::io::BufReader::new(holder.stdout.take().expect("stdout"));
    out.read_line(&mut line).expect("read");
    assert_eq!(line.trim(), "held");
    let result = std::panic::catch_unwind(|| assert_all_refused(&dev, &["O_EXCL"], dir.path()));
    drop(holder.stdin.take());
    let _ = holder.wait();
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// A data file copied onto a device (`dd` to a spare disk, then `verify --file /dev/…`):
/// verify reads it read-only and checks every page. A block device's metadata says 0 bytes,
/// and verify said "0 pages checked … CLEAN" without reading a page (a pass that checked
/// nothing); now the device's size is where its end is.
#[test]
fn verify_of_a_device_holding_a_data_file_checks_every_page() {
    if !is_root() {
        return skip("not root: no loop device");
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = dir.path().join("t.mdx");
    let out = run_with_data_file(dir.path(), &data);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let Some(lo) = LoopDev::attach(&data, false, 512) else {
        return;
    };
    let out = bin()
        .args(["verify", "--no-journal", "--file"])
        .arg(lo.path())
        .output()
        .expect("verify");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    // 8 MB: 1024 pages, the header page not counted.
    assert!(text.contains(": 1023 pages checked"), "{text}");
    let mut lock = lo.path().to_path_buf().into_os_string();
    lock.push(".lock");
    assert!(
        !Path::new(&lock).exists(),
        "a lock file was created in /dev"
    );
}
