//! Whether a block device is in use, so that a capacity run never writes one, even with
//! `--force` (which means "overwrite what is on this idle device"): mounted, holding a mounted
//! partition, active swap, a member of an md/dm/LVM stack, the backing device of a loop device,
//! or held open exclusively by another program. The one answer every path that may write a device asks (`bench`, `--verify`,
//! `run --bench`, `sqlio`, `diskspd`: they all prepare their targets in `bench::run`).
//!
//! The named reasons come first, since they say what to undo; the exclusive open (`O_EXCL` on
//! a block device fails with EBUSY while the kernel has it claimed, by a mount, swap, md, dm or
//! another `O_EXCL` opener) catches whatever they miss. A loop device over a block device
//! (`losetup /dev/loop1 /dev/sdb`, as kubelet maps a raw block volume) neither claims it nor
//! appears among its holders, so it is looked for by its `loop/backing_file` in sysfs; so is a
//! regular file that is a loop device's backing file (an image attached and mounted), whose
//! bytes are that device's. The exclusive open is then kept for the
//! whole run, so that nothing can mount or claim the device while it is being written.

use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::report::facts::blockdev::parse_mountinfo_line;

/// What uses a block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceUse {
    /// The device (or one of its partitions, `part`) holds a mounted filesystem.
    Mounted {
        /// The partition that is mounted, when it is not the device itself.
        part: Option<String>,
        /// Where it is mounted.
        point: String,
    },
    /// The device (or one of its partitions) is active swap.
    Swap {
        /// The partition, when it is not the device itself.
        part: Option<String>,
    },
    /// The device (or one of its partitions) is a member of an md, dm or LVM device.
    Held {
        /// The partition, when it is not the device itself.
        part: Option<String>,
        /// The holder's name in sysfs (`dm-0`, `md127`).
        holder: String,
    },
    /// The device (or one of its partitions) is the backing file of a loop device.
    Backing {
        /// The partition, when it is not the device itself.
        part: Option<String>,
        /// The loop device's name (`loop1`).
        loop_dev: String,
    },
    /// A regular file that is the backing file of a loop device: the device's media.
    BackingFile {
        /// The loop device's name (`loop1`).
        loop_dev: String,
    },
    /// Opening it with `O_EXCL` failed with EBUSY: another program has it claimed.
    Busy,
}

impl std::fmt::Display for DeviceUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let part = |p: &Option<String>| match p {
            Some(p) => format!("its partition /dev/{p} is "),
            None => "it is ".to_string(),
        };
        match self {
            DeviceUse::Mounted { part: p, point } => write!(f, "{}mounted on {point}", part(p)),
            DeviceUse::Swap { part: p } => write!(f, "{}in use as swap (/proc/swaps)", part(p)),
            DeviceUse::Held { part: p, holder } => write!(
                f,
                "{}a member of /dev/{holder} (md, dm or LVM: its holders/ in sysfs)",
                part(p)
            ),
            DeviceUse::Backing { part: p, loop_dev } => write!(
                f,
                "{}the backing device of /dev/{loop_dev} (losetup -l)",
                part(p)
            ),
            DeviceUse::BackingFile { loop_dev } => write!(
                f,
                "it is the backing file of /dev/{loop_dev} (losetup -l): writing it writes that device"
            ),
            DeviceUse::Busy => write!(
                f,
                "another program holds it open exclusively (opening it with O_EXCL failed with EBUSY)"
            ),
        }
    }
}

/// An exclusive open of a device, held while a run writes it.
#[derive(Debug)]
pub struct Claim {
    _file: File,
    /// The device claimed (`st_rdev`): every later open of the target must reach this one.
    pub rdev: u64,
}

/// Claims the block device at `path` for writing: `Err` with what uses it, else an exclusive
/// open to hold for the run. Only the device node itself is claimed (`O_NOFOLLOW`: a name
/// turned into a symlink since [`device_behind_link`] is left unclaimed, and the run's own
/// open then refuses it, since it reaches a device none was claimed for). Errors opening it
/// other than EBUSY are left to the run's own open, which names them.
pub fn claim(path: &Path) -> Result<Option<Claim>, DeviceUse> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(None);
    };
    if meta.file_type().is_file() {
        return match loop_over_file(meta.dev(), meta.ino()) {
            Some(loop_dev) => Err(DeviceUse::BackingFile { loop_dev }),
            None => Ok(None),
        };
    }
    if !meta.file_type().is_block_device() {
        return Ok(None);
    }
    let rdev = meta.rdev();
    if let Some(u) = named_use(rustix::fs::major(rdev), rustix::fs::minor(rdev)) {
        return Err(u);
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_NOFOLLOW)
        .open(path)
    {
        // The descriptor says which device was claimed, whatever the name reaches by now.
        Ok(file) => match file.metadata() {
            Ok(m) if m.file_type().is_block_device() && m.rdev() == rdev => {
                Ok(Some(Claim { _file: file, rdev }))
            }
            _ => Ok(None),
        },
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(DeviceUse::Busy),
        Err(_) => Ok(None),
    }
}

/// The block device `path` leads to when `path` is a symlink to one, for a run that may write
/// it to refuse (`BenchError::DeviceThroughLink`): a device is written only when named by its
/// own node, `--force` or not, since a link in a shared directory may be another user's
/// (`ln -s /dev/loop0 /tmp/s/bench.dat`). A read run may still name a device through a link
/// (`/dev/disk/by-id/...`).
pub fn device_behind_link(path: &Path) -> Option<PathBuf> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let to_device = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    if !(is_link && to_device) {
        return None;
    }
    Some(std::fs::canonicalize(path).unwrap_or_else(|_| {
        std::fs::read_link(path).unwrap_or_else(|_| PathBuf::from("a block device"))
    }))
}

