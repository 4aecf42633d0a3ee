//! Carrying out reads and writes of regular files: alignment check, plan, I/O.
//!
//! Each request is planned under the fault-table lock (pure decision in faults.rs)
//! and then executed without the lock, so a delayed request does not hold up others.

use fuser::Errno;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::thread::sleep;
use std::time::Duration;

use crate::faults::WriteAction;
use crate::fs::{lock, FaultFs};

/// Sector size a real device enforces for O_DIRECT offsets and lengths.
pub const SECTOR: u64 = 512;

/// Rejects an O_DIRECT request whose offset or length is not sector-aligned, as a disk would.
///
/// The kernel's FUSE module enforces no alignment, and the user buffer's address
/// never reaches the daemon, so only offset and length can be checked here.
pub fn check_direct(fs: &FaultFs, flags: i32, off: u64, len: u64) -> Result<(), Errno> {
    if flags & libc::O_DIRECT != 0 && (!off.is_multiple_of(SECTOR) || !len.is_multiple_of(SECTOR)) {
        if fs.verbose {
            eprintln!("faultfs: EINVAL for misaligned O_DIRECT request off={off} len={len}");
        }
        return Err(Errno::EINVAL);
    }
    Ok(())
}

/// Reads up to `len` bytes at `off`, short only at end of file.
pub fn read_full(file: &File, off: u64, len: u64) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; len as usize];
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], off + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Errno::from(e)),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

/// Serves a read of `name` (inode `ino`), applying delay, EIO, stale content and bit flips;
/// the volatile cache's bytes are seen.
pub fn read(
    fs: &FaultFs,
    ino: u64,
    file: &File,
    name: &str,
    off: u64,
    len: u64,
) -> Result<Vec<u8>, Errno> {
    let plan = lock(&fs.faults).plan_read(name, off, len);
    if plan.delay_ms > 0 {
        sleep(Duration::from_millis(plan.delay_ms));
    }
    if let Some(errno) = plan.eio {
        log(fs, format_args!("errno {errno} on read {name}@{off}+{len}"));
        return Err(Errno::from_i32(errno));
    }
    let mut buf = fs.read_through(ino, file, off, len)?;
    for (stale_off, bytes) in &plan.stale {
        overlay(&mut buf, off, *stale_off, bytes);
        log(
            fs,
            format_args!("stale read {name}@{stale_off}+{}", bytes.len()),
        );
    }
    for &(byte, bit) in &plan.flips {
        if let Some(b) = byte.checked_sub(off).and_then(|i| buf.get_mut(i as usize)) {
            *b ^= 1 << bit;
            log(
                fs,
                format_args!("flipped bit {bit} of byte {byte} on read of {name}"),
            );
        }
    }
    Ok(buf)
}

/// Copies the part of `bytes` (which belong at `at`) that falls inside `buf` (at `off`).
fn overlay(buf: &mut [u8], off: u64, at: u64, bytes: &[u8]) {
    let start = off.max(at);
    let end = (off + buf.len() as u64).min(at + bytes.len() as u64);
    if start < end {
        let dst = (start - off) as usize..(end - off) as usize;
        let src = (start - at) as usize..(end - at) as usize;
        buf[dst].copy_from_slice(&bytes[src]);
    }
}

/// Serves a write to `name` (inode `ino`); returns the length acknowledged (always all of it,
/// unless EIO). What is stored goes to the volatile cache when it is on.
pub fn write(
    fs: &FaultFs,
    ino: u64,
    file: &Arc<File>,
    name: &str,
    off: u64,
    data: &[u8],
) -> Result<u32, Errno> {
    let len = data.len() as u64;
    let plan = lock(&fs.faults).plan_write(name, off, len);
    if plan.delay_ms > 0 {
        sleep(Duration::from_millis(plan.delay_ms));
    }
    for &(id, at, n) in &plan.save_old {
        let old = fs.read_through(ino, file, at, n)?;
        lock(&fs.faults).save_stale(id, at, old);
    }
    match plan.action {
        WriteAction::Pass => fs.store(ino, file, off, data)?,
        WriteAction::Lost => log(fs, format_args!("lost write {name}@{off}+{len}")),
        WriteAction::Torn { keep } => {
            fs.store(ino, file, off, &data[..keep as usize])?;
            log(
                fs,
                format_args!("torn write {name}@{off}+{len}, kept {keep}"),
            );
        }
        WriteAction::Misdirect { file: to, offset } => {
            misdirect(fs, (ino, file), name, &to, offset, data)?;
            log(
                fs,
                format_args!("misdirected {name}@{off}+{len} to {to}@{offset}"),
            );
        }
        WriteAction::Eio { errno } => {
            log(
                fs,
                format_args!("errno {errno} on write {name}@{off}+{len}"),
            );
            return Err(Errno::from_i32(errno));
        }
    }
    Ok(data.len() as u32)
}

/// Stores a misdirected write at `at` in `to` (this file, `(ino, file)`, if `to` is `name`).
fn misdirect(
    fs: &FaultFs,
    (ino, file): (u64, &Arc<File>),
    name: &str,
    to: &str,
    at: u64,
    data: &[u8],
) -> Result<(), Errno> {
    if to == name {
        return fs.store(ino, file, at, data);
    }
    let other = OpenOptions::new()
        .read(true)
        .write(true)
        .open(fs.backing_path(to))
        .map_err(Errno::from)?;
    fs.store(fs.ino_for(to), &Arc::new(other), at, data)
}

fn log(fs: &FaultFs, what: std::fmt::Arguments<'_>) {
    if fs.verbose {
        eprintln!("faultfs: {what}");
    }
}

#[cfg(test)]
mod tests {
    use super::overlay;

    #[test]
    fn overlay_copies_only_the_intersection() {
        let mut buf = vec![0u8; 8];
        overlay(&mut buf, 100, 104, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(buf, [0, 0, 0, 0, 1, 2, 3, 4]);
        let mut buf = vec![0u8; 4];
        overlay(&mut buf, 100, 98, &[9, 9, 7, 7]);
        assert_eq!(buf, [7, 7, 0, 0]);
        overlay(&mut buf, 100, 200, &[5]);
        assert_eq!(buf, [7, 7, 0, 0]);
    }
}
