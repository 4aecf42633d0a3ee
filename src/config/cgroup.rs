//! The memory a container (or a systemd slice) gives this process: its cgroup's limit and what
//! the cgroup already uses, so that the `MaxMemoryMB` default fits a container's limit and not
//! the host's `/proc/meminfo` (a pod with a 2 GiB limit on a 256 GiB host would otherwise size
//! its buffer pool for the host, and be OOM-killed).
//!
//! cgroup v2 (`0::PATH` in `/proc/self/cgroup`; `memory.max`, `memory.current`) and v1 (the
//! `memory` controller's line; `memory.limit_in_bytes`, `memory.usage_in_bytes`) are both read.
//! The limit is the smallest set on the path from the process's cgroup up to the root of the
//! mount (a parent's limit binds its children); inside a cgroup namespace the path is `/` and
//! the mount's root is the container's own cgroup. Kept as a pure function of the text of
//! `/proc/self/cgroup` and a directory, so tests build the trees they need.

use std::path::{Path, PathBuf};

/// A limit at or above this is no limit (v1 writes "unlimited" as a huge page-aligned number).
const UNLIMITED: u64 = 1 << 62;

/// The memory limit of this process's cgroup, and what the cgroup uses now, in bytes; `None`
/// where no limit is set (or nothing can be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupMemory {
    /// The smallest limit on the path to the root.
    pub limit: u64,
    /// Bytes the process's own cgroup uses now.
    pub used: u64,
}

/// Reads this process's cgroup memory limit from `/proc/self/cgroup` and `/sys/fs/cgroup`.
pub fn detect() -> Option<CgroupMemory> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    of(&text, Path::new("/sys/fs/cgroup"))
}

/// The limit for a process whose `/proc/self/cgroup` says `proc_cgroup`, with cgroup
/// filesystems under `mounts` (`/sys/fs/cgroup`: v2 at its root, or at `unified/` beside v1's
/// `memory/`).
pub fn of(proc_cgroup: &str, mounts: &Path) -> Option<CgroupMemory> {
    let v1 = proc_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then(|| path.to_string())
    });
    if let Some(path) = v1 {
        return limit_on_path(
            &mounts.join("memory"),
            &path,
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
        );
    }
    let v2 = proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    limit_on_path(mounts, v2, "memory.max", "memory.current")
}

/// The smallest of `limit_file` from the cgroup at `path` under `root` up to `root`, with the
/// leaf's `used_file`.
fn limit_on_path(
    root: &Path,
    path: &str,
    limit_file: &str,
    used_file: &str,
) -> Option<CgroupMemory> {
    let leaf = root.join(path.trim_start_matches('/'));
    let mut dirs: Vec<PathBuf> = leaf
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    dirs.dedup();
    let limit = dirs
        .iter()
        .filter_map(|d| number(&d.join(limit_file)))
        .filter(|&l| l < UNLIMITED)
        .min()?;
    let used = dirs
        .first()
        .and_then(|d| number(&d.join(used_file)))
        .unwrap_or(0);
    Some(CgroupMemory { limit, used })
}

/// A number in a cgroup file (`max` is none).
fn number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    #[test]
    fn v2_takes_the_smallest_limit_on_the_path() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path();
        write(&root.join("memory.max"), "max\n");
        write(&root.join("kube/memory.max"), "4294967296\n");
        write(&root.join("kube/pod/memory.max"), "max\n");
        write(&root.join("kube/pod/memory.current"), "1048576\n");
        let got = of("0::/kube/pod\n", root).expect("a limit");
        assert_eq!(
            got,
            CgroupMemory {
                limit: 4 << 30,
                used: 1 << 20
            }
        );
        // In a cgroup namespace the path is / and the mount's root is the container's cgroup.
        write(&root.join("memory.max"), "536870912\n");
        assert_eq!(of("0::/\n", root).map(|m| m.limit), Some(512 << 20));
    }

    #[test]
    fn v1_reads_the_memory_controller_and_no_limit_is_none() {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path();
        write(
            &root.join("memory/memory.limit_in_bytes"),
            "9223372036854771712\n",
        );
        write(
            &root.join("memory/job/memory.limit_in_bytes"),
            "314572800\n",
        );
        write(&root.join("memory/job/memory.usage_in_bytes"), "1000\n");
        let text = "5:cpuset:/\n4:memory:/job\n0::/\n";
        assert_eq!(
            of(text, root),
            Some(CgroupMemory {
                limit: 300 << 20,
                used: 1000
            })
        );
        assert_eq!(of("4:memory:/\n", root), None, "unlimited is no limit");
        assert_eq!(of("0::/nowhere\n", root), None);
    }
}
