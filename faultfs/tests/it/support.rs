//! Fixtures for the end-to-end tests: a mounted faultfs, stamped pages, O_DIRECT I/O.

// Unsafe code is denied crate-wide (Cargo.toml [lints]).
#![expect(
    unsafe_code,
    reason = "O_DIRECT needs an aligned buffer, allocated and freed by hand"
)]

use faultfs::{fuse_or_skip, Mount};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::ops::{Deref, DerefMut};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// Page size of the stamped pages.
pub const PAGE: usize = 8192;

/// A mounted faultfs over a fresh backing directory; unmounts before the directory goes.
pub struct Fixture {
    /// The mount (dropped first: fields drop in order).
    pub mount: Mount,
    /// The backing directory.
    pub backing: PathBuf,
    pub _dir: TempDir,
}

/// A fresh scratch directory under the package directory.
pub fn test_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("faultfs-test-")
        .tempdir_in(".")
        .expect("tempdir under the package directory")
}

/// `dir/backing` and `dir/mnt`, created empty: a backing directory and a mount point.
pub fn backing_and_mountpoint(dir: &Path) -> (PathBuf, PathBuf) {
    let backing = dir.join("backing");
    let mnt = dir.join("mnt");
    std::fs::create_dir(&backing).expect("mkdir backing");
    std::fs::create_dir(&mnt).expect("mkdir mnt");
    (backing, mnt)
}

/// Mounts a fresh faultfs with extra daemon arguments, or `None` when FUSE is unavailable.
pub fn fixture_with(test: &str, args: &[&str]) -> Option<Fixture> {
    if !fuse_or_skip(test) {
        return None;
    }
    let dir = test_dir();
    let (backing, mnt) = backing_and_mountpoint(dir.path());
    let bin = Path::new(env!("CARGO_BIN_EXE_faultfs"));
    let mount = Mount::start_with_args(bin, &backing, &mnt, args).expect("mount faultfs");
    Some(Fixture {
        mount,
        backing,
        _dir: dir,
    })
}

/// Mounts a fresh faultfs, or `None` when FUSE is unavailable (after saying SKIPPED).
pub fn fixture(test: &str) -> Option<Fixture> {
    fixture_with(test, &[])
}

impl Fixture {
    /// Opens `name` in the mount with O_DIRECT, creating it.
    pub fn open_direct(&self, name: &str) -> File {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_DIRECT)
            .open(self.mount.path(name))
            .expect("open O_DIRECT through the mount")
    }

    /// The whole backing file of `name`, read behind faultfs's back.
    pub fn backing_bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.backing.join(name)).expect("read backing file")
    }

    /// Page `index` of the backing file of `name`.
    pub fn backing_page(&self, name: &str, index: usize) -> Vec<u8> {
        self.backing_bytes(name)[index * PAGE..(index + 1) * PAGE].to_vec()
    }
}

/// A 4096-aligned heap buffer, as O_DIRECT needs on a real disk.
pub struct Aligned {
    ptr: *mut u8,
    len: usize,
}

impl Aligned {
    /// A zeroed aligned buffer of `len` bytes (`len` > 0).
    pub fn zeroed(len: usize) -> Self {
        let layout = Layout::from_size_align(len, 4096).expect("layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "allocation of {len} bytes failed");
        Aligned { ptr, len }
    }
}

impl Deref for Aligned {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to len initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, 4096).expect("layout");
        // SAFETY: ptr came from alloc_zeroed with this same layout.
        unsafe { dealloc(self.ptr, layout) }
    }
}

/// The stamped content of page `index` at write number `counter`: every 8-byte word
/// holds the page index, the counter and the word's position.
pub fn page(index: usize, counter: u64) -> Aligned {
    let mut buf = Aligned::zeroed(PAGE);
    for (w, word) in buf.chunks_exact_mut(8).enumerate() {
        let v = ((index as u64) << 40) | (counter << 20) | w as u64;
        word.copy_from_slice(&v.to_le_bytes());
    }
    buf
}

/// Writes page `index` with write number `counter` at its place in `file`.
pub fn write_page(file: &File, index: usize, counter: u64) -> std::io::Result<()> {
    file.write_all_at(&page(index, counter), (index * PAGE) as u64)
}

/// Writes pages `0..n` with `counter` and makes them durable.
pub fn write_pages(file: &File, n: usize, counter: u64) {
    for i in 0..n {
        write_page(file, i, counter).expect("write page");
    }
    file.sync_data().expect("fdatasync");
}

/// Reads page `index` of `file` with an aligned buffer.
pub fn read_page(file: &File, index: usize) -> std::io::Result<Vec<u8>> {
    let mut buf = Aligned::zeroed(PAGE);
    file.read_exact_at(&mut buf, (index * PAGE) as u64)?;
    Ok(buf.to_vec())
}

/// Number of bits that differ between two equally long buffers.
pub fn bit_diff(a: &[u8], b: &[u8]) -> u32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// The errno of an I/O result that must have failed.
pub fn errno<T: std::fmt::Debug>(r: std::io::Result<T>) -> i32 {
    r.expect_err("expected an error")
        .raw_os_error()
        .expect("an OS error")
}
