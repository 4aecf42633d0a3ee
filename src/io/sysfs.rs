//! The logical block size of the block device under a file, read from sysfs: the fallback
//! when the filesystem reports no statx DIOALIGN.
//!
//! `/sys/dev/block/MAJ:MIN` links to the device's directory; a partition has no `queue/` of its
//! own, so its parent disk's is read. A loop device has its own queue (whose logical block size
//! is what `losetup --sector-size` set). Filesystems with no block device of their own (tmpfs,
//! FUSE, btrfs's anonymous device numbers) have no such entry, and the answer is `None`.

use std::path::Path;

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

fn read_size(dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(dir.join("queue/logical_block_size")).ok()?;
    text.trim()
        .parse()
        .ok()
        .filter(|&n: &u32| n.is_power_of_two())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }
}
