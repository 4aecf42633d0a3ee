//! `[SortUser]`: sort runs and hash partitions spilled to tempdb (issue #25 §3). SQL Server
//! spills them when memory is short: runs written as eager gather writes, read back merged,
//! several runs in turn, and their extents freed "on a somewhat random basis" and reused at
//! once. Not a section of Microsoft's SQLIOSim: `UserCount` defaults to 0, so its sample
//! configurations run unchanged.
//!
//! No published figure gives the size of a sort spill's writes. The nearest documented ones
//! are the eager writes of tempdb's bulk operations (SELECT INTO, CREATE INDEX … SORT_IN_TEMPDB;
//! psssql, "SQL Server 2014: TEMPDB Hidden Performance Gem": contiguous dirty pages gathered
//! 32 at a time), which SQL Server 2016 raised to 128 pages with the lazy writer's and the
//! checkpoint's gathers (psssql, "SQL 2016 – It Just Runs Faster: Larger Data File Writes").
//! So `RunPages` defaults to `IoGeneration`'s gather: 32 pages for 2014, 128 for 2016.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;

/// `[SortUser]`: spills to a tempdb file, merges, frees and reuses its extents.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SortUser {
    /// `UserCount`: sort users, each with a tempdb file of its own; default 0 (none), 0..=16.
    pub user_count: u32,
    /// `RunPages`: pages per run, each written in one gather write; default `IoGeneration`'s
    /// gather (SQL Server's eager write: 32 pages for 2014, 128 for 2016), 1..=128.
    pub run_pages: u32,
    /// `RunsPerMerge`: runs written, then read back merged, per sort; default 4, 2..=16.
    pub runs_per_merge: u32,
    /// `TempFileSize`: MB of each user's tempdb file; default 16 (or the least that holds
    /// `RunsPerMerge` runs and a header page, when 16 does not), 1..=65536. It must hold
    /// `RunsPerMerge` runs.
    pub temp_file_mb: u32,
    /// `SortDelay`: pause in ms after each sort, default 10.
    pub sort_delay_ms: u32,
}

impl IniSection for SortUser {
    const NAME: &'static str = "SortUser";
    const KEYS: &'static [&'static str] = &[
        "UserCount",
        "RunPages",
        "RunsPerMerge",
        "TempFileSize",
        "SortDelay",
    ];

    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError> {
        let gather = u32::try_from(cx.io_generation.caps().gather_pages).unwrap_or(128);
        let run_pages = v.u32("RunPages", gather.min(128), 1, 128)?;
        let runs_per_merge = v.u32("RunsPerMerge", 4, 2, 16)?;
        // The runs and a header page, in whole MB (128 pages each).
        let least_mb = (run_pages * runs_per_merge + 1).div_ceil(128);
        let s = SortUser {
            user_count: v.u32("UserCount", 0, 0, 16)?,
            run_pages,
            runs_per_merge,
            temp_file_mb: v.u32("TempFileSize", least_mb.max(16), 1, 65_536)?,
            sort_delay_ms: v.u32("SortDelay", 10, 0, u32::MAX)?,
        };
        let pages = u64::from(s.temp_file_mb) * 128;
        if pages <= u64::from(s.run_pages) * u64::from(s.runs_per_merge) {
            if let Some(e) = v.entry("TempFileSize") {
                return Err(v.bad(
                    e,
                    "a size in MB that holds RunsPerMerge runs of RunPages pages (8 KB each) \
                     and a header page",
                ));
            }
        }
        Ok(s)
    }
}

impl SectionValue for SortUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            ("RunPages", self.run_pages.to_string()),
            ("RunsPerMerge", self.runs_per_merge.to_string()),
            ("TempFileSize", self.temp_file_mb.to_string()),
            ("SortDelay", self.sort_delay_ms.to_string()),
        ]
    }

    /// Shown (and counted) only when on, so the echo of Microsoft's samples is unchanged.
    fn user_count(&self) -> Option<u32> {
        (self.user_count > 0).then_some(self.user_count)
    }
}
