//! The door for small files the tool appends to through the page cache, makes durable with
//! `fdatasync` and replaces whole by rename: the durability journal.
//!
//! They are not [`Storage`](super::Storage) files: no O_DIRECT, no alignment, a write
//! position that moves with each append, and a replacement that must be atomic across a crash
//! (written beside as `PATH.new`, synced, renamed over `PATH`, directory synced). A
//! [`Backend`](super::Backend) hands them out ([`Backend::create_append`](super::Backend::create_append))
//! and reads them back ([`Backend::read_whole`](super::Backend::read_whole)), so the faulty backend
//! can lose or tear the journal's own writes as it does the data files'.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::IoError;

/// A file written by appending, made durable with `fdatasync`, replaced whole atomically.
pub trait AppendFile: Send + std::fmt::Debug {
    /// Appends `bytes` at the end of what this handle wrote, in one write.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes every completed append durable (fdatasync).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Cuts the file to `len` bytes (what a failed append left after them goes); appends
    /// continue at `len`.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
    /// Replaces the whole content with `bytes`, durably and atomically: a crash at any moment
    /// leaves the old content or the new one. Appends go on in the new file. On failure the
    /// old content is kept and still appended to.
    fn replace(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Bytes in the file, as this handle wrote them.
    fn len(&self) -> u64;
    /// True when nothing was written yet.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Where the file is.
    fn path(&self) -> &Path;
}

/// Where [`AppendFile::replace`] writes the new content before renaming it over `path`.
pub fn replacement_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

fn os<'a>(path: &'a Path, what: &'static str) -> impl FnOnce(io::Error) -> IoError + 'a {
    move |source| IoError::Os {
        path: path.to_path_buf(),
        what,
        source,
    }
}

/// An append file on the real filesystem, through the page cache.
#[derive(Debug)]
pub struct DiskAppendFile {
    file: File,
    path: PathBuf,
    len: u64,
}

impl DiskAppendFile {
    /// Creates (or empties) `path` and makes its directory entry durable.
    pub fn create(path: &Path) -> Result<DiskAppendFile, IoError> {
        let file = create_empty(path).map_err(os(path, "cannot create"))?;
        sync_dir(path).map_err(os(path, "cannot sync the directory of"))?;
        Ok(DiskAppendFile {
            file,
            path: path.to_path_buf(),
            len: 0,
        })
    }
}

impl DiskAppendFile {
    /// Opens `path` keeping its content (created when missing, its directory entry made
    /// durable); appends go after what it holds.
    pub fn open(path: &Path) -> Result<DiskAppendFile, IoError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(os(path, "cannot open"))?;
        let len = file.metadata().map_err(os(path, "cannot stat"))?.len();
        sync_dir(path).map_err(os(path, "cannot sync the directory of"))?;
        Ok(DiskAppendFile {
            file,
            path: path.to_path_buf(),
            len,
        })
    }
}

fn create_empty(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)
}

impl AppendFile for DiskAppendFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Positional, so that a failed partial append never moves where the next one goes.
        std::os::unix::fs::FileExt::write_all_at(&self.file, bytes, self.len)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.len = len;
        Ok(())
    }

    fn replace(&mut self, bytes: &[u8]) -> io::Result<()> {
        let new = replacement_path(&self.path);
        let written = (|| {
            let mut f = create_empty(&new)?;
            f.write_all(bytes)?;
            f.sync_data()?;
            Ok::<File, io::Error>(f)
        })();
        let f = match written {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_file(&new);
                return Err(e);
            }
        };
        std::fs::rename(&new, &self.path)?;
        self.file = f;
        self.len = bytes.len() as u64;
        sync_dir(&self.path)
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Makes a new or renamed entry of `file`'s directory durable.
fn sync_dir(file: &Path) -> io::Result<()> {
    match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => File::open(dir)?.sync_all(),
        None => File::open(".")?.sync_all(),
    }
}

/// The whole content of a file on the real filesystem.
pub(crate) fn read_whole(path: &Path) -> Result<Vec<u8>, IoError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(os(path, "cannot read"))?;
    Ok(bytes)
}
