//! `[RandomUser]`: OLTP-style random readers and writers.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::model::Ratio;
use crate::config::reader::View;
use crate::config::save::flag;

/// `[RandomUser]`: OLTP-style random readers/writers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RandomUser {
    /// `UserCount`: threads, default -1 = min(CPUCount*2, 8); 0 = none; at most CPUCount*1023-100.
    pub user_count: u32,
    /// `JumpToNewRegionPercentage`: chance of moving to a new region, default 500 (5 %).
    pub jump_to_new_region: Ratio,
    /// `MinIOChainLength`: smallest region in pages, default 1 (the samples use 50); ≤ max.
    pub min_io_chain_length: u32,
    /// `MaxIOChainLength`: largest region in pages, default 100; must fit the smallest data file
    /// and the buffer pool.
    pub max_io_chain_length: u32,
    /// `RandomUserReadWriteRatio`: share of a chain's pages updated, default 9000 (90 %).
    pub read_write_ratio: Ratio,
    /// `MinLogPerBuffer`: smallest log record in bytes, default 64; range 1..=64000, ≤ max.
    pub min_log_per_buffer: u32,
    /// `MaxLogPerBuffer`: largest log record in bytes, default 8192; range 1..=64000.
    pub max_log_per_buffer: u32,
    /// `RollbackChance`: chance an operation rolls back in memory, default 100 (1 %).
    pub rollback_chance: Ratio,
    /// `SleepAfter`: ms to sleep after each cycle, default 5.
    pub sleep_after_ms: u32,
    /// `YieldPercentage`: chance of yielding the scheduler (undocumented), default 0.
    pub yield_percentage: Ratio,
    /// `CPUSimulation`: simulate CPU work (undocumented), default false.
    pub cpu_simulation: bool,
    /// `CPUCyclesMin`: simulated CPU cycles per operation, minimum (undocumented), default 0.
    pub cpu_cycles_min: u32,
    /// `CPUCyclesMax`: simulated CPU cycles per operation, maximum (undocumented), default 0.
    pub cpu_cycles_max: u32,
}

impl IniSection for RandomUser {
    const NAME: &'static str = "RandomUser";
    const KEYS: &'static [&'static str] = &[
        "UserCount",
        "JumpToNewRegionPercentage",
        "MinIOChainLength",
        "MaxIOChainLength",
        "RandomUserReadWriteRatio",
        "MinLogPerBuffer",
        "MaxLogPerBuffer",
        "RollbackChance",
        "SleepAfter",
        "YieldPercentage",
        "CPUSimulation",
        "CPUCyclesMin",
        "CPUCyclesMax",
    ];

    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError> {
        let r = RandomUser {
            user_count: v.user_count("UserCount", -1, cx.cpu_count)?,
            jump_to_new_region: v.ratio("JumpToNewRegionPercentage", 500)?,
            min_io_chain_length: v.u32("MinIOChainLength", 1, 0, u32::MAX)?,
            max_io_chain_length: v.u32("MaxIOChainLength", 100, 1, u32::MAX)?,
            read_write_ratio: v.ratio("RandomUserReadWriteRatio", 9000)?,
            min_log_per_buffer: v.u32("MinLogPerBuffer", 64, 1, 64_000)?,
            max_log_per_buffer: v.u32("MaxLogPerBuffer", 8192, 1, 64_000)?,
            rollback_chance: v.ratio("RollbackChance", 100)?,
            sleep_after_ms: v.u32("SleepAfter", 5, 0, u32::MAX)?,
            yield_percentage: v.ratio("YieldPercentage", 0)?,
            cpu_simulation: v.boolean("CPUSimulation", false)?,
            cpu_cycles_min: v.u32("CPUCyclesMin", 0, 0, u32::MAX)?,
            cpu_cycles_max: v.u32("CPUCyclesMax", 0, 0, u32::MAX)?,
        };
        v.min_max(
            ("MinIOChainLength", r.min_io_chain_length.into()),
            ("MaxIOChainLength", r.max_io_chain_length.into()),
        )?;
        v.min_max(
            ("MinLogPerBuffer", r.min_log_per_buffer.into()),
            ("MaxLogPerBuffer", r.max_log_per_buffer.into()),
        )?;
        v.min_max(
            ("CPUCyclesMin", r.cpu_cycles_min.into()),
            ("CPUCyclesMax", r.cpu_cycles_max.into()),
        )?;
        Ok(r)
    }
}

impl SectionValue for RandomUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            (
                "JumpToNewRegionPercentage",
                self.jump_to_new_region.raw().to_string(),
            ),
            ("MinIOChainLength", self.min_io_chain_length.to_string()),
            ("MaxIOChainLength", self.max_io_chain_length.to_string()),
            (
                "RandomUserReadWriteRatio",
                self.read_write_ratio.raw().to_string(),
            ),
            ("MinLogPerBuffer", self.min_log_per_buffer.to_string()),
            ("MaxLogPerBuffer", self.max_log_per_buffer.to_string()),
            ("RollbackChance", self.rollback_chance.raw().to_string()),
            ("SleepAfter", self.sleep_after_ms.to_string()),
            ("YieldPercentage", self.yield_percentage.raw().to_string()),
            ("CPUSimulation", flag(self.cpu_simulation)),
            ("CPUCyclesMin", self.cpu_cycles_min.to_string()),
            ("CPUCyclesMax", self.cpu_cycles_max.to_string()),
        ]
    }

    fn user_count(&self) -> Option<u32> {
        Some(self.user_count)
    }

    fn page_counts(&self) -> Vec<(&'static str, u32)> {
        vec![("MaxIOChainLength", self.max_io_chain_length)]
    }
}
