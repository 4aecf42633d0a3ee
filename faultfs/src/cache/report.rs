//! What the cache reports: its status line, the `lied` listing, and which files a lie covers.

use std::fmt::Write as _;

use super::Cache;

/// Which files a lying device lies about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LieScope {
    /// Every file.
    All,
    /// Only these names.
    Files(Vec<String>),
}

impl LieScope {
    /// Whether a flush of `name` is lied about.
    pub fn covers(&self, name: &str) -> bool {
        match self {
            LieScope::All => true,
            LieScope::Files(names) => names.iter().any(|n| n == name),
        }
    }

    /// `*` or the names, comma-separated.
    pub fn describe(&self) -> String {
        match self {
            LieScope::All => "*".into(),
            LieScope::Files(names) => names.join(","),
        }
    }
}

impl Cache {
    /// Lied-about ranges: those dropped by power cuts (`lost`), then those still cached.
    pub fn lied_lines(&self, names: impl Fn(u64) -> String) -> String {
        let mut out = String::new();
        for (name, off, len) in &self.lost {
            let _ = writeln!(out, "{name} {off} {len} lost");
        }
        let mut inos: Vec<&u64> = self.files.keys().collect();
        inos.sort_unstable();
        for ino in inos {
            for (off, len) in self.files[ino].lied.ranges() {
                let _ = writeln!(out, "{} {off} {len} cached", names(*ino));
            }
        }
        out
    }

    /// Ranges lied about that are still cached (not yet written back).
    pub fn lied_cached(&self) -> u64 {
        self.files
            .values()
            .map(|f| f.lied.ranges().count() as u64)
            .sum()
    }

    /// The status line of the cache (see README).
    pub fn status(&self) -> String {
        let s = &self.stats;
        let extents: usize = self.files.values().map(|f| f.extents.len()).sum();
        let mut line = format!(
            "cache={} max={} dirty_bytes={} dirty_extents={extents} lie={}",
            if self.enabled { "on" } else { "off" },
            self.max_bytes,
            self.bytes,
            self.lie
                .as_ref()
                .map_or("off".to_string(), LieScope::describe),
        );
        let _ = write!(
            line,
            " cached_writes={} flushes={} written_back={} evicted={} lied_flushes={} lied_writes={} lied_cached={} lied_lost={} power_cuts={} dropped_writes={} dropped_bytes={}",
            s.cached_writes, s.flushes, s.written_back, s.evicted, s.lied_flushes, s.lied_writes,
            self.lied_cached(), self.lost.len(), s.power_cuts, s.dropped_writes, s.dropped_bytes
        );
        line.push('\n');
        line
    }

    /// Whether the status should show the cache line (it was ever used).
    pub fn in_use(&self) -> bool {
        self.enabled || self.stats.cached_writes > 0 || self.stats.power_cuts > 0
    }
}
