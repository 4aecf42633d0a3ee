//! The device LBA of a finding's page: FIEMAP ([`crate::io::fiemap`]) maps the page's file
//! offset to an offset on the filesystem's block device, sysfs says which device that is,
//! where its partition starts on the disk (`/sys/class/block/DEV/start`, 512-byte sectors)
//! and the disk's logical sector size. LBA = (start × 512 + device offset) / sector size.
//!
//! Where the answer would be wrong it is not given: tmpfs and FUSE (no block device or no
//! FIEMAP), a hole, an unwritten or delayed extent, compressed or inline data, btrfs (whose
//! FIEMAP gives its own logical addresses), a refused ioctl. The note says which, in words.
//! A device-mapper or md device is named as the device, the LBA on it, and the note says the
//! disks beneath are not resolved.

use std::path::Path;

use crate::findings::{DeviceLocation, LbaPiece};
use crate::io::fiemap::{self, Extent};
use crate::io::safefile::{self, Use};
use crate::report::facts::read_opt;

/// btrfs's statfs magic.
const BTRFS_MAGIC: u32 = 0x9123_683E;

/// Where `length` bytes of `path` from `offset` lie on the disk; never fails, the note says
/// what is not known.
pub fn locate(path: &Path, offset: u64, length: u64) -> DeviceLocation {
    let unknown = |why: String| DeviceLocation {
        note: Some(why),
        ..DeviceLocation::default()
    };
    if std::fs::symlink_metadata(path).is_err() {
        return unknown(format!("{} no longer exists", path.display()));
    }
    let file = match safefile::open_existing(path, Use::Input) {
        Ok(Some(f)) => f,
        Ok(None) => return unknown(format!("{} no longer exists", path.display())),
        Err(e) => return unknown(format!("cannot open {}: {e}", path.display())),
    };
    let Ok(st) = rustix::fs::fstat(&file) else {
        return unknown(format!("cannot stat {}", path.display()));
    };
    if rustix::fs::fstatfs(&file).is_ok_and(|s| s.f_type as u32 == BTRFS_MAGIC) {
        return unknown(
            "btrfs: FIEMAP gives btrfs's own logical addresses, not an offset on a device".into(),
        );
    }
    let (ma, mi) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    let Some((ma, mi)) = crate::io::sysfs::block_device(ma, mi, path) else {
        return unknown(
            "no block device under the file (tmpfs, FUSE or a network filesystem)".into(),
        );
    };
    let mut loc = device_of(ma, mi);
    let extents = match fiemap::extents(&file, offset, length) {
        Ok(v) => v,
        Err(e) => {
            loc.note = Some(format!("the filesystem refused FIEMAP: {e}"));
            return loc;
        }
    };
    let (Some(start), Some(sector)) = (loc.partition_start, loc.logical_sector_size) else {
        loc.note = Some(format!(
            "sysfs does not give the partition start and sector size of {}",
            loc.device
        ));
        return loc;
    };
    match pieces(&extents, offset, length, start, sector) {
        Ok(p) => loc.pieces = p,
        // A full answer may have stopped short of the end: that is no hole.
        Err(_) if extents.len() >= fiemap::MAX_EXTENTS => {
            loc.note = Some(format!(
                "the page lies in more than {} pieces on the device",
                fiemap::MAX_EXTENTS
            ))
        }
        Err(why) => loc.note = Some(why),
    }
    loc
}

/// The device `major:minor` as sysfs names it: its disk, partition start and sector size,
/// and a note for a stacked or loop device.
fn device_of(major: u32, minor: u32) -> DeviceLocation {
    let mut loc = DeviceLocation::default();
    let Ok(dir) = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")) else {
        loc.note = Some(format!("sysfs has no block device {major}:{minor}"));
        return loc;
    };
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    loc.device = name(&dir);
    let disk = match dir.join("partition").exists() {
        true => {
            loc.partition_start = read_opt(dir.join("start")).and_then(|s| s.parse().ok());
            dir.parent().map_or(dir.clone(), Path::to_path_buf)
        }
        false => {
            loc.partition_start = Some(0);
            dir.clone()
        }
    };
    loc.disk = name(&disk);
    loc.logical_sector_size =
        read_opt(disk.join("queue/logical_block_size")).and_then(|s| s.parse().ok());
    loc.note = if dir.join("dm").is_dir() || dir.join("md").is_dir() {
        Some(format!(
            "{} is a device-mapper or md device: the LBA is on it, not on the disks beneath (see lsblk in the system facts)",
            loc.device
        ))
    } else {
        read_opt(dir.join("loop/backing_file")).map(|b| {
            format!(
                "{} is a loop device over {b}: its LBA × sector size is the offset in that file",
                loc.device
            )
        })
    };
    loc
}

/// The pieces of `length` bytes from `offset` among `extents`, with their disk LBAs for a
/// partition starting at `start` (512-byte sectors) on a disk of `sector`-byte logical
/// sectors; the reason in words when any byte has no plain place on the device.
pub fn pieces(
    extents: &[Extent],
    offset: u64,
    length: u64,
    start: u64,
    sector: u64,
) -> Result<Vec<LbaPiece>, String> {
    let end = offset + length;
    let mut at = offset;
    let mut out = Vec::new();
    for e in extents {
        if e.logical + e.length <= at || e.logical >= end {
            continue;
        }
        if e.logical > at {
            break;
        }
        if let Some(why) = unplaced(e.flags) {
            return Err(why.into());
        }
        let upto = end.min(e.logical + e.length);
        let device_offset = e.physical + (at - e.logical);
        let disk_byte = start * 512 + device_offset;
        out.push(LbaPiece {
            file_offset: at,
            length: upto - at,
            device_offset,
            lba: disk_byte / sector.max(1),
        });
        at = upto;
    }
    if at < end {
        return Err(format!(
            "bytes {at}..{end} of the file are a hole: no block on the device holds them"
        ));
    }
    Ok(out)
}

