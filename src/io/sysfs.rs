//! The logical block size of the block device under a file, read from sysfs: the fallback
//! when the filesystem reports no statx DIOALIGN.
//!
//! `/sys/dev/block/MAJ:MIN` links to the device's directory; a partition has no `queue/` of its
//! own, so its parent disk's is read. A loop device has its own queue (whose logical block size
//! is what `losetup --sector-size` set). btrfs gives its files anonymous device numbers
//! (major 0); the device it is mounted from is then the source, in /proc/self/mountinfo, of the
//! mount holding the path.
//! Filesystems with no block device at all (tmpfs, FUSE) have none, and the answer is `None`.

use std::path::Path;

/// Logical block size of the block device of a file at `path` whose device number is
/// `major:minor`, if sysfs knows it.
pub fn device_block_size(major: u32, minor: u32, path: &Path) -> Option<u32> {
    let (major, minor) = block_device(major, minor, path)?;
    logical_block_size(major, minor)
}

/// Physical block size of the block device of a file at `path` whose device number is
/// `major:minor`, if sysfs knows it (4096 on a 512e disk).
pub fn device_physical_size(major: u32, minor: u32, path: &Path) -> Option<u32> {
    let (major, minor) = block_device(major, minor, path)?;
    let dir =
        std::fs::canonicalize(Path::new("/sys/dev/block").join(format!("{major}:{minor}"))).ok()?;
    let own = read_queue(&dir, "physical_block_size");
    own.or_else(|| {
        dir.parent()
            .and_then(|d| read_queue(d, "physical_block_size"))
    })
}

/// The block device under a file at `path` whose device number is `major:minor`: that number
/// itself, or for an anonymous one (major 0, btrfs) the device the mount holding `path` is
/// mounted from; `None` when there is no block device (tmpfs, FUSE).
pub fn block_device(major: u32, minor: u32, path: &Path) -> Option<(u32, u32)> {
    if major != 0 {
        return Some((major, minor));
    }
    mounted_from(path).filter(|(major, _)| *major != 0)
}

/// What a block device `rdev` says of direct I/O: (description, honoured, logical block
/// size). A loop device whose backing file is read through the page cache
/// (`/sys/dev/block/M:m/loop/dio` is 0) does not honour O_DIRECT; any other block device does.
pub fn device_direct_io(rdev: u64) -> (&'static str, bool, Option<u32>) {
    let (major, minor) = (rustix::fs::major(rdev), rustix::fs::minor(rdev));
    let loop_dio = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/loop/dio")).ok();
    let (name, honoured) = match loop_dio.as_deref().map(str::trim) {
        Some("0") => (
            "a loop device that reads its backing file through the page cache (losetup --direct-io=on avoids it)",
            false,
        ),
        Some(_) => ("loop device with direct I/O", true),
        None => ("block device", true),
    };
    (name, honoured, logical_block_size(major, minor))
}

/// Logical block size of block device `major:minor`, if sysfs knows it.
pub fn logical_block_size(major: u32, minor: u32) -> Option<u32> {
    if major == 0 {
        return None;
    }
    let dev = Path::new("/sys/dev/block").join(format!("{major}:{minor}"));
    let dir = std::fs::canonicalize(dev).ok()?;
    let own = read_size(&dir);
    own.or_else(|| dir.parent().and_then(read_size))
}

/// The block device the mount holding `path` is mounted from (the source, in
/// /proc/self/mountinfo, of the longest mount point above it, when that is a device node).
fn mounted_from(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::fs::MetadataExt;
    let path = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let source = info
        .lines()
        .filter_map(|line| {
            let point = Path::new(line.split(' ').nth(4)?);
            let source = line.split(" - ").nth(1)?.split(' ').nth(1)?;
            path.starts_with(point)
                .then_some((point.as_os_str().len(), source))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, source)| source.to_string())?;
    let meta = std::fs::metadata(&source).ok()?;
    meta.file_type().is_block_device().then(|| {
        let rdev = meta.rdev();
        (libc::major(rdev), libc::minor(rdev))
    })
}

fn read_size(dir: &Path) -> Option<u32> {
    read_queue(dir, "logical_block_size")
}

/// The block device under a file, as sysfs says it at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drive {
    /// The device's name (`sda`, `vda1`, `loop3`).
    pub name: String,
    /// Logical sector size, bytes.
    pub logical: u32,
    /// Physical sector size, bytes.
    pub physical: Option<u32>,
    /// `queue/write_cache` says `write back` (true) or `write through` (false).
    pub write_back: Option<bool>,
    /// The fields of its `stat` file, in order (Documentation/block/stat.rst: reads, read
    /// merges, sectors read, read ms, writes, write merges, sectors written, write ms, in
    /// flight, io ms, …; sectors of 512 bytes).
    pub stat: Vec<u64>,
}

/// The block device under the file at `path` (a partition's queue is its disk's), or `None`
/// where there is none (tmpfs, FUSE) or sysfs cannot be read.
pub fn drive_of(path: &Path) -> Option<Drive> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let dev = if meta.file_type().is_file() || meta.is_dir() {
        meta.dev()
    } else {
        meta.rdev()
    };
    let (major, minor) = block_device(libc::major(dev), libc::minor(dev), path)?;
    let dev = Path::new("/sys/dev/block").join(format!("{major}:{minor}"));
    let dir = std::fs::canonicalize(dev).ok()?;
    let queue_dir = match dir.join("queue").is_dir() {
        true => dir.clone(),
        false => dir.parent()?.to_path_buf(),
    };
    let write_back = std::fs::read_to_string(queue_dir.join("queue/write_cache"))
        .ok()
        .map(|t| t.trim() == "write back");
    let stat = std::fs::read_to_string(dir.join("stat"))
        .map(|t| {
            t.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    Some(Drive {
        name: dir.file_name()?.to_string_lossy().into_owned(),
        logical: read_size(&queue_dir)?,
        physical: read_queue(&queue_dir, "physical_block_size"),
        write_back,
        stat,
    })
}

/// A power-of-two size in `dir/queue/name`.
fn read_queue(dir: &Path, name: &str) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join("queue").join(name)).ok()?;
    text.trim()
        .parse()
        .ok()
        .filter(|&n: &u32| n.is_power_of_two())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drive_under_a_file_is_the_one_its_device_number_names() {
        let Ok(dir) = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")) else {
            return;
        };
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").expect("write");
        // tmpfs and FUSE have no block device: nothing to say, and nothing is invented.
        let Some(d) = drive_of(&file) else {
            return;
        };
        assert!(d.logical >= 512 && d.logical.is_power_of_two(), "{d:?}");
        assert!(d.physical.is_none_or(|p| p >= d.logical), "{d:?}");
        assert!(d.stat.len() >= 11, "{d:?}");
        assert!(!d.name.is_empty() && !d.name.contains('/'), "{d:?}");
    }

    #[test]
    fn no_device_for_anonymous_numbers() {
        assert_eq!(logical_block_size(0, 42), None);
    }

    #[test]
    fn the_root_device_has_a_power_of_two_block() {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata("/") else {
            return;
        };
        let dev = meta.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        if let Some(n) = logical_block_size(major, minor) {
            assert!(n >= 512 && n.is_power_of_two(), "{n}");
            // The mount table leads to the same device (the path taken for btrfs).
            assert_eq!(device_block_size(0, 0, Path::new("/")), Some(n));
        }
    }
}
