//! The files `sqliosim verify` found: every file given or in the directories given, opened
//! read-only (a read-only copy or mount is verified as it is: nothing is opened for writing),
//! and told apart by their header page — ours, or not (yet) identified.
//!
//! A file without a readable header is not dropped at once: the journal may name it (the
//! device lost its header page, or fails to read it), and then it is checked as the journal's
//! file, its lost header a finding (`verify_lost.rs`). One whose page 0 the device cannot read
//! and that no journal names is said, not passed over in silence.
//!
//! In a directory, a symlink is not followed (anyone who can write the directory could point
//! `sqliosim.mdx` at a root-only file, and its pages would be read and dumped): only the
//! directory's own regular files are scanned, each opened with `O_NOFOLLOW`. A file named
//! with `--file` is the user's choice and is followed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::io::{AlignedBuf, OpenOptions, Storage};
use crate::page::{FileHeader, HeaderError, PAGE_SIZE};

/// One file to scan, with its header.
pub struct ScanTarget {
    /// Where it is.
    pub path: PathBuf,
    /// Its header (for a file whose header was lost, what the journal says it is).
    pub header: FileHeader,
    /// The file, open read-only.
    pub storage: Arc<dyn Storage>,
}

/// A file found without a readable sqliosim header.
pub struct Headless {
    /// Where it is.
    pub path: PathBuf,
    /// Why its page 0 is not a header of ours.
    pub why: HeaderError,
    /// The file, open read-only.
    pub storage: Arc<dyn Storage>,
    /// Given by name (`--file`): an error unless the journal names it.
    pub explicit: bool,
}

/// A backup stream found (a `[BackupUser]`'s `.bak`: it begins with a block header, not a
/// page header).
pub struct Stream {
    /// Where it is.
    pub path: PathBuf,
    /// The file, open read-only.
    pub storage: Arc<dyn Storage>,
    /// Given by name: checked whatever run it is of.
    pub explicit: bool,
    /// A log backup's stream (`.trn`), not a full backup's.
    pub log: bool,
}

/// Everything found.
#[derive(Default)]
pub struct Found {
    /// Files with a header of ours.
    pub targets: Vec<ScanTarget>,
    /// Files without one.
    pub headless: Vec<Headless>,
    /// Backup streams of ours.
    pub streams: Vec<Stream>,
}

impl Found {
    /// Opens `path` and adds it to what was found; a file that cannot be opened or read is an
    /// error when `explicit`, else skipped (a directory holds other files too). A file of ours
    /// whose header states a version this build does not read is an error either way.
    pub fn add(&mut self, path: &Path, explicit: bool) -> anyhow::Result<()> {
        match open(path, explicit) {
            // Another sqliosim's file, given or found: refused by name (exit 2), not judged.
            Ok((_, Err(HeaderError::Version(v)), _)) => return Err(v.at(path).into()),
            Ok((storage, Ok(header), _)) => self.targets.push(ScanTarget {
                path: path.to_path_buf(),
                header,
                storage,
            }),
            Ok((storage, Err(_), Some(log))) => self.streams.push(Stream {
                path: path.to_path_buf(),
                storage,
                explicit,
                log,
            }),
            Ok((storage, Err(why), None)) => self.headless.push(Headless {
                path: path.to_path_buf(),
                why,
                storage,
                explicit,
            }),
            Err(e) if explicit => return Err(e),
            Err(_) => {}
        }
        Ok(())
    }
}

/// The files given and those in the directories given (regular files, in name order).
pub fn discover(files: &[PathBuf], dirs: &[PathBuf]) -> anyhow::Result<Found> {
    let mut found = Found::default();
    for path in files {
        found.add(path, true)?;
    }
    for dir in dirs {
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the directory {}", dir.display()))?;
        let mut paths: Vec<PathBuf> = Vec::new();
        for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_file() => paths.push(p),
                // Names readable but not their files: a directory without search permission.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => anyhow::bail!(
                    "cannot look into the directory {}: {e} (reading its files needs search permission, x, on it)",
                    dir.display()
                ),
                _ => {}
            }
        }
        paths.sort();
        for p in paths {
            found.add(&p, false)?;
        }
    }
    Ok(found)
}

/// A file opened: the file, its page 0 decoded, and whether it begins as a backup stream does
/// (`Some(true)`: a log backup's).
type Opened = (
    Arc<dyn Storage>,
    Result<FileHeader, HeaderError>,
    Option<bool>,
);

/// Opens `path` read-only (a symlink followed only when `follow`) and decodes its page 0.
fn open(path: &Path, follow: bool) -> anyhow::Result<Opened> {
    let opts = OpenOptions {
        create: false,
        direct: false,
        write_through: false,
    };
    let storage: Arc<dyn Storage> = Arc::new(
        crate::io::direct::open_existing_file(path, opts, false, follow)
            .with_context(|| format!("cannot open {}", path.display()))?,
    );
    let mut buf = AlignedBuf::new(PAGE_SIZE)?;
    // A read error is the device's answer about page 0, not a reason to pass over the file:
    // the journal may name it (then it is a finding, and its other pages are checked).
    let mut stream = None;
    let header = match storage.read_at(&mut buf, 0) {
        Ok(n) => {
            if buf[..n].starts_with(crate::sim::engine::backup::MAGIC) {
                stream = Some(false);
            } else if buf[..n].starts_with(crate::sim::engine::backup::logstream::MAGIC) {
                stream = Some(true);
            }
            FileHeader::decode(&buf[..n])
        }
        Err(e) => Err(HeaderError::Unreadable {
            errno: e.raw_os_error().unwrap_or(0),
            what: e.to_string(),
        }),
    };
    Ok((storage, header, stream))
}
