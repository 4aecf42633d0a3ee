//! Where a file's bytes sit on its filesystem's block device: the `FS_IOC_FIEMAP` ioctl
//! (Documentation/filesystems/fiemap.rst), asked for one byte range of an open file.
//!
//! Neither libc nor rustix wraps it, so the request and the extent records are laid out here
//! as the kernel's `struct fiemap` and `struct fiemap_extent` (linux/fiemap.h). No
//! `FIEMAP_FLAG_SYNC`: evidence must not make the device write (a delayed allocation is
//! reported as such instead). What the physical offsets mean (and what they do not, on btrfs
//! or a stacked device) is for the caller, `report::facts::lba`.

#![expect(
    unsafe_code,
    reason = "FS_IOC_FIEMAP has no safe wrapper in libc or rustix: the ioctl is called on a request laid out as the kernel's struct fiemap"
)]

use std::fs::File;
use std::os::fd::AsRawFd;

/// The last extent of the file.
pub const FLAG_LAST: u32 = 0x0001;
/// Location of the data not known (yet).
pub const FLAG_UNKNOWN: u32 = 0x0002;
/// Delayed allocation: no block on the device yet.
pub const FLAG_DELALLOC: u32 = 0x0004;
/// Compressed or otherwise encoded: the bytes on the device are not the file's bytes.
pub const FLAG_ENCODED: u32 = 0x0008;
/// Encrypted on the device.
pub const FLAG_DATA_ENCRYPTED: u32 = 0x0080;
/// Data stored with the metadata (inline, tail packed): no block of its own.
pub const FLAG_NOT_ALIGNED: u32 = 0x0100;
/// Data inline in the inode.
pub const FLAG_DATA_INLINE: u32 = 0x0200;
/// Data packed with other files' tails.
pub const FLAG_DATA_TAIL: u32 = 0x0400;
/// Allocated but never written: reads return zeroes, the device's blocks are not read.
pub const FLAG_UNWRITTEN: u32 = 0x0800;
/// Shared with another file (reflink, snapshot).
pub const FLAG_SHARED: u32 = 0x2000;

/// One extent: `length` bytes of the file from `logical` lie at `physical` on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the file, bytes.
    pub logical: u64,
    /// Offset on the filesystem's block device, bytes.
    pub physical: u64,
    /// Length, bytes.
    pub length: u64,
    /// `FLAG_*` bits.
    pub flags: u32,
}

/// Most extents asked for in one call: a page of 8 KB crosses at most a few.
pub const MAX_EXTENTS: usize = 16;

// `_IOWR('f', 11, struct fiemap)`: struct fiemap is 32 bytes.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct Request {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [RawExtent; MAX_EXTENTS],
}

/// The extents covering `length` bytes of `file` from `start` (a hole gives none), or the
/// errno of a refused ioctl (EOPNOTSUPP on tmpfs and most FUSE filesystems).
pub fn extents(file: &File, start: u64, length: u64) -> std::io::Result<Vec<Extent>> {
    let mut req = Request {
        fm_start: start,
        fm_length: length,
        fm_flags: 0,
        fm_mapped_extents: 0,
        fm_extent_count: MAX_EXTENTS as u32,
        fm_reserved: 0,
        fm_extents: [RawExtent::default(); MAX_EXTENTS],
    };
    // SAFETY: `req` is a live, exclusively borrowed struct laid out as the kernel's struct
    // fiemap followed by room for `fm_extent_count` extents; the kernel writes no more than
    // that many, and the fd is open for the duration of the call.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            FS_IOC_FIEMAP,
            &mut req as *mut Request as *mut libc::c_void,
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let n = (req.fm_mapped_extents as usize).min(MAX_EXTENTS);
    Ok(req.fm_extents[..n]
        .iter()
        .map(|e| Extent {
            logical: e.fe_logical,
            physical: e.fe_physical,
            length: e.fe_length,
            flags: e.fe_flags,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<RawExtent>(), 56);
        assert_eq!(
            std::mem::size_of::<Request>(),
            32 + 56 * MAX_EXTENTS,
            "struct fiemap is 32 bytes before its extents"
        );
    }

    #[test]
    fn a_written_file_maps_or_the_refusal_is_an_errno() {
        use std::io::Write;
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        f.sync_all().unwrap();
        match extents(&f, 0, 8192) {
            Ok(v) => {
                let covered: u64 = v.iter().map(|e| e.length).sum();
                assert!(
                    covered >= 8192 || v.iter().any(|e| e.flags & FLAG_LAST != 0),
                    "{v:?}"
                );
                assert_eq!(v.first().map(|e| e.logical), Some(0), "{v:?}");
            }
            Err(e) => assert!(e.raw_os_error().is_some(), "{e}"),
        }
    }
}
