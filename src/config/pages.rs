//! The page-count rule: counts of pages a user touches at once (largest random region,
//! audit batch, read-ahead, bulk update: each section names its own, `page_counts`) must fit
//! the smallest data file and the buffer pool. SQLIOSim clamps them at run time; we refuse
//! them up front, naming the key and the limit.

use super::error::ConfigError;
use super::files::{self, Origin};
use super::model::PAGES_PER_MB;
use super::parse::Parsed;
use super::reader::View;
use super::sections::FileSpec;

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
    for (section, value) in c.sections() {
        for (key, pages) in value.page_counts() {
            check_one(p, &limits, name, (section, key, u64::from(pages)))?;
        }
    }
    Ok(())
}

/// One page count `pages` of `[section] key` against the limits.
fn check_one(
    p: &Parsed,
    limits: &Limits,
    name: &str,
    (section, key, pages): (&str, &str, u64),
) -> Result<(), ConfigError> {
    let Some(reason) = limits.reason(pages) else {
        return Ok(());
    };
    let limit = limits.file_pages.min(limits.pool_pages);
    let allowed = format!("expected at most {limit} pages: {reason}");
    let view = View::new(name, section, p.ini.section(section));
    Err(match view.entry(key) {
        Some(e) => view.bad(e, allowed),
        None => ConfigError::Rule {
            file: name.into(),
            line: view.line_of(key),
            message: format!("[{section}] {key}={pages} (the default): {allowed}"),
        },
    })
}
