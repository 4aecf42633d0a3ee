//! The door for small files the tool appends to through the page cache, makes durable with
//! `fdatasync` and replaces whole by rename: the durability journal.
//!
//! They are not [`Storage`](super::Storage) files: no O_DIRECT, no alignment, a write
//! position that moves with each append, and a replacement that must be atomic across a crash
//! (written beside as `PATH.new.<random>`, synced, renamed over `PATH`, directory synced;
//! the random part so that a name planted beside cannot stop the compaction). A
//! [`Backend`](super::Backend) hands them out ([`Backend::create_append`](super::Backend::create_append))
//! and reads them back ([`Backend::read_whole`](super::Backend::read_whole)), so the faulty backend
//! can lose or tear the journal's own writes as it does the data files'.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::safefile::{self, Create, Kind, Replacement, Use};
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
    /// Replaces the whole content with what `fill` writes, durably and atomically: a crash at
    /// any moment leaves the old content or the new one. Appends go on in the new file. On
    /// failure (of the file or of `fill`) the old content is kept and still appended to.
    /// The content is written as `fill` hands it out, never gathered whole in memory.
    fn replace(&mut self, fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>)
        -> io::Result<()>;
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
    /// Creates (or empties) `path` and makes its directory entry durable. An existing file is
    /// emptied only once its descriptor shows it is ours (see [`safefile`]).
    pub fn create(path: &Path) -> Result<DiskAppendFile, IoError> {
        let file = safefile::open_own(path, Create::Either)?;
        file.set_len(0).map_err(os(path, "cannot empty"))?;
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
    /// durable); appends go after what it holds. An existing file is used only once its
    /// descriptor shows it is ours (see [`safefile`]).
    pub fn open(path: &Path) -> Result<DiskAppendFile, IoError> {
        let file = safefile::open_own(path, Create::Either)?;
        let len = file.metadata().map_err(os(path, "cannot stat"))?.len();
        sync_dir(path).map_err(os(path, "cannot sync the directory of"))?;
        Ok(DiskAppendFile {
            file,
            path: path.to_path_buf(),
            len,
        })
    }
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

    fn replace(
        &mut self,
        fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let new = replacement_path(&self.path);
        let tmp = new.file_name().unwrap_or_default();
        let mut r = Replacement::create_through(&self.path, tmp)?;
        let len = {
            // Unbuffered: `fill` writes whole records (a Durable record of a snapshot is up to
            // 1 MiB), and a run under `ulimit -v` must not need a buffer beside them.
            let mut out = Counted {
                inner: r.file(),
                len: 0,
            };
            fill(&mut out)?;
            out.len
        };
        self.file = r.commit_durable()?;
        self.len = len;
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// A writer that counts the bytes it took.
struct Counted<W> {
    inner: W,
    len: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Makes a new or renamed entry of `file`'s directory durable.
fn sync_dir(file: &Path) -> io::Result<()> {
    let (dir, _) = safefile::Dir::of(file)?;
    Ok(dir.sync()?)
}

/// The whole content of a journal on the real filesystem: never through a symlink, never
/// waiting on a FIFO, only a regular file, whose owner (as `use_` says) and size (within
/// [`Kind::Journal`]'s limit) are checked on the descriptor before a byte is read. Any number
/// of links is fine for [`Use::Input`]: nothing is written through this descriptor (a
/// hard-linked copy of a run, `cp -al`, is read as it is; whoever writes the name later
/// checks its links then).
pub(crate) fn read_whole(path: &Path, use_: Use) -> Result<Vec<u8>, IoError> {
    let Some(f) = safefile::open_existing(path, use_)? else {
        return Err(IoError::Os {
            path: path.to_path_buf(),
            what: "cannot read",
            source: io::ErrorKind::NotFound.into(),
        });
    };
    Ok(safefile::read_checked(f, path, Kind::Journal)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_compaction_temporary_is_passed_over_and_the_journal_replaced() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").expect("victim");
        let path = dir.path().join("sqliosim.journal");
        let mut j = DiskAppendFile::create(&path).expect("create");
        j.append(b"one").expect("append");
        // The name the temporary had before it was random: planted, it no longer matters.
        std::os::unix::fs::symlink(&victim, replacement_path(&path)).expect("symlink");
        j.replace(&mut |w| w.write_all(b"snapshot"))
            .expect("replaced through a fresh name");
        assert_eq!(j.len(), 8, "the length the replacement wrote");
        j.append(b"two").expect("appended to the new journal");
        assert_eq!(std::fs::read(&path).expect("read"), b"snapshottwo");
        assert_eq!(std::fs::read(&victim).expect("read"), b"precious");
        let planted = std::fs::symlink_metadata(replacement_path(&path)).expect("still there");
        assert!(
            planted.file_type().is_symlink(),
            "the planted name untouched"
        );
        std::fs::remove_file(&path).expect("rm");
        std::fs::hard_link(&victim, &path).expect("link");
        let e = DiskAppendFile::create(&path).expect_err("a hard link");
        assert!(e.to_string().contains("has 2 hard links"), "{e}");
        assert_eq!(std::fs::read(&victim).expect("read"), b"precious");
    }
}
