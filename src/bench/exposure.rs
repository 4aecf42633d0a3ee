//! What makes a result honest: whether O_DIRECT is really enforced on the file's filesystem
//! (statx `STATX_DIOALIGN`, and the filesystem magic for tmpfs, btrfs and FUSE, which accept
//! O_DIRECT without bypassing the cache as expected), and whether the file is smaller than RAM.
//!
//! The facts and the rule are the simulator's, from `io` (issue #22 §8): the filesystem's name
//! ([`crate::io::direct::fs_name`]), the DIOALIGN ([`crate::io::direct::file_dio_align`]), the
//! rule ([`crate::io::direct::o_direct_honoured`]) and, for a block device, what sysfs says of
//! it (`io::sysfs::device_direct_io`).

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

/// Probes `file` (opened with O_DIRECT when `requested`).
pub fn probe(file: &File, requested: bool) -> DirectIo {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let device = file
        .metadata()
        .ok()
        .filter(|m| m.file_type().is_block_device());
    if let Some(m) = device {
        let align = crate::io::direct::file_dio_align(file);
        // The device node lives on devtmpfs, whose magic says nothing about the device.
        let (name, enforcing, block) = crate::io::sysfs::device_direct_io(m.rdev());
        return DirectIo {
            requested,
            honoured: requested && enforcing,
            filesystem: name.to_string(),
            dio_mem_align: align.map_or(0, |a| a.0),
            dio_offset_align: align.map_or(block.unwrap_or(0), |a| a.1),
        };
    }
    let magic = rustix::fs::fstatfs(file)
        .map(|s| s.f_type as u64)
        .unwrap_or(0);
    from_facts(requested, magic, crate::io::direct::file_dio_align(file))
}

/// The direct-I/O facts of a file on the filesystem of statfs magic `magic`, whose statx
/// DIOALIGN (memory, offset) is `align` when reported: `honoured` by the simulator's rule.
pub fn from_facts(requested: bool, magic: u64, align: Option<(u32, u32)>) -> DirectIo {
    let name = crate::io::direct::fs_name(magic).unwrap_or("unknown");
    let (mem, off) = align.unwrap_or((0, 0));
    DirectIo {
        requested,
        honoured: requested && crate::io::direct::o_direct_honoured(name, align.is_some()),
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

    /// The simulator's run-header rule (`io::DirectIoInfo::honoured`) and bench's
    /// `direct_io.honoured` give one answer for the same filesystem facts — among them ext4
    /// and XFS on a kernel before 6.1 (statx DIOALIGN absent), where bench used to say
    /// honoured and the simulator warned.
    #[test]
    fn bench_and_simulator_agree_on_o_direct_for_the_same_facts() {
        let cases: [(u64, &str); 6] = [
            (0xEF53, "ext4"),
            (0x5846_5342, "xfs"),
            (0x0102_1994, "tmpfs"),
            (0x9123_683E, "btrfs"),
            (0x6573_5546, "fuse"),
            (0x1234_5678, "unknown (0x12345678)"),
        ];
        for (magic, sim_name) in cases {
            for align in [None, Some((512, 4096))] {
                let bench = from_facts(true, magic, align);
                let sim =
                    crate::io::direct::info_from(sim_name.into(), align, Some(512), Some(512));
                assert_eq!(
                    bench.honoured, sim.honoured,
                    "{sim_name}, DIOALIGN {align:?}: bench {bench:?}, simulator {sim:?}"
                );
            }
        }
        let pre_61_ext4 = from_facts(true, 0xEF53, None);
        assert!(
            pre_61_ext4.honoured,
            "ext4 honours O_DIRECT without DIOALIGN"
        );
        assert!(
            !from_facts(true, 0x0102_1994, None).honoured,
            "tmpfs does not"
        );
        assert!(!from_facts(false, 0xEF53, None).honoured, "not asked for");
    }

    #[test]
    fn a_file_here_is_probed() {
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        let f = File::create(dir.path().join("p")).expect("create");
        let d = probe(&f, true);
        assert!(!d.filesystem.is_empty());
    }
}
