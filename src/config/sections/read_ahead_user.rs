//! `[ReadAheadUser]`: sequential read-ahead scanners.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;

/// `[ReadAheadUser]`: sequential read-ahead scanners.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReadAheadUser {
    /// `UserCount`: threads, default 2; -1 = automatic; 0 = none.
    pub user_count: u32,
    /// `BuffersRAMin`: fewest pages per read-ahead, default 32; ≤ max.
    pub buffers_min: u32,
    /// `BuffersRAMax`: most pages per read-ahead, default 64; must fit the smallest data file.
    pub buffers_max: u32,
    /// `DelayAfterCycles`: apply `ra_delay_ms` after this many cycles, default 2; 0 = never.
    pub delay_after_cycles: u32,
    /// `RADelay`: pause in ms, default 200.
    pub ra_delay_ms: u32,
}

impl IniSection for ReadAheadUser {
    const NAME: &'static str = "ReadAheadUser";
    const KEYS: &'static [&'static str] = &[
        "UserCount",
        "BuffersRAMin",
        "BuffersRAMax",
        "DelayAfterCycles",
        "RADelay",
    ];

    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError> {
        let r = ReadAheadUser {
            user_count: v.user_count("UserCount", 2, cx.cpu_count)?,
            buffers_min: v.u32("BuffersRAMin", 32, 0, u32::MAX)?,
            buffers_max: v.u32("BuffersRAMax", 64, 1, u32::MAX)?,
            delay_after_cycles: v.u32("DelayAfterCycles", 2, 0, u32::MAX)?,
            ra_delay_ms: v.u32("RADelay", 200, 0, u32::MAX)?,
        };
        v.min_max(
            ("BuffersRAMin", r.buffers_min.into()),
            ("BuffersRAMax", r.buffers_max.into()),
        )?;
        let caps = cx.io_generation.caps_in(cx.edition);
        crate::config::generation::warn_beyond_cap(
            v,
            ("BuffersRAMax", r.buffers_max),
            ("read-ahead", caps.read_ahead_pages),
            cx.io_generation,
            cx.warnings,
        );
        Ok(r)
    }
}

impl SectionValue for ReadAheadUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            ("BuffersRAMin", self.buffers_min.to_string()),
            ("BuffersRAMax", self.buffers_max.to_string()),
            ("DelayAfterCycles", self.delay_after_cycles.to_string()),
            ("RADelay", self.ra_delay_ms.to_string()),
        ]
    }

    fn user_count(&self) -> Option<u32> {
        Some(self.user_count)
    }

    fn page_counts(&self) -> Vec<(&'static str, u32)> {
        vec![("BuffersRAMax", self.buffers_max)]
    }
}
