//! What the machine offers, for the defaults that depend on it (CPUCount, MaxMemoryMB). Kept as
//! plain data so tests can pass a fixed machine.

/// The facts about the machine the configuration needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    /// Available parallelism (CPUs this process may use).
    pub cpus: u32,
    /// MemAvailable from /proc/meminfo, in MB, or less when the process's cgroup (a
    /// container's limit) leaves less.
    pub mem_available_mb: u64,
    /// MemTotal from /proc/meminfo, in MB, or the cgroup's memory limit when smaller.
    pub mem_total_mb: u64,
}

/// The most schedulers SQLIOSim allows (`CPUCount` ≤ 64).
pub const MAX_CPU_COUNT: u32 = 64;

impl Host {
    /// Reads the machine. Missing information falls back to 1 CPU and 1024 MB, so a locked-down
    /// /proc does not stop a run (the user can set CPUCount and MaxMemoryMB).
    pub fn detect() -> Host {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let total = meminfo_mb(&meminfo, "MemTotal").unwrap_or(1024);
        let available = meminfo_mb(&meminfo, "MemAvailable").unwrap_or(total);
        let (total, available) = within_cgroup(total, available, super::cgroup::detect());
        Host {
            cpus: u32::try_from(cpus).unwrap_or(MAX_CPU_COUNT),
            mem_available_mb: available,
            mem_total_mb: total,
        }
    }

    /// The `CPUCount` default: available parallelism, at most 64.
    pub fn default_cpu_count(&self) -> u32 {
        self.cpus.clamp(1, MAX_CPU_COUNT)
    }
}

/// The host's total and available memory (MB) bounded by the cgroup's limit and what the
/// cgroup leaves of it.
fn within_cgroup(
    total: u64,
    available: u64,
    cgroup: Option<super::cgroup::CgroupMemory>,
) -> (u64, u64) {
    match cgroup {
        Some(c) => {
            let limit = c.limit >> 20;
            let left = c.limit.saturating_sub(c.used) >> 20;
            (total.min(limit).max(1), available.min(left).max(1))
        }
        None => (total, available),
    }
}

/// The value of `field` (a `kB` line) in /proc/meminfo text, in MB.
pub fn meminfo_mb(meminfo: &str, field: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix(field)?.strip_prefix(':')?;
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kb / 1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_meminfo_fields() {
        let text = "MemTotal:       24683928 kB\nMemFree: 1 kB\nMemAvailable:   24318600 kB\n";
        assert_eq!(meminfo_mb(text, "MemTotal"), Some(24105));
        assert_eq!(meminfo_mb(text, "MemAvailable"), Some(23748));
        assert_eq!(meminfo_mb(text, "Cached"), None);
    }

    #[test]
    fn a_cgroup_limit_bounds_total_and_available() {
        use super::super::cgroup::CgroupMemory;
        let c = CgroupMemory {
            limit: 2 << 30,
            used: 512 << 20,
        };
        assert_eq!(within_cgroup(24_000, 20_000, Some(c)), (2048, 1536));
        assert_eq!(within_cgroup(1000, 800, Some(c)), (1000, 800));
        assert_eq!(within_cgroup(1000, 800, None), (1000, 800));
    }

    #[test]
    fn caps_cpu_count_at_64() {
        let h = Host {
            cpus: 128,
            mem_available_mb: 1,
            mem_total_mb: 1,
        };
        assert_eq!(h.default_cpu_count(), 64);
    }
}
