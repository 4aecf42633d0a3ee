//! The page-count rule: counts of pages a user touches at once (largest random region,
//! audit batch, read-ahead, bulk update) must fit the smallest data file and the buffer pool.
//! SQLIOSim clamps them at run time; we refuse them up front, naming the key and the limit.

use super::error::ConfigError;
use super::files::{self, Origin};
use super::model::{FileSpec, PAGES_PER_MB};
use super::parse::Parsed;
use super::reader::View;

/// The limits a page count must respect.
struct Limits<'a> {
    file_pages: u64,
    smallest: &'a FileSpec,
    pool_pages: u64,
    max_memory_mb: u64,
}

impl Limits<'_> {
    /// Why `pages` is too many, or `None` when it fits.
    fn reason(&self, pages: u64) -> Option<String> {
        if pages > self.file_pages {
            Some(format!(
                "the smallest data file, {}, has {} pages ({} MB) at its initial size",
                self.smallest.path.display(),
                self.file_pages,
                self.smallest.initial_size_mb
            ))
        } else if pages > self.pool_pages {
            Some(format!(
                "MaxMemoryMB={} holds {} pages of 8 KB",
                self.max_memory_mb, self.pool_pages
            ))
        } else {
            None
        }
    }
}

/// Checks every page count of `p` against the placed `files`.
pub fn check_page_counts(
    p: &Parsed,
    files: &[(FileSpec, Origin)],
    name: &str,
) -> Result<(), ConfigError> {
    let Some((file_pages, smallest)) = files::smallest_data_pages(files) else {
        return Ok(());
    };
    let c = &p.config;
    let limits = Limits {
        file_pages,
        smallest,
        pool_pages: c.general.max_memory_mb * PAGES_PER_MB,
        max_memory_mb: c.general.max_memory_mb,
    };
    let checks = [
        (
            "RandomUser",
            "MaxIOChainLength",
            c.random.max_io_chain_length,
        ),
        ("AuditUser", "BuffersValidated", c.audit.buffers_validated),
        ("ReadAheadUser", "BuffersRAMax", c.read_ahead.buffers_max),
        ("BulkUpdateUser", "BuffersBUMax", c.bulk_update.buffers_max),
    ];
    for (section, key, pages) in checks {
        let pages = u64::from(pages);
        if let Some(reason) = limits.reason(pages) {
            let limit = limits.file_pages.min(limits.pool_pages);
            let allowed = format!("expected at most {limit} pages: {reason}");
            let view = View::new(name, section, p.ini.section(section));
            return Err(match view.entry(key) {
                Some(e) => view.bad(e, allowed),
                None => ConfigError::Rule {
                    file: name.into(),
                    line: view.line_of(key),
                    message: format!("[{section}] {key}={pages} (the default): {allowed}"),
                },
            });
        }
    }
    Ok(())
}
