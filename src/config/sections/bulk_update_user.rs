//! `[BulkUpdateUser]`: SELECT INTO / BULK INSERT-style writers.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;

/// `[BulkUpdateUser]`: SELECT INTO / BULK INSERT-style writers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BulkUpdateUser {
    /// `UserCount`: threads, default -1 = min(CPUCount*2, 8); 0 = none.
    pub user_count: u32,
    /// `BuffersBUMin`: fewest pages per cycle, default 64; ≤ max.
    pub buffers_min: u32,
    /// `BuffersBUMax`: most pages per cycle, default 128; must fit the smallest data file.
    pub buffers_max: u32,
    /// `DelayAfterCycles`: apply `bu_delay_ms` after this many cycles, default 2; 0 = never.
    pub delay_after_cycles: u32,
    /// `BUDelay`: pause in ms, default 10.
    pub bu_delay_ms: u32,
}

impl IniSection for BulkUpdateUser {
    const NAME: &'static str = "BulkUpdateUser";
    const KEYS: &'static [&'static str] = &[
        "UserCount",
        "BuffersBUMin",
        "BuffersBUMax",
        "DelayAfterCycles",
        "BUDelay",
    ];

    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError> {
        let b = BulkUpdateUser {
            user_count: v.user_count("UserCount", -1, cx.cpu_count)?,
            buffers_min: v.u32("BuffersBUMin", 64, 0, u32::MAX)?,
            buffers_max: v.u32("BuffersBUMax", 128, 1, u32::MAX)?,
            delay_after_cycles: v.u32("DelayAfterCycles", 2, 0, u32::MAX)?,
            bu_delay_ms: v.u32("BUDelay", 10, 0, u32::MAX)?,
        };
        v.min_max(
            ("BuffersBUMin", b.buffers_min.into()),
            ("BuffersBUMax", b.buffers_max.into()),
        )?;
        let caps = cx.io_generation.caps_in(cx.edition);
        crate::config::generation::warn_beyond_cap(
            v,
            ("BuffersBUMax", b.buffers_max),
            ("gather write", caps.gather_pages),
            cx.io_generation,
            cx.warnings,
        );
        Ok(b)
    }
}

impl SectionValue for BulkUpdateUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            ("BuffersBUMin", self.buffers_min.to_string()),
            ("BuffersBUMax", self.buffers_max.to_string()),
            ("DelayAfterCycles", self.delay_after_cycles.to_string()),
            ("BUDelay", self.bu_delay_ms.to_string()),
        ]
    }

    fn user_count(&self) -> Option<u32> {
        Some(self.user_count)
    }

    fn page_counts(&self) -> Vec<(&'static str, u32)> {
        vec![("BuffersBUMax", self.buffers_max)]
    }
}
