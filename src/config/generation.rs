//! `IoGeneration`: which SQL Server generation's request sizes the simulation issues, and the
//! caps each one sets (docs/configuration.md, "Request sizes").
//!
//! SQL Server 2012/2014 gathers at most 32 pages (256 KB) per write for the lazy writer,
//! checkpoint and bulk operations; 2016 and later up to 128 pages (1 MB). Read-ahead is up to
//! 64 pages (512 KB) in both, and up to 1,024 pages (8 MB) in Enterprise edition (KB 231619,
//! "Reading pages"), which `Edition` selects. A larger request is split into requests of the
//! cap, never dropped.

use std::fmt;

use super::error::Warning;
use super::reader::View;

/// The generation simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum IoGeneration {
    /// SQL Server 2012 and 2014.
    Sql2014,
    /// SQL Server 2016 and later (the default).
    #[default]
    Sql2016,
}

/// The largest requests of a generation, in 8 KB pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoCaps {
    /// Lazy writer, checkpoint and bulk update gather writes.
    pub gather_pages: u64,
    /// Read-ahead reads.
    pub read_ahead_pages: u64,
}

impl IoGeneration {
    /// The values `IoGeneration=` accepts, as written.
    pub const VALUES: &'static str = "expected 2014 or 2016";

    /// Reads `2014` or `2016` (2012 is 2014's generation).
    pub fn parse(s: &str) -> Option<IoGeneration> {
        match s.trim() {
            "2012" | "2014" => Some(IoGeneration::Sql2014),
            "2016" => Some(IoGeneration::Sql2016),
            _ => None,
        }
    }

    /// The caps this generation sets in `edition`: Enterprise reads ahead up to 1,024 pages.
    pub fn caps_in(self, edition: Edition) -> IoCaps {
        let caps = self.caps();
        match edition {
            Edition::Standard => caps,
            Edition::Enterprise => IoCaps {
                read_ahead_pages: 1024,
                ..caps
            },
        }
    }

    /// The caps this generation sets in Standard edition.
    pub fn caps(self) -> IoCaps {
        match self {
            IoGeneration::Sql2014 => IoCaps {
                gather_pages: 32,
                read_ahead_pages: 64,
            },
            IoGeneration::Sql2016 => IoCaps {
                gather_pages: 128,
                read_ahead_pages: 64,
            },
        }
    }
}

/// The edition simulated (`Edition`, ours): it sets the read-ahead cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Edition {
    /// Standard (and every edition but Enterprise's): read-ahead of up to 64 pages.
    #[default]
    Standard,
    /// Enterprise (Developer and Evaluation too): read-ahead of up to 1,024 pages (8 MB).
    Enterprise,
}

impl Edition {
    /// The values `Edition=` accepts, as written.
    pub const VALUES: &'static str = "expected Standard or Enterprise";

    /// Reads `Standard` or `Enterprise`, in any case.
    pub fn parse(s: &str) -> Option<Edition> {
        match s.trim().to_ascii_lowercase().as_str() {
            "standard" => Some(Edition::Standard),
            "enterprise" => Some(Edition::Enterprise),
            _ => None,
        }
    }
}

impl fmt::Display for Edition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edition::Standard => "Standard",
            Edition::Enterprise => "Enterprise",
        })
    }
}

impl fmt::Display for IoGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoGeneration::Sql2014 => "2014",
            IoGeneration::Sql2016 => "2016",
        })
    }
}

/// Warns once when `key` (of the section `v` reads) asks for requests of more pages than
/// `cap`, the generation's cap for `what`: they will be split, not refused.
pub(super) fn warn_beyond_cap(
    v: &View,
    (key, pages): (&str, u32),
    (what, cap): (&str, u64),
    generation: IoGeneration,
    warnings: &mut Vec<Warning>,
) {
    // A default the file does not write is split as silently as any other request.
    if u64::from(pages) <= cap || v.entry(key).is_none() {
        return;
    }
    warnings.push(Warning::at(
        v.file,
        v.line_of(key),
        format!(
            "{key}={pages} is more than IoGeneration={generation} issues in one {what} \
             ({cap} pages, {} KB): each is split into requests of at most {cap} pages; \
             set IoGeneration or lower {key} to silence this",
            cap * 8
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_generation() {
        let c14 = IoGeneration::Sql2014.caps();
        assert_eq!((c14.gather_pages, c14.read_ahead_pages), (32, 64));
        let c16 = IoGeneration::Sql2016.caps();
        assert_eq!((c16.gather_pages, c16.read_ahead_pages), (128, 64));
        assert_eq!(IoGeneration::default(), IoGeneration::Sql2016);
        let e = IoGeneration::Sql2014.caps_in(Edition::Enterprise);
        assert_eq!((e.gather_pages, e.read_ahead_pages), (32, 1024));
        assert_eq!(IoGeneration::Sql2016.caps_in(Edition::Standard), c16);
    }

    #[test]
    fn parses_what_it_prints() {
        for g in [IoGeneration::Sql2014, IoGeneration::Sql2016] {
            assert_eq!(IoGeneration::parse(&g.to_string()), Some(g));
        }
        assert_eq!(IoGeneration::parse("2012"), Some(IoGeneration::Sql2014));
        assert_eq!(IoGeneration::parse("2019"), None);
        for e in [Edition::Standard, Edition::Enterprise] {
            assert_eq!(Edition::parse(&e.to_string()), Some(e));
        }
        assert_eq!(Edition::parse("Datacenter"), None);
    }
}
