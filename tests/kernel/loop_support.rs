//! Loop devices and mounts for tests that need a real block device: a loop device over an
//! image file (with the logical sector size asked for), a filesystem made on it and mounted,
//! each undone on drop. Needs root, losetup and the mkfs tool; without them `None` is returned
//! after saying why, unless SQLIOSIM_REQUIRE_LOOP=1 (as in CI), where the test fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// `losetup -f` picks the first free device: attach one at a time within this process.
static LOSETUP: Mutex<()> = Mutex::new(());

/// Says why a test cannot run here and skips it, or fails it when SQLIOSIM_REQUIRE_LOOP is set.
pub fn skip(why: &str) {
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
        "SQLIOSIM_REQUIRE_LOOP is set: {why}"
    );
    eprintln!("skipped: {why}");
}

/// A loop device over an image file, detached on drop; with a partition table, the node
/// used is its first partition.
pub struct LoopDev {
    /// The loop device (the whole disk).
    dev: PathBuf,
    /// The node a filesystem goes on: the disk, or its partition.
    node: PathBuf,
}

impl LoopDev {
    /// Attaches `image` (`--direct-io` on or off, `--sector-size sector`); `None` after saying
    /// why when this machine does not allow it.
    pub fn attach(image: &Path, direct_io: bool, sector: u32) -> Option<LoopDev> {
        Self::attach_scan(image, direct_io, sector, false)
    }

    /// [`LoopDev::attach`], with the kernel scanning for partitions (`-P`) when `partscan`.
    fn attach_scan(image: &Path, direct_io: bool, sector: u32, partscan: bool) -> Option<LoopDev> {
        let _one = LOSETUP.lock().unwrap_or_else(|e| e.into_inner());
        let dio = if direct_io { "on" } else { "off" };
        let mut last = String::new();
        // Another process may take the same free device between the lookup and the attach.
        for _ in 0..5 {
            let out = Command::new("losetup")
                .args(["--find", "--show", &format!("--direct-io={dio}")])
                .args(["--sector-size", &sector.to_string()])
                .args(partscan.then_some("-P"))
                .arg(image)
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    let dev = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
                    return Some(LoopDev {
                        node: dev.clone(),
                        dev,
                    });
                }
                other => last = format!("{other:?}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        skip(&format!("cannot attach a loop device here: {last}"));
        None
    }

    /// Attaches `image` as [`LoopDev::attach`] does, writes a DOS partition table on the
    /// device with one partition from `start` (in the device's logical sectors) to its end,
    /// and takes that partition (`/dev/loopNp1`) as the node; `None` after saying why.
    pub fn attach_partitioned(
        image: &Path,
        direct_io: bool,
        sector: u32,
        start: u64,
    ) -> Option<LoopDev> {
        let mut lo = LoopDev::attach_scan(image, direct_io, sector, true)?;
        let table = format!("label: dos\nstart={start}, type=83\n");
        let sfdisk = Command::new("sfdisk")
            .arg("-q")
            .arg(&lo.dev)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().expect("stdin").write_all(table.as_bytes())?;
                c.wait()
            });
        if !sfdisk.is_ok_and(|s| s.success()) {
            skip(&format!(
                "sfdisk on {} failed or is missing",
                lo.dev.display()
            ));
            return None;
        }
        let mut part = lo.dev.clone().into_os_string();
        part.push("p1");
        lo.node = part.into();
        // Kernels built without the DOS partition parser find no partition: then partx adds
        // it (BLKPG) from the table sfdisk wrote.
        if !lo.node.exists() {
            let _ = Command::new("partx").arg("-a").arg(&lo.dev).output();
        }
        // udev may take a moment to make the partition's node.
        for _ in 0..50 {
            if lo.node.exists() {
                return Some(lo);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        skip(&format!("no partition node {} appeared", lo.node.display()));
        None
    }

    /// The node a filesystem goes on, e.g. `/dev/loop3` or `/dev/loop3p1`.
    pub fn path(&self) -> &Path {
        &self.node
    }

    /// The whole loop device, e.g. `/dev/loop3`.
    pub fn disk(&self) -> &Path {
        &self.dev
    }

    /// The device's logical block size as the kernel reports it.
    pub fn logical_block_size(&self) -> Option<u32> {
        let name = self.dev.file_name()?.to_str()?;
        let text =
            std::fs::read_to_string(format!("/sys/block/{name}/queue/logical_block_size")).ok()?;
        text.trim().parse().ok()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A filesystem made on a loop device and mounted; unmounted (then the device detached) on
/// drop.
pub struct Mounted {
    dir: PathBuf,
    // Dropped after the unmount in `drop`: fields drop after the body runs.
    _dev: LoopDev,
}

impl Mounted {
    /// Makes `fs` (`ext4`, `xfs`, …) on `dev` and mounts it on `dir`; `None` after saying why
    /// when the mkfs tool is missing or fails.
    pub fn new(dev: LoopDev, fs: &str, dir: &Path) -> Option<Mounted> {
        let mkfs = format!("mkfs.{fs}");
        let force = if fs == "ext4" { "-F" } else { "-f" };
        let made = Command::new(&mkfs)
            .args([force, "-q"])
            .arg(dev.path())
            .output();
        match made {
            Ok(o) if o.status.success() => {}
            other => {
                skip(&format!("{mkfs} failed or is missing: {other:?}"));
                return None;
            }
        }
        std::fs::create_dir_all(dir).expect("mount point");
        let mounted = Command::new("mount").arg(dev.path()).arg(dir).output();
        match mounted {
            Ok(o) if o.status.success() => Some(Mounted {
                dir: dir.to_path_buf(),
                _dev: dev,
            }),
            other => {
                skip(&format!("cannot mount {fs}: {other:?}"));
                None
            }
        }
    }

    /// The mount point.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The loop device (or its partition) the filesystem is on.
    pub fn device(&self) -> &Path {
        self._dev.path()
    }

    /// The whole loop device beneath it.
    pub fn disk(&self) -> &Path {
        self._dev.disk()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        unmount(&self.dir);
    }
}

/// Unmounts `dir`. A process that used io_uring on the filesystem releases its files only when
/// the kernel has torn its ring down, a moment after it exited, and until then the mount is
/// busy: retry for a few seconds, then detach it lazily so that nothing is left behind.
pub fn unmount(dir: &Path) {
    for _ in 0..50 {
        match Command::new("umount").arg(dir).output() {
            Ok(o) if o.status.success() => return,
            Ok(o) if !String::from_utf8_lossy(&o.stderr).contains("busy") => return,
            _ => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    }
    let _ = Command::new("umount").arg("-l").arg(dir).status();
}

/// True when running as root (losetup and mount need it).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A sparse image file of `bytes` bytes in `dir`.
pub fn sparse_image(dir: &Path, name: &str, bytes: u64) -> PathBuf {
    let path = dir.join(name);
    let f = std::fs::File::create(&path).expect("create image");
    f.set_len(bytes).expect("size image");
    path
}