/// What sysfs, the mount table and the swap table say uses device `major:minor` or one of its
/// partitions.
pub fn named_use(major: u32, minor: u32) -> Option<DeviceUse> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let backed = loop_backings();
    for (part, dev) in device_and_partitions(major, minor) {
        if let Some(point) = mount_point(&mounts, dev) {
            return Some(DeviceUse::Mounted { part, point });
        }
        if is_swap(&swaps, dev) {
            return Some(DeviceUse::Swap { part });
        }
        if let Some(holder) = holders(dev).into_iter().next() {
            return Some(DeviceUse::Held { part, holder });
        }
        if let Some((loop_dev, _)) = backed.iter().find(|(_, d)| *d == dev) {
            let loop_dev = loop_dev.clone();
            return Some(DeviceUse::Backing { part, loop_dev });
        }
    }
    None
}

/// The loop device (`loop1`) whose backing file is the regular file at `path`, if one is
/// attached: `run` refuses such a file as a data file, as a capacity run refuses to write it.
pub fn loop_backed_by(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    meta.file_type()
        .is_file()
        .then(|| loop_over_file(meta.dev(), meta.ino()))?
}

/// The loop device whose backing file is the file `dev`:`ino`, if one is attached.
fn loop_over_file(dev: u64, ino: u64) -> Option<String> {
    loop_backing_paths().into_iter().find_map(|(name, path)| {
        let m = std::fs::metadata(&path).ok()?;
        (m.file_type().is_file() && m.dev() == dev && m.ino() == ino).then_some(name)
    })
}

/// Each attached loop device's name and the path of its backing file, as sysfs gives it.
fn loop_backing_paths() -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            Some((name, text.trim_end_matches('\n').to_string()))
        })
        .collect()
}

/// Each attached loop device whose backing file is a block device node: its name and the
/// node's number (a loop device over a regular file is not a device's use; the filesystem
/// holding that file is mounted, and found so).
fn loop_backings() -> Vec<(String, (u32, u32))> {
    loop_backing_paths()
        .into_iter()
        .filter_map(|(name, path)| Some((name, node_number(&path)?)))
        .collect()
}

/// The device itself (`None`), then each partition by name, with their numbers.
fn device_and_partitions(major: u32, minor: u32) -> Vec<(Option<String>, (u32, u32))> {
    let mut all = vec![(None, (major, minor))];
    let Some(dir) = sys_dir((major, minor)) else {
        return all;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return all;
    };
    for e in entries.flatten() {
        let sub = e.path();
        if !sub.join("partition").exists() {
            continue;
        }
        let dev = std::fs::read_to_string(sub.join("dev"))
            .ok()
            .and_then(|t| parse_dev(t.trim()));
        if let Some(dev) = dev {
            all.push((Some(e.file_name().to_string_lossy().into_owned()), dev));
        }
    }
    all
}

fn sys_dir((major, minor): (u32, u32)) -> Option<PathBuf> {
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()
}

fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The number of the block device node at `source`, if it is one.
fn node_number(source: &str) -> Option<(u32, u32)> {
    let m = std::fs::metadata(source).ok()?;
    m.file_type()
        .is_block_device()
        .then(|| (rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev())))
}

/// Where `dev` is mounted, by the mount's device number or (btrfs, whose mounts have anonymous
/// numbers) by its source node.
fn mount_point(mountinfo: &str, dev: (u32, u32)) -> Option<String> {
    mountinfo
        .lines()
        .filter_map(parse_mountinfo_line)
        .find(|m| {
            parse_dev(&m.major_minor) == Some(dev)
                || (m.source.starts_with('/') && node_number(&m.source) == Some(dev))
        })
        .map(|m| m.mount_point)
}

fn is_swap(swaps: &str, dev: (u32, u32)) -> bool {
    swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .any(|name| node_number(name) == Some(dev))
}

/// Names in `holders/` of `dev` (the devices built on it).
fn holders(dev: (u32, u32)) -> Vec<String> {
    let Some(dir) = sys_dir(dev) else {
        return Vec::new();
    };
    std::fs::read_dir(dir.join("holders"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_filesystem_device_is_mounted() {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata("/") else {
            return;
        };
        let dev = meta.dev();
        let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        if major == 0 {
            return; // overlay or btrfs: no device number to look up
        }
        let info = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        assert!(
            mount_point(&info, (major, minor)).is_some(),
            "{major}:{minor}"
        );
        assert!(matches!(
            named_use(major, minor),
            Some(DeviceUse::Mounted { .. })
        ));
    }

    #[test]
    fn reasons_name_the_partition_and_what_uses_it() {
        let u = DeviceUse::Mounted {
            part: Some("loop3p1".into()),
            point: "/mnt/x".into(),
        };
        assert_eq!(
            u.to_string(),
            "its partition /dev/loop3p1 is mounted on /mnt/x"
        );
        let h = DeviceUse::Held {
            part: None,
            holder: "dm-0".into(),
        };
        assert!(h.to_string().starts_with("it is a member of /dev/dm-0"));
        let b = DeviceUse::Backing {
            part: Some("sdb1".into()),
            loop_dev: "loop4".into(),
        };
        assert_eq!(
            b.to_string(),
            "its partition /dev/sdb1 is the backing device of /dev/loop4 (losetup -l)"
        );
    }

    #[test]
    fn a_regular_file_is_not_claimed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").expect("write");
        assert!(matches!(claim(&f), Ok(None)));
    }
}
