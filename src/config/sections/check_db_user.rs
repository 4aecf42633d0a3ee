//! `[CheckDbUser]`: DBCC CHECKDB's internal database snapshot (issue #25 §2). SQL Server 2014
//! and later runs CHECKDB against an internal snapshot: a sparse sibling of each data file
//! (`<file>_MSSQL_DBCC<n>`), into which the pre-image of a source page is copied before the
//! page is first written during the check; the check reads the snapshot view (the copy if
//! there is one, else the source) in allocation order with read-ahead, and the sparse files
//! are deleted at the end. Not a section of Microsoft's SQLIOSim: `UserCount` defaults to 0,
//! so its sample configurations run unchanged.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;

/// `[CheckDbUser]`: checks the data files through a sparse copy-on-write snapshot.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckDbUser {
    /// `UserCount`: DBCC users, each with snapshots of its own; default 0 (none), 0..=4.
    pub user_count: u32,
    /// `ReadAheadPages`: pages per read of the check; default 64 (512 KB, SQL Server's
    /// read-ahead), 1..=1024, within the I/O generation's read-ahead cap.
    pub read_ahead_pages: u32,
    /// `ReadDelay`: pause in ms after each read of the check, default 0. A slower check sees
    /// more pages copied on write.
    pub read_delay_ms: u32,
    /// `CheckDelay`: pause in ms between checks, default 1000.
    pub check_delay_ms: u32,
}

impl IniSection for CheckDbUser {
    const NAME: &'static str = "CheckDbUser";
    const KEYS: &'static [&'static str] =
        &["UserCount", "ReadAheadPages", "ReadDelay", "CheckDelay"];

    fn parse(v: &View, _cx: &mut ParseContext) -> Result<Self, ConfigError> {
        Ok(CheckDbUser {
            user_count: v.u32("UserCount", 0, 0, 4)?,
            read_ahead_pages: v.u32("ReadAheadPages", 64, 1, 1024)?,
            read_delay_ms: v.u32("ReadDelay", 0, 0, 60_000)?,
            check_delay_ms: v.u32("CheckDelay", 1000, 0, u32::MAX)?,
        })
    }
}

impl SectionValue for CheckDbUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("UserCount", self.user_count.to_string()),
            ("ReadAheadPages", self.read_ahead_pages.to_string()),
            ("ReadDelay", self.read_delay_ms.to_string()),
            ("CheckDelay", self.check_delay_ms.to_string()),
        ]
    }

    /// Shown (and counted) only when on, so the echo of Microsoft's samples is unchanged.
    fn user_count(&self) -> Option<u32> {
        (self.user_count > 0).then_some(self.user_count)
    }
}
