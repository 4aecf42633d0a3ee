//! The directories a run is told to test, before anything is created: a `--dir` written the
//! Windows way (`-dir 'D:\'` from a ported SQLIOSim script) is mapped through `--drive-map` and
//! `SQLIOSIM_DRIVE_<LETTER>` by the same [`DriveMap`] the sqlio and diskspd front ends use (it
//! would otherwise become a directory literally named `D:\`), and the run header warns when a
//! directory did not exist (a typo in a mount path silently tests the disk underneath) or lies
//! on the root filesystem.

use std::path::{Path, PathBuf};

use crate::bench::sqlio::args::DriveMap;
use crate::config::is_windows_path;

/// `--dir` values with Windows drive paths mapped; an unmapped drive or a UNC path is refused
/// (exit 2) with what to set.
pub fn map_windows_dirs(dirs: &[PathBuf], specs: &[String]) -> anyhow::Result<Vec<PathBuf>> {
    let mut map = DriveMap::default();
    for s in specs {
        map.add(s).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    dirs.iter()
        .map(|d| {
            let Some(text) = d.to_str().filter(|t| is_windows_path(t)) else {
                return Ok(d.clone());
            };
            if text.starts_with("\\\\") {
                anyhow::bail!("--dir {text}: a UNC path (\\\\server\\share) cannot be tested here; mount the share and give its Linux directory");
            }
            map.resolve(text)
                .map_err(|e| anyhow::anyhow!("--dir {e}"))
        })
        .collect()
}

/// The header's warnings about where the files go, taken before the directories are created:
/// a directory that does not exist yet, and one on the root filesystem (the same device as `/`).
pub fn placement_warnings(dirs: &[&Path]) -> Vec<String> {
    let root = dev_of(Path::new("/"));
    let mut out = Vec::new();
    for dir in dirs {
        let (existing, created) = nearest_existing(dir);
        let on_root = root.is_some() && dev_of(&existing) == root;
        let line = match (created, on_root) {
            (true, true) => format!("Warning: {} did not exist and is created now, on the root filesystem: if it was meant to be a mount point, this run tests the root disk instead (check the path, or mount the device first)", dir.display()),
            (true, false) => format!("Warning: {} did not exist and is created now, on the filesystem of {}: check the path if it was meant to be a mount point", dir.display(), existing.display()),
            (false, true) => format!("Warning: {} lies on the root filesystem (the same device as /): make sure this is the disk you mean to test", dir.display()),
            (false, false) => continue,
        };
        out.push(line);
    }
    out
}

/// The device number of `p`, when it can be read.
fn dev_of(p: &Path) -> Option<u64> {
    rustix::fs::stat(p).ok().map(|st| st.st_dev)
}

/// The nearest existing ancestor of `dir` (itself when it exists), and whether `dir` is missing.
fn nearest_existing(dir: &Path) -> (PathBuf, bool) {
    let mut p = dir;
    loop {
        if p.exists() {
            return (p.to_path_buf(), p != dir);
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => return (PathBuf::from("/"), true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drive_path_is_mapped_and_a_unc_path_refused() {
        let specs = ["D=/mnt/d".to_string()];
        let got = map_windows_dirs(&[PathBuf::from(r"D:\"), PathBuf::from(r"d:\sub\x")], &specs);
        let got = got.expect("mapped");
        assert_eq!(
            got,
            [PathBuf::from("/mnt/d/"), PathBuf::from("/mnt/d/sub/x")]
        );
        let plain = map_windows_dirs(&[PathBuf::from("/mnt/a:b")], &[]).expect("plain");
        assert_eq!(plain, [PathBuf::from("/mnt/a:b")]);
        let unc = map_windows_dirs(&[PathBuf::from(r"\\srv\share")], &[]);
        assert!(unc.is_err_and(|e| e.to_string().contains("UNC")));
    }

    #[test]
    fn a_missing_directory_is_said_to_be_created() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let missing = tmp.path().join("no/such/mount");
        let w = placement_warnings(&[missing.as_path()]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("did not exist and is created now"), "{w:?}");
        assert!(w[0].contains(&missing.display().to_string()), "{w:?}");
    }
}