/// Why an extent with `flags` has no plain place on the device, if it has none.
fn unplaced(flags: u32) -> Option<&'static str> {
    if flags & (fiemap::FLAG_UNKNOWN | fiemap::FLAG_DELALLOC) != 0 {
        Some("the filesystem has not allocated the page a place on the device yet (delayed allocation)")
    } else if flags & fiemap::FLAG_UNWRITTEN != 0 {
        Some("the page is in an unwritten extent: allocated but never written, so reads return zeroes without reading the device")
    } else if flags & fiemap::FLAG_ENCODED != 0 {
        Some("the page is compressed or encoded on the device: its bytes there are not the page's")
    } else if flags & (fiemap::FLAG_NOT_ALIGNED | fiemap::FLAG_DATA_INLINE | fiemap::FLAG_DATA_TAIL)
        != 0
    {
        Some("the page is stored inside the filesystem's metadata, not in a block of its own")
    } else if flags & fiemap::FLAG_DATA_ENCRYPTED != 0 {
        Some("the page is encrypted on the device: its bytes there are not the page's")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64, flags: u32) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags,
        }
    }

    #[test]
    fn the_lba_adds_the_partition_start_and_counts_logical_sectors() {
        // Page 3 of a file whose first MB is at byte 1 GiB of the partition; the partition
        // starts at sector 2048 (1 MiB); the disk has 4096-byte sectors.
        let e = [ext(0, 1 << 30, 1 << 20, 0)];
        let p = pieces(&e, 3 * 8192, 8192, 2048, 4096).unwrap();
        let disk_byte = (1 << 20) + (1 << 30) + 3 * 8192;
        assert_eq!(
            p,
            vec![LbaPiece {
                file_offset: 24576,
                length: 8192,
                device_offset: (1 << 30) + 24576,
                lba: disk_byte / 4096,
            }]
        );
        // The same place in 512-byte sectors is eight times the number.
        let p512 = pieces(&e, 3 * 8192, 8192, 2048, 512).unwrap();
        assert_eq!(p512[0].lba, p[0].lba * 8);
    }

    #[test]
    fn a_page_across_two_extents_gives_two_pieces() {
        let e = [
            ext(0, 40960, 12288, 0),
            ext(12288, 900_000 * 4096, 4096, fiemap::FLAG_LAST),
        ];
        let p = pieces(&e, 8192, 8192, 0, 512).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].file_offset, p[0].length, p[0].lba),
            (8192, 4096, (40960 + 8192) / 512)
        );
        assert_eq!(
            (p[1].file_offset, p[1].length, p[1].lba),
            (12288, 4096, 900_000 * 8)
        );
    }

    #[test]
    fn holes_and_extents_without_a_plain_place_give_no_number() {
        let hole = pieces(&[ext(0, 4096, 4096, 0)], 0, 8192, 0, 512).unwrap_err();
        assert!(hole.contains("hole"), "{hole}");
        assert!(pieces(&[], 0, 8192, 0, 512).unwrap_err().contains("hole"));
        let unwritten = pieces(
            &[ext(0, 4096, 8192, fiemap::FLAG_UNWRITTEN)],
            0,
            8192,
            0,
            512,
        );
        assert!(unwritten.unwrap_err().contains("unwritten"));
        let delalloc = pieces(
            &[ext(
                0,
                0,
                8192,
                fiemap::FLAG_DELALLOC | fiemap::FLAG_UNKNOWN,
            )],
            0,
            8192,
            0,
            512,
        );
        assert!(delalloc.unwrap_err().contains("delayed allocation"));
        let inline = pieces(
            &[ext(
                0,
                0,
                8192,
                fiemap::FLAG_DATA_INLINE | fiemap::FLAG_NOT_ALIGNED,
            )],
            0,
            8192,
            0,
            512,
        );
        assert!(inline.unwrap_err().contains("metadata"));
    }

    #[test]
    fn a_file_on_tmpfs_has_no_number_and_says_why() {
        // Without /dev/shm there is no tmpfs to try: nothing to check.
        let Ok(tmp) = tempfile::NamedTempFile::new_in("/dev/shm") else {
            return;
        };
        std::fs::write(tmp.path(), [1u8; 8192]).unwrap();
        let loc = locate(tmp.path(), 0, 8192);
        assert_eq!(loc.lba(), None, "{loc:?}");
        let text = loc.describe();
        assert!(text.starts_with("device LBA unknown: "), "{text}");
        assert!(
            text.contains("no block device") || text.contains("FIEMAP"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_file_is_said_in_words() {
        let loc = locate(Path::new("/nonexistent-sqliosim/x.mdx"), 0, 8192);
        assert_eq!(loc.lba(), None);
        assert!(
            loc.describe().contains("no longer exists") || loc.describe().contains("cannot open"),
            "{}",
            loc.describe()
        );
    }
}
