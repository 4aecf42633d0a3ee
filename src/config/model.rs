//! The value types and rules the sections share: [`Ratio`], pages per MB, the automatic user
//! count and the user limit, and what is asked of the whole [`Config`] (its data and log files,
//! its total of users). The sections themselves, each struct with its SQLIOSim defaults and
//! ranges, are in `sections/`; their values are already checked and resolved (user counts are
//! concrete numbers, `CPUCount` and `MaxMemoryMB` are filled in from the machine when absent).

use super::sections::{Config, FileSpec};

/// A ratio written as percent × 100, as SQLIOSim does: 1000 = 10 %, 10000 = 100 %.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Ratio(u16);

impl Ratio {
    /// The largest value, 100 %.
    pub const MAX: u16 = 10000;

    /// A ratio from its ×100 value; `None` above 10000.
    pub fn new(hundredths_of_percent: u16) -> Option<Self> {
        (hundredths_of_percent <= Self::MAX).then_some(Ratio(hundredths_of_percent))
    }

    /// A ratio from its ×100 value, values above 10000 taken as 10000 (for built-in defaults).
    pub fn clamped(hundredths_of_percent: u16) -> Self {
        Ratio(hundredths_of_percent.min(Self::MAX))
    }

    /// The value as written in the INI file (percent × 100).
    pub fn raw(self) -> u16 {
        self.0
    }

    /// The ratio as a fraction in 0.0..=1.0.
    pub fn fraction(self) -> f64 {
        f64::from(self.0) / f64::from(Self::MAX)
    }

    /// The ratio as a percentage in 0.0..=100.0.
    pub fn percent(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

/// 8 KB pages in one MB.
pub const PAGES_PER_MB: u64 = 128;

/// min(CPUCount * 2, 8): the value of `UserCount=-1`.
pub fn auto_user_count(cpu_count: u32) -> u32 {
    (cpu_count * 2).min(8)
}

/// CPUCount * 1023 - 100: the limit on each `UserCount` and on their total.
pub fn user_limit(cpu_count: u32) -> u64 {
    (u64::from(cpu_count) * 1023).saturating_sub(100)
}

impl Config {
    /// The data files (not `LogFile`).
    pub fn data_files(&self) -> impl Iterator<Item = &FileSpec> {
        self.files.iter().filter(|f| !f.log_file)
    }

    /// The log files.
    pub fn log_files(&self) -> impl Iterator<Item = &FileSpec> {
        self.files.iter().filter(|f| f.log_file)
    }

    /// Total simulated users of all kinds: every section's `UserCount`.
    pub fn total_users(&self) -> u64 {
        self.sections()
            .iter()
            .filter_map(|(_, s)| s.user_count())
            .map(u64::from)
            .sum()
    }
}
