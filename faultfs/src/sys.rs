//! Thin wrappers over the OS calls std does not offer: statvfs, fallocate, signal waiting.
//!
//! Every `unsafe` block of the crate that is not a trivial getter lives here.

#![expect(
    unsafe_code,
    reason = "the syscall glue: libc calls on raw descriptors, buffers and C strings"
)]

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The statfs figures FUSE passes on.
pub struct FsStats {
    /// Total blocks of `frsize` bytes.
    pub blocks: u64,
    /// Free blocks.
    pub bfree: u64,
    /// Free blocks available to unprivileged users.
    pub bavail: u64,
    /// Total inodes.
    pub files: u64,
    /// Free inodes.
    pub ffree: u64,
    /// Preferred I/O size.
    pub bsize: u32,
    /// Longest file name.
    pub namelen: u32,
    /// Fragment size, the unit of the block counts.
    pub frsize: u32,
}

/// statvfs(3) of the filesystem holding `path`.
pub fn statvfs(path: &Path) -> io::Result<FsStats> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a valid, writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FsStats {
        blocks: st.f_blocks,
        bfree: st.f_bfree,
        bavail: st.f_bavail,
        files: st.f_files,
        ffree: st.f_ffree,
        bsize: st.f_bsize as u32,
        namelen: st.f_namemax as u32,
        frsize: st.f_frsize as u32,
    })
}

/// fallocate(2) on a backing file, with the caller's mode bits passed through.
pub fn fallocate(file: &File, mode: i32, offset: u64, len: u64) -> io::Result<()> {
    let (off, len) = (offset as libc::off_t, len as libc::off_t);
    // SAFETY: the fd is open for the life of `file`; fallocate touches no user memory.
    if unsafe { libc::fallocate(file.as_raw_fd(), mode, off, len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Names of the regular files in `dir`, sorted; other entries and non-UTF-8 names are skipped.
pub fn regular_files(dir: &Path) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            if let Ok(name) = entry.file_name().into_string() {
                names.push(name);
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The signals that ask the daemon to unmount and exit.
fn stop_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset/sigaddset only write into it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread and the threads it starts later,
/// so that only `wait_stop_signal` receives them.
pub fn block_stop_signals() -> io::Result<()> {
    let set = stop_set();
    // SAFETY: `set` is initialised; a null old-set pointer is allowed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Waits until one of the blocked stop signals arrives and returns its number.
pub fn wait_stop_signal() -> io::Result<i32> {
    let set = stop_set();
    let mut sig = 0;
    // SAFETY: `set` is initialised and `sig` is a valid place for the result.
    let rc = unsafe { libc::sigwait(&set, &mut sig) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(sig)
}
