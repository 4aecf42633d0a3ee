//! Refusing a direct-I/O run whose requests the target would refuse, before anything is
//! prepared: a block size or base offset that is not a multiple of the target's direct-I/O
//! unit would make every request fail with EINVAL, which is how we asked, not what the device
//! did. Buffered runs are not restricted.

use std::path::Path;

use super::error::BenchError;
use super::job::Job;
use crate::io::BUF_ALIGN;

/// What the target at a path requires of direct I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// Offsets and lengths must be multiples of this.
    pub offset: u32,
    /// Buffers must be aligned to this (0 when unknown).
    pub mem: u32,
}

/// The direct-I/O unit of `path` (a block device, a file, or where a new file will be):
/// statx DIOALIGN, or for a block device that does not report it its logical block size.
/// `None` when nothing says (tmpfs, btrfs and FUSE report nothing and enforce nothing).
pub fn unit_of(path: &Path) -> Option<Unit> {
    if let Some((mem, offset)) = crate::io::direct::dio_align(path) {
        return Some(Unit { offset, mem });
    }
    logical_block_size(path).map(|offset| Unit { offset, mem: 0 })
}

/// The logical block size of a block device node at `path` (the parent disk's for a
/// partition); `None` for anything else.
fn logical_block_size(path: &Path) -> Option<u32> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    if !m.file_type().is_block_device() {
        return None;
    }
    crate::io::sysfs::logical_block_size(rustix::fs::major(m.rdev()), rustix::fs::minor(m.rdev()))
}

/// Checks `job`'s requests against the direct-I/O unit of each target.
pub fn check(job: &Job) -> Result<(), BenchError> {
    if !job.direct {
        return Ok(());
    }
    for t in &job.targets {
        if let Some(unit) = unit_of(&t.path) {
            check_one(job, &t.path, unit)?;
        }
    }
    Ok(())
}

/// Checks block size, base offset and buffer alignment against `unit`.
pub fn check_one(job: &Job, path: &Path, unit: Unit) -> Result<(), BenchError> {
    let u = unit.offset.max(1);
    let target = path.display();
    let refuse = |what: String| {
        Err(BenchError::Usage(format!(
            "{what} of {target}; use a multiple of {u}, or run with buffered I/O (the target \
             would refuse such direct-I/O requests with EINVAL)"
        )))
    };
    if !job.block_size.is_multiple_of(u) {
        let rel = if job.block_size < u {
            "below"
        } else {
            "not a multiple of"
        };
        return refuse(format!(
            "block size {} B is {rel} the {u}-byte direct-I/O unit",
            job.block_size
        ));
    }
    if !job.base_offset.is_multiple_of(u64::from(u)) {
        return refuse(format!(
            "base offset {} is not a multiple of the {u}-byte direct-I/O unit",
            job.base_offset
        ));
    }
    if unit.mem > 0 && !BUF_ALIGN.is_multiple_of(unit.mem as usize) {
        return Err(BenchError::Usage(format!(
            "{target} needs direct-I/O buffers aligned to {} bytes, more than the {BUF_ALIGN} \
             bytes sqliosim aligns them to; run with buffered I/O",
            unit.mem
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(block: u32, base: u64) -> Job {
        Job {
            block_size: block,
            base_offset: base,
            ..Job::with_defaults("/dev/loop9".into(), 64 << 20)
        }
    }

    #[test]
    fn blocks_and_offsets_off_the_unit_are_refused_with_what_is_allowed() {
        let unit = Unit {
            offset: 4096,
            mem: 512,
        };
        let p = Path::new("/dev/loop9");
        let e = check_one(&job(512, 1 << 20), p, unit).expect_err("512 < 4096");
        let text = e.to_string();
        assert!(
            text.contains("block size 512 B is below the 4096-byte direct-I/O unit of /dev/loop9")
                && text.contains("use a multiple of 4096"),
            "{text}"
        );
        let e = check_one(&job(6144, 1 << 20), p, unit).expect_err("6144 % 4096");
        assert!(e.to_string().contains("not a multiple of"), "{e}");
        let e = check_one(&job(8192, (1 << 20) + 512), p, unit).expect_err("offset");
        assert!(e.to_string().contains("base offset 1049088"), "{e}");
        assert!(check_one(&job(8192, 1 << 20), p, unit).is_ok());
        let big_mem = Unit {
            offset: 512,
            mem: 8192,
        };
        assert!(check_one(&job(8192, 1 << 20), p, big_mem).is_err());
    }

    #[test]
    fn buffered_runs_are_not_restricted() {
        let mut j = job(512, 1 << 20);
        j.direct = false;
        assert!(check(&j).is_ok());
    }
}
