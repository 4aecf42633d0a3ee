//! The copies `sqliosim restore` writes: their names, the checks every name passes before any
//! copy is created, and their creation through the same door as every file of a run
//! (`engine::files::create`, over `io::safefile`): header page, then the size allocated.
//!
//! A copy is `STREAM-NAME.fileID.restored` (`sqliosim.bak.file0.restored`): named after the
//! stream it came from, so it is never the live restore's `NAME.restored` (a run's evidence) nor
//! a file of the set. Each name is looked at (`lstat`) before anything is created: a symlink,
//! hard link, FIFO, directory, device or another user's file there is refused (exit 2, naming
//! the path), and a regular file that is not a file of sqliosim is refused unless `--force`.
//! A copy left by an earlier `sqliosim restore` carries a sqliosim header: it is ours and is
//! written over. The open that follows is itself `O_NOFOLLOW` and checked on its descriptor,
//! so a name swapped after the look is refused too.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::io::safefile::{self, Dir, SafeFileError, Use};
use crate::io::{Backend, BufferedBackend, DirectBackend, IoError, OpenOptions, Storage};
use crate::page::{FileRole, PAGE_SIZE};
use crate::sim::engine::backup::restore::Target;
use crate::sim::engine::files::{self, FileError, Prepare};

/// A copy to create: where, of which file, and how many pages (header page included).
#[derive(Debug, Clone)]
pub(super) struct Planned {
    pub(super) path: PathBuf,
    pub(super) file_id: u32,
    pub(super) pages: u64,
}

/// The name of the copy of file `id` restored from the stream at `stream`.
pub(super) fn copy_name(stream: &Path, id: u32) -> OsString {
    let mut name = stream
        .file_name()
        .map_or_else(|| OsString::from("stream"), OsString::from);
    name.push(format!(".file{id}.restored"));
    name
}

/// The directory of the copies: `to`, else the stream's own.
pub(super) fn copies_dir(stream: &Path, to: Option<&Path>) -> PathBuf {
    match (to, stream.parent()) {
        (Some(d), _) => d.to_path_buf(),
        (None, Some(d)) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// One copy per file the stream carries pages of (`last_pages`: the highest page of each),
/// every name checked before any is created.
pub(super) fn plan(
    stream: &Path,
    dir: &Path,
    last_pages: &BTreeMap<u32, u64>,
    force: bool,
) -> anyhow::Result<Vec<Planned>> {
    let opened = Dir::open(dir).map_err(|e| anyhow::anyhow!("the directory of the copies: {e}"))?;
    let mut out = Vec::new();
    for (&file_id, &last) in last_pages {
        let name = copy_name(stream, file_id);
        let path = dir.join(&name);
        if let Some(st) = opened.stat(&name)? {
            if let Some(problem) = safefile::problem_of(&st, Use::Own) {
                return Err(SafeFileError::Refused { path, problem }.into());
            }
        }
        files::check_ownership(&DirectBackend::new(), &path, force)?;
        let pages = last.checked_add(1).ok_or_else(|| {
            anyhow::anyhow!("the stream carries page {last} of file {file_id}: no copy can hold it")
        })?;
        out.push(Planned {
            path,
            file_id,
            pages,
        });
    }
    Ok(out)
}

/// Creates every planned copy (direct I/O unless the filesystem refuses it; then buffered,
/// and the second value says so), stamped with the stream's run id.
pub(super) fn create(
    planned: &[Planned],
    run_id: u64,
    force: bool,
) -> anyhow::Result<(Vec<Target>, Option<String>)> {
    let mut targets = Vec::new();
    let mut buffered = None;
    for p in planned {
        let generations = slots(p)?;
        let storage = match create_one(&DirectBackend::new(), p, run_id, force, true) {
            Err(FileError::Io(IoError::DirectRefused { filesystem, .. })) => {
                buffered = Some(filesystem);
                create_one(&BufferedBackend::new(), p, run_id, force, false)?
            }
            other => other?,
        };
        targets.push(Target {
            path: p.path.clone(),
            file_id: p.file_id,
            storage,
            generations,
            writes: 0,
        });
    }
    Ok((targets, buffered))
}

/// The copy's table of generations, refused (not aborted on) when memory cannot hold it: a
/// stream's page numbers come from outside.
fn slots(p: &Planned) -> anyhow::Result<Vec<Option<u64>>> {
    let n = usize::try_from(p.pages)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        anyhow::anyhow!(
            "{}: a copy of {} pages ({} bytes) is more than this tool can track",
            p.path.display(),
            p.pages,
            p.pages.saturating_mul(PAGE_SIZE as u64)
        )
    })?;
    v.resize(n, None);
    Ok(v)
}

fn create_one(
    backend: &dyn Backend,
    p: &Planned,
    run_id: u64,
    force: bool,
    direct: bool,
) -> Result<Arc<dyn Storage>, FileError> {
    let prepare = Prepare {
        run_id,
        file_id: p.file_id,
        role: FileRole::Data,
        pages: p.pages,
        stamp: false,
        sparse: false,
        force,
        open: OpenOptions {
            create: true,
            direct,
            write_through: false,
        },
        force_4k_log: false,
    };
    files::create(backend, &p.path, &prepare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_named_after_its_stream_and_file() {
        let name = copy_name(Path::new("/d/sqliosim.0123456789ABCDEF.bak"), 3);
        assert_eq!(name, "sqliosim.0123456789ABCDEF.bak.file3.restored");
        assert_eq!(
            copies_dir(Path::new("sqliosim.bak"), None),
            PathBuf::from(".")
        );
        assert_eq!(
            copies_dir(Path::new("/d/sqliosim.bak"), Some(Path::new("/e"))),
            PathBuf::from("/e")
        );
        assert_eq!(
            copies_dir(Path::new("/d/sqliosim.bak"), None),
            PathBuf::from("/d")
        );
    }
}
