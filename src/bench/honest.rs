//! What makes a result honest: whether O_DIRECT is really enforced on the file's filesystem
//! (statx `STATX_DIOALIGN`, and the filesystem magic for tmpfs, btrfs and FUSE, which accept
//! O_DIRECT without bypassing the cache as expected), and whether the file is smaller than RAM.

use serde::Serialize;
use std::fs::File;

/// The direct-I/O facts of one test file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DirectIo {
    /// O_DIRECT was asked for.
    pub requested: bool,
    /// O_DIRECT is requested and the filesystem is known to enforce it.
    pub honoured: bool,
    /// Filesystem name from its magic number.
    pub filesystem: String,
    /// `statx` DIOALIGN memory alignment (0 when not reported).
    pub dio_mem_align: u32,
    /// `statx` DIOALIGN offset alignment (0 when not reported).
    pub dio_offset_align: u32,
}

/// Names a filesystem magic number; tmpfs, btrfs and FUSE ignore or relax O_DIRECT.
pub fn fs_name(magic: u64) -> (&'static str, bool) {
    match magic {
        0xEF53 => ("ext4", true),
        0x5846_5342 => ("xfs", true),
        0x0102_1994 => ("tmpfs", false),
        0x9123_683E => ("btrfs", false),
        0x6573_5546 => ("fuse", false),
        0x6969 => ("nfs", true),
        0x2FC1_2FC1 => ("zfs", true),
        _ => ("unknown", true),
    }
}

/// What a block device says of direct I/O: (description, enforcing, logical block size).
/// A loop device whose backing file is read through the page cache
/// (`/sys/dev/block/M:m/loop/dio` is 0) does not give direct-I/O figures.
fn device_facts(rdev: u64) -> (&'static str, bool, u32) {
    let sys = format!(
        "/sys/dev/block/{}:{}",
        rustix::fs::major(rdev),
        rustix::fs::minor(rdev)
    );
    let loop_dio = std::fs::read_to_string(format!("{sys}/loop/dio")).ok();
    let (name, enforcing) = match loop_dio.as_deref().map(str::trim) {
        Some("0") => (
            "a loop device that reads its backing file through the page cache (losetup --direct-io=on avoids it)",
            false,
        ),
        Some(_) => ("loop device with direct I/O", true),
        None => ("block device", true),
    };
    let block = std::fs::read_to_string(format!("{sys}/queue/logical_block_size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    (name, enforcing, block)
}

/// Probes `file` (opened with O_DIRECT when `requested`).
pub fn probe(file: &File, requested: bool) -> DirectIo {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let sx = rustix::fs::statx(
        file,
        "",
        rustix::fs::AtFlags::EMPTY_PATH,
        rustix::fs::StatxFlags::DIOALIGN,
    );
    let (mem, off) = match sx {
        Ok(s) if s.stx_mask & rustix::fs::StatxFlags::DIOALIGN.bits() != 0 => {
            (s.stx_dio_mem_align, s.stx_dio_offset_align)
        }
        _ => (0, 0),
    };
    let device = file
        .metadata()
        .ok()
        .filter(|m| m.file_type().is_block_device());
    if let Some(m) = device {
        // The device node lives on devtmpfs, whose magic says nothing about the device.
        let (name, enforcing, block) = device_facts(m.rdev());
        return DirectIo {
            requested,
            honoured: requested && enforcing,
            filesystem: name.to_string(),
            dio_mem_align: mem,
            dio_offset_align: if off > 0 { off } else { block },
        };
    }
    let magic = rustix::fs::fstatfs(file)
        .map(|s| s.f_type as u64)
        .unwrap_or(0);
    let (name, enforcing) = fs_name(magic);
    // DIOALIGN is the positive proof; kernels older than 6.1 do not report it, so a known
    // enforcing filesystem counts too.
    let honoured = requested && enforcing && (mem > 0 || magic != 0);
    DirectIo {
        requested,
        honoured,
        filesystem: format!("{name} ({magic:#x})"),
        dio_mem_align: mem,
        dio_offset_align: off,
    }
}

/// Warnings to print with a result: O_DIRECT not honoured, file smaller than RAM.
pub fn warnings(path: &str, dio: &DirectIo, file_size: u64, ram: u64) -> Vec<String> {
    let mut w = Vec::new();
    if dio.requested && !dio.honoured {
        w.push(format!(
            "direct I/O not honoured on {path}: {} accepts O_DIRECT without enforcing it \
             (statx DIOALIGN {}); results measure memory, not the device",
            dio.filesystem,
            if dio.dio_mem_align > 0 {
                "reported"
            } else {
                "not reported"
            }
        ));
    }
    if !dio.requested {
        w.push(format!(
            "buffered I/O on {path}: results include the page cache"
        ));
    }
    if ram > 0 && file_size < ram {
        w.push(format!(
            "{path} ({} MiB) is smaller than RAM ({} MiB): caches below the page cache \
             (host, controller, device) may hold it entirely; use a file larger than RAM for \
             device figures",
            file_size >> 20,
            ram >> 20
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_flag_filesystems_that_ignore_o_direct() {
        assert_eq!(fs_name(0x01021994), ("tmpfs", false));
        assert_eq!(fs_name(0x9123683E), ("btrfs", false));
        assert_eq!(fs_name(0x65735546), ("fuse", false));
        assert_eq!(fs_name(0xEF53), ("ext4", true));
    }

    #[test]
    fn warnings_name_the_problem() {
        let dio = DirectIo {
            requested: true,
            honoured: false,
            filesystem: "tmpfs (0x1021994)".into(),
            dio_mem_align: 0,
            dio_offset_align: 0,
        };
        let w = warnings("/dev/shm/x", &dio, 1 << 20, 1 << 30);
        assert_eq!(w.len(), 2);
        assert!(w[0].contains("not honoured") && w[0].contains("tmpfs"));
        assert!(w[1].contains("smaller than RAM"));
    }

    #[test]
    fn a_file_here_is_probed() {
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        let f = File::create(dir.path().join("p")).expect("create");
        let d = probe(&f, true);
        assert!(!d.filesystem.is_empty());
    }
}
