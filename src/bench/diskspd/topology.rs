//! The processor topology DiskSpd's XML reports (`<ProcessorTopology>` and each `<CPU>`'s
//! socket, NUMA node and core), read from Linux sysfs. Linux has no processor groups: every
//! CPU is in group 0, which is what DiskSpd reports on a machine with up to 64 processors.

use std::collections::BTreeMap;
use std::path::Path;

/// Where one CPU sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuPlace {
    /// Logical CPU number (Linux `cpuN`).
    pub id: u32,
    /// Physical package (`topology/physical_package_id`).
    pub socket: u32,
    /// NUMA node (the `nodeN` entry of the CPU's sysfs directory; 0 without NUMA).
    pub node: u32,
    /// Core within the package (`topology/core_id`).
    pub core: u32,
}

/// The CPUs of the machine, in CPU number order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    /// One entry per online CPU.
    pub cpus: Vec<CpuPlace>,
}

fn read_u32(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn node_of(cpu_dir: &Path) -> u32 {
    let Ok(entries) = std::fs::read_dir(cpu_dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .next()
        .unwrap_or(0)
}

impl Topology {
    /// Reads the online CPUs' places from `/sys/devices/system/cpu` (empty when unreadable).
    pub fn read() -> Topology {
        Topology::read_from(Path::new("/sys/devices/system/cpu"))
    }

    /// Reads the places from a sysfs-like directory of `cpuN` entries.
    pub fn read_from(root: &Path) -> Topology {
        let mut cpus: Vec<CpuPlace> = std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let id: u32 = e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok()?;
                let dir = e.path();
                // An offline CPU has no topology directory; /proc/stat does not list it either.
                let socket = read_u32(&dir.join("topology/physical_package_id"))?;
                Some(CpuPlace {
                    id,
                    socket,
                    node: node_of(&dir),
                    core: read_u32(&dir.join("topology/core_id")).unwrap_or(id),
                })
            })
            .collect();
        cpus.sort_by_key(|c| c.id);
        Topology { cpus }
    }

    /// The place of the `i`-th CPU of the per-CPU table (same order: online CPUs by number).
    pub fn place(&self, i: usize) -> CpuPlace {
        self.cpus.get(i).copied().unwrap_or(CpuPlace {
            id: i as u32,
            ..CpuPlace::default()
        })
    }

    /// CPU numbers grouped by `key`, in key order.
    pub fn by<K: Ord>(&self, key: impl Fn(&CpuPlace) -> K) -> BTreeMap<K, Vec<u32>> {
        let mut m: BTreeMap<K, Vec<u32>> = BTreeMap::new();
        for c in &self.cpus {
            m.entry(key(c)).or_default().push(c.id);
        }
        m
    }
}

/// A processor mask as DiskSpd prints it (`0x` and hex digits), for any number of CPUs.
pub fn mask(ids: &[u32]) -> String {
    let words = ids.iter().map(|&i| i as usize / 64 + 1).max().unwrap_or(1);
    let mut w = vec![0u64; words];
    for &i in ids {
        w[i as usize / 64] |= 1 << (i % 64);
    }
    let mut s = format!("0x{:x}", w[words - 1]);
    for word in w.iter().rev().skip(1) {
        s.push_str(&format!("{word:016x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_cover_any_cpu_count() {
        assert_eq!(mask(&[0, 1]), "0x3");
        assert_eq!(mask(&[]), "0x0");
        assert_eq!(mask(&[4]), "0x10");
        assert_eq!(mask(&[64]), "0x10000000000000000");
    }

    #[test]
    fn sysfs_layout_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (cpu, pkg, core, node) in [(0, 0, 0, 0), (1, 0, 0, 0), (2, 1, 5, 1)] {
            let t = dir.path().join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&t).expect("mkdir");
            std::fs::write(t.join("physical_package_id"), format!("{pkg}\n")).expect("pkg");
            std::fs::write(t.join("core_id"), format!("{core}\n")).expect("core");
            std::fs::create_dir_all(dir.path().join(format!("cpu{cpu}/node{node}"))).expect("n");
        }
        std::fs::create_dir_all(dir.path().join("cpufreq")).expect("other entry");
        let t = Topology::read_from(dir.path());
        assert_eq!(t.cpus.len(), 3);
        assert_eq!(
            t.place(2),
            CpuPlace {
                id: 2,
                socket: 1,
                node: 1,
                core: 5
            }
        );
        assert_eq!(t.by(|c| c.socket).get(&0), Some(&vec![0, 1]));
        assert_eq!(t.by(|c| (c.socket, c.core)).len(), 2);
    }
}
