//! CPU accounting for capacity runs: process user/system time from `getrusage`, and per-CPU
//! busy/user/kernel/idle shares from `/proc/stat` for DiskSpd's CPU table.

#![expect(
    unsafe_code,
    reason = "getrusage(2) through libc fills a C struct: a zeroed struct and a raw call"
)]

use serde::Serialize;

/// A snapshot taken at a phase boundary.
#[derive(Debug, Clone, Default)]
pub struct CpuSample {
    /// Process user time, seconds.
    user_s: f64,
    /// Process system time, seconds.
    sys_s: f64,
    /// Per CPU: (user, kernel, idle) jiffies.
    per_cpu: Vec<(u64, u64, u64)>,
}

/// One row of the per-CPU table, percentages of the interval.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuRow {
    /// Busy (user + kernel).
    pub usage: f64,
    /// User mode.
    pub user: f64,
    /// Kernel mode (system, irq, softirq).
    pub kernel: f64,
    /// Idle (idle + iowait).
    pub idle: f64,
}

/// CPU used between two samples.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct CpuUsage {
    /// User time of this process, seconds.
    pub process_user_s: f64,
    /// System time of this process, seconds.
    pub process_sys_s: f64,
    /// Per-CPU shares of the whole machine.
    pub per_cpu: Vec<CpuRow>,
}

impl CpuUsage {
    /// Process CPU time (user + system), seconds.
    pub fn process_s(&self) -> f64 {
        self.process_user_s + self.process_sys_s
    }
}

fn rusage_self() -> (f64, f64) {
    // SAFETY: `getrusage` fills the zero-initialised struct we own; RUSAGE_SELF is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: see above; the pointer is to a live, writable `rusage`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// Parses the `cpuN` lines of `/proc/stat` into (user, kernel, idle) jiffies.
pub fn parse_proc_stat(text: &str) -> Vec<(u64, u64, u64)> {
    text.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .map(|l| {
            let v: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            let get = |i: usize| v.get(i).copied().unwrap_or(0);
            // user nice system idle iowait irq softirq steal
            (get(0) + get(1), get(2) + get(5) + get(6), get(3) + get(4))
        })
        .collect()
}

impl CpuSample {
    /// Takes a sample now; a missing `/proc/stat` leaves the per-CPU part empty.
    pub fn now() -> CpuSample {
        let (user_s, sys_s) = rusage_self();
        let per_cpu = std::fs::read_to_string("/proc/stat")
            .map(|t| parse_proc_stat(&t))
            .unwrap_or_default();
        CpuSample {
            user_s,
            sys_s,
            per_cpu,
        }
    }

    /// What was used from `self` to `later`.
    pub fn usage_until(&self, later: &CpuSample) -> CpuUsage {
        let per_cpu = self
            .per_cpu
            .iter()
            .zip(&later.per_cpu)
            .map(|(a, b)| {
                let (u, k, i) = (
                    b.0.saturating_sub(a.0),
                    b.1.saturating_sub(a.1),
                    b.2.saturating_sub(a.2),
                );
                let total = (u + k + i).max(1) as f64;
                let pct = |x: u64| 100.0 * x as f64 / total;
                CpuRow {
                    usage: pct(u + k),
                    user: pct(u),
                    kernel: pct(k),
                    idle: pct(i),
                }
            })
            .collect();
        CpuUsage {
            process_user_s: (later.user_s - self.user_s).max(0.0),
            process_sys_s: (later.sys_s - self.sys_s).max(0.0),
            per_cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_become_user_kernel_idle() {
        let text =
            "cpu  10 0 10 80 0 0 0 0\ncpu0 5 1 3 90 10 1 1 0\ncpu1 1 0 1 1 0 0 0 0\nintr 5\n";
        assert_eq!(parse_proc_stat(text), vec![(6, 5, 100), (1, 1, 1)]);
        let a = CpuSample {
            per_cpu: vec![(0, 0, 0)],
            ..Default::default()
        };
        let b = CpuSample {
            per_cpu: vec![(25, 25, 50)],
            ..Default::default()
        };
        let u = a.usage_until(&b);
        assert_eq!(
            u.per_cpu[0],
            CpuRow {
                usage: 50.0,
                user: 25.0,
                kernel: 25.0,
                idle: 50.0
            }
        );
    }
}
