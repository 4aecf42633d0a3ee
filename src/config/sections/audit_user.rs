//! `[AuditUser]`: DBCC-style readers that validate pages.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;

/// `[AuditUser]`: DBCC-style readers that validate pages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AuditUser {
    /// `UserCount`: threads, default 2; -1 = min(CPUCount*2, 8); 0 = none (the end-of-cycle
    /// audit still runs).
    pub user_count: u32,
    /// `BuffersValidated`: pages validated per cycle, default 64; must fit the smallest data file.
    pub buffers_validated: u32,
    /// `DelayAfterCycles`: apply `audit_delay_ms` after this many cycles, default 2; 0 = never.
    pub delay_after_cycles: u32,
    /// `AuditDelay`: pause in ms, default 200.
    pub audit_delay_ms: u32,
}

impl IniSection for AuditUser {
    const NAME: &'static str = "AuditUser";
    const KEYS: &'static [&'static str] = &[
        "UserCount",
        "BuffersValidated",
        "DelayAfterCycles",
        "AuditDelay",
    ];

    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError> {
        Ok(AuditUser {
            user_count: v.user_count("UserCount", 2, cx.cpu_count)?,
            buffers_validated: v.u32("BuffersValidated", 64, 1, u32::MAX)?,
            delay_after_cycles: v.u32("DelayAfterCycles", 2, 0, u32::MAX)?,
            audit_delay_ms: v.u32("AuditDelay", 200, 0, u32::MAX)?,
        })
    }
}

impl SectionValue for AuditUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            ("BuffersValidated", self.buffers_validated.to_string()),
            ("DelayAfterCycles", self.delay_after_cycles.to_string()),
            ("AuditDelay", self.audit_delay_ms.to_string()),
        ]
    }

    fn user_count(&self) -> Option<u32> {
        Some(self.user_count)
    }

    fn page_counts(&self) -> Vec<(&'static str, u32)> {
        vec![("BuffersValidated", self.buffers_validated)]
    }
}
