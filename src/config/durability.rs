//! `DurabilityMode`: how a write-through write (`WriteThrough=TRUE`) is made durable, as SQL
//! Server on Linux offers it (mssql-conf `control.writethrough` and
//! `control.alternatewritethrough`, trace flags 3979 and 3982; docs/durability.md, "Durability
//! modes").
//!
//! - forced flush, SQL Server on Linux's default since 2017 CU6: files opened O_DIRECT without
//!   O_DSYNC, and a write-through write counts as done only after an `fdatasync` of the file
//!   that started once it had completed (shared by the writes it covers, or one per write with
//!   `ForcedFlushPerWrite`, see `io::FlushGate`);
//! - FUA: O_DIRECT|O_DSYNC, so that XFS (kernel 4.18 and later) and ext4 (5.6 and later) send
//!   each write with the FUA bit instead of a cache flush after it;
//! - none: O_DIRECT only, as SQL Server 2017 before CU6: a write is durable only at the run's
//!   next sync point (a checkpoint's `fdatasync` of every file).
//!
//! With `WriteThrough=FALSE` no write is write-through and the mode changes nothing.

use std::fmt;

/// How write-through writes are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum DurabilityMode {
    /// O_DIRECT, then an `fdatasync` after each write-through write (the default).
    #[default]
    ForcedFlush,
    /// O_DIRECT|O_DSYNC: each write durable when it completes (FUA where the stack has it).
    Fua,
    /// O_DIRECT only: durable at sync points alone.
    None,
}

impl DurabilityMode {
    /// The values `DurabilityMode=` accepts, as written.
    pub const VALUES: &'static str = "expected ForcedFlush, FUA or None";

    /// The names `--durability` accepts, as written.
    pub const NAMES: [&'static str; 3] = ["ForcedFlush", "FUA", "None"];

    /// Reads `ForcedFlush`, `FUA` or `None`, in any case.
    pub fn parse(s: &str) -> Option<DurabilityMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "forcedflush" => Some(DurabilityMode::ForcedFlush),
            "fua" => Some(DurabilityMode::Fua),
            "none" => Some(DurabilityMode::None),
            _ => None,
        }
    }

    /// What the mode does, for the run header; `per_write`: `ForcedFlushPerWrite=TRUE`.
    pub fn describe(self, per_write: bool) -> &'static str {
        match self {
            DurabilityMode::ForcedFlush if per_write => {
                "files opened O_DIRECT without O_DSYNC; each write-through data write is followed by an fdatasync of its own (ForcedFlushPerWrite), and each log flush (group commit) by one of the log, before it counts as done and durable"
            }
            DurabilityMode::ForcedFlush => {
                "files opened O_DIRECT without O_DSYNC; a write-through data write counts as done and durable after an fdatasync of its file that started once it had completed, one shared by the writes completed before it (SQL Server's economy; ForcedFlushPerWrite=TRUE for one each), and each log flush (group commit) after one of the log (SQL Server on Linux's default)"
            }
            DurabilityMode::Fua => {
                "files opened O_DIRECT|O_DSYNC; a write counts as durable when it completes (FUA writes where the device and filesystem have them)"
            }
            DurabilityMode::None => {
                "data files opened O_DIRECT only, no fdatasync after a write (SQL Server 2017 before CU6); writes count as durable only at the run's sync points; the log is opened O_DIRECT|O_DSYNC and its completed writes count as hardened (docs/durability.md)"
            }
        }
    }
}

impl fmt::Display for DurabilityMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DurabilityMode::ForcedFlush => "ForcedFlush",
            DurabilityMode::Fua => "FUA",
            DurabilityMode::None => "None",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_prints_in_any_case() {
        for m in [
            DurabilityMode::ForcedFlush,
            DurabilityMode::Fua,
            DurabilityMode::None,
        ] {
            assert_eq!(DurabilityMode::parse(&m.to_string()), Some(m));
            assert_eq!(
                DurabilityMode::parse(&m.to_string().to_lowercase()),
                Some(m)
            );
        }
        assert_eq!(DurabilityMode::parse("dsync"), None);
        assert_eq!(DurabilityMode::parse(""), None);
        assert_eq!(DurabilityMode::default(), DurabilityMode::ForcedFlush);
    }
}
