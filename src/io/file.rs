//! A [`Storage`] over a real file descriptor, shared by the direct and buffered backends, and
//! the handle a ring (`io::aio`, capacity runs) gets its files as.
//!
//! Every transfer loops until the whole request is done: EINTR is retried and a short
//! transfer continues where it stopped (the kernel may split a large O_DIRECT request). A
//! read stops early only at end of file.

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use rustix::fs::FallocateFlags;

use super::Storage;

/// One open file on a real filesystem.
#[derive(Debug)]
pub struct FileStorage {
    file: File,
    path: PathBuf,
    dio_align: u32,
}

impl FileStorage {
    /// Wraps an open file.
    pub fn new(file: File, path: PathBuf) -> FileStorage {
        FileStorage {
            file,
            path,
            dio_align: super::DEFAULT_DIO_ALIGN,
        }
    }

    /// The same file with its direct-I/O unit decided (see [`Storage::dio_align`]).
    pub fn with_dio_align(self, unit: u32) -> FileStorage {
        FileStorage {
            dio_align: unit,
            ..self
        }
    }

    /// The underlying file.
    pub fn file(&self) -> &File {
        &self.file
    }
}

/// The descriptor, for what needs one: a ring's operations and io_uring file
/// registration (`io::aio`), statx probes. The handle keeps it open as long as it lives.
impl AsFd for FileStorage {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl AsRawFd for FileStorage {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.file.as_raw_fd()
    }
}

/// Retries `op` while it fails with EINTR.
fn no_eintr<T>(mut op: impl FnMut() -> rustix::io::Result<T>) -> io::Result<T> {
    loop {
        match op() {
            Err(rustix::io::Errno::INTR) => continue,
            other => return other.map_err(io::Error::from),
        }
    }
}

/// The error of a write that moved no bytes (shared with the service-backed storage).
pub(crate) fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "write transferred no bytes")
}

impl Storage for FileStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            match no_eintr(|| rustix::io::pread(&self.file, &mut buf[done..], at)) {
                Ok(0) => break,
                Ok(n) => done += n,
                // A direct read that stopped at an unaligned end of file cannot be continued
                // (the rest is misaligned): what was read is the answer.
                Err(e) if done > 0 && e.raw_os_error() == Some(libc::EINVAL) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            match no_eintr(|| rustix::io::pwrite(&self.file, &buf[done..], at))? {
                0 => return Err(write_zero()),
                n => done += n,
            }
        }
        Ok(())
    }

    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        let mut slices: Vec<IoSliceMut<'_>> = bufs.iter_mut().map(|b| IoSliceMut::new(b)).collect();
        let mut rest: &mut [IoSliceMut<'_>] = &mut slices;
        let mut done = 0usize;
        while !rest.is_empty() {
            let at = offset + done as u64;
            let n = no_eintr(|| rustix::io::preadv(&self.file, rest, at))?;
            if n == 0 {
                break;
            }
            done += n;
            IoSliceMut::advance_slices(&mut rest, n);
        }
        Ok(done)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        let mut slices: Vec<IoSlice<'_>> = bufs.iter().map(|b| IoSlice::new(b)).collect();
        let mut rest: &mut [IoSlice<'_>] = &mut slices;
        let mut done = 0usize;
        while !rest.is_empty() {
            let at = offset + done as u64;
            match no_eintr(|| rustix::io::pwritev(&self.file, rest, at))? {
                0 => return Err(write_zero()),
                n => {
                    done += n;
                    IoSlice::advance_slices(&mut rest, n);
                }
            }
        }
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        no_eintr(|| rustix::fs::fdatasync(&self.file))
    }

    fn allocate(&self, len: u64) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        match no_eintr(|| rustix::fs::fallocate(&self.file, FallocateFlags::empty(), 0, len)) {
            // Filesystems without fallocate (some FUSE ones): extend with a hole instead.
            Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
                if self.len()? < len {
                    self.set_len(len)?;
                }
                Ok(())
            }
            other => other,
        }
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        no_eintr(|| rustix::fs::ftruncate(&self.file, len))
    }

    fn len(&self) -> io::Result<u64> {
        let meta = self.file.metadata()?;
        if meta.file_type().is_file() {
            return Ok(meta.len());
        }
        // A block device's metadata says 0 bytes (verify of a device holding a copied data
        // file checked "0 pages" and said CLEAN): its size is where its end is.
        Ok(rustix::fs::seek(&self.file, rustix::fs::SeekFrom::End(0))?)
    }

    fn allocated(&self) -> Option<u64> {
        let st = rustix::fs::fstat(&self.file).ok()?;
        (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile)
            .then(|| u64::try_from(st.st_blocks).unwrap_or(0) * 512)
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn dio_align(&self) -> u32 {
        self.dio_align
    }
}

/// Chunk of [`read_all`]: large enough to be quick, a multiple of every direct-I/O unit.
const READ_ALL_CHUNK: usize = 1 << 20;

/// The whole content of an open [`Storage`] file (a log file for `verify` and `--resume`),
/// read in aligned chunks so that it works on a direct-I/O file too.
pub fn read_all(storage: &dyn Storage) -> io::Result<Vec<u8>> {
    let len = usize::try_from(storage.len()?).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(len.min(1 << 30));
    let mut buf = super::AlignedBuf::new(READ_ALL_CHUNK)?;
    while out.len() < len {
        let want = READ_ALL_CHUNK.min(super::align::round_up(len - out.len()));
        let n = storage.read_at(&mut buf[..want], out.len() as u64)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n.min(len - out.len())]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocated_says_what_the_filesystem_holds_not_the_length() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create");
        let s = FileStorage::new(file, path);
        s.set_len(8 << 20).expect("hole");
        let hole = s.allocated().expect("a file on a filesystem");
        assert!(hole < 8 << 20, "a file made by set_len is a hole: {hole}");
        s.write_at(&vec![7u8; 1 << 20], 0).expect("write");
        s.sync_data().expect("sync");
        let held = s.allocated().expect("allocated");
        assert!((1 << 20..8 << 20).contains(&held), "{held}");
    }
}
