//! The XML log file: a well-formed document after every entry.
//!
//! The file always ends with the closing root tag. Each entry is written with one positioned
//! write over the old closing tag, followed by a new one, so a run killed between two entries
//! leaves a complete document, and one killed during a write leaves at worst one partial entry
//! at the end, which the reader ([`crate::report::readers::load`]) skips.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::io::safefile::{self, Create};

use crate::report::error::ReportError;
use crate::report::sinks::clock::LogClock;
use crate::report::views::dump_links::DumpLinks;
use crate::report::views::log_view;

/// Name of the root element (SQLIOSim's is undocumented; scripts only look for ENTRY).
pub const ROOT: &str = "SQLIOSIM_LOG";
/// File name of the stylesheet written next to the log.
pub const XSLT_NAME: &str = "ErrorLog.xslt";
/// The stylesheet that renders the log as a table in a browser.
pub const XSLT: &str = include_str!("ErrorLog.xslt");

const CLOSING: &[u8] = b"</SQLIOSIM_LOG>\n";

/// An open XML log.
#[derive(Debug)]
pub struct XmlLog {
    file: File,
    path: PathBuf,
    end: u64,
    clock: LogClock,
}

fn prolog() -> String {
    format!(
        "<?xml version='1.0' encoding='UTF-8'?>\n<?xml-stylesheet type='text/xsl' href='{XSLT_NAME}'?>\n<{ROOT} TOOL='sqliosim' VERSION='{}'>\n",
        env!("CARGO_PKG_VERSION")
    )
}

impl XmlLog {
    /// Creates the log at `path`, or rewrites it when it is one of ours, and writes
    /// `ErrorLog.xslt` next to it (and checks that its HTML view's name, written at the end,
    /// is free of planted links). An existing file is checked through its open descriptor
    /// (see [`safefile`]): one of the tool's own regular files, and a log (unless
    /// `foreign_ok`), before it is emptied.
    pub fn create(path: &Path, clock: LogClock, foreign_ok: bool) -> Result<XmlLog, ReportError> {
        // The names beside it first: a planted one refuses the log before it is emptied.
        let stylesheet = path.with_file_name(XSLT_NAME);
        safefile::check_replaceable(&stylesheet)?;
        safefile::check_replaceable(&log_view::beside_log(path))?;
        let file = safefile::open_own(path, Create::Either)?;
        let io = |e| ReportError::io(path, e);
        let mut head = vec![0u8; 4096];
        let n = file.read_at(&mut head, 0).map_err(io)?;
        if n > 0 && !foreign_ok && !String::from_utf8_lossy(&head[..n]).contains(ROOT) {
            return Err(ReportError::NotOurs { path: path.into() });
        }
        let head = prolog();
        file.set_len(0)
            .and_then(|_| file.write_all_at(head.as_bytes(), 0))
            .and_then(|_| file.write_all_at(CLOSING, head.len() as u64))
            .map_err(io)?;
        safefile::replace(&stylesheet, XSLT.as_bytes())?;
        Ok(XmlLog {
            file,
            path: path.to_path_buf(),
            end: head.len() as u64,
            clock,
        })
    }

    /// Appends one rendered entry (see [`crate::report::sinks::entry::render`]) and re-closes the document.
    pub fn append(&mut self, entry: &[u8]) -> Result<(), ReportError> {
        let mut buf = Vec::with_capacity(entry.len() + CLOSING.len());
        buf.extend_from_slice(entry);
        buf.extend_from_slice(CLOSING);
        self.file
            .write_all_at(&buf, self.end)
            .map_err(|e| ReportError::io(&self.path, e))?;
        self.end += entry.len() as u64;
        Ok(())
    }

    /// The clock entries are stamped with.
    pub fn clock(&self) -> &LogClock {
        &self.clock
    }

    /// Path of the log.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the log's HTML view beside it ([`log_view`]: the table `ErrorLog.xslt` gives,
    /// for a browser that will not apply a stylesheet from disk), read back through the open
    /// log so it shows exactly what the log holds.
    pub fn write_view(&self) -> Result<(), ReportError> {
        let io = |e| ReportError::io(&self.path, e);
        let mut bytes = vec![0u8; self.end as usize + CLOSING.len()];
        self.file.read_exact_at(&mut bytes, 0).map_err(io)?;
        let text = String::from_utf8_lossy(&bytes);
        let parsed = crate::report::readers::logparse::parse_log(&text).map_err(|reason| {
            ReportError::Unreadable {
                path: self.path.clone(),
                reason,
            }
        })?;
        let view = log_view::beside_log(&self.path);
        let links = DumpLinks::From {
            html_dir: view.parent().map(Path::to_path_buf).unwrap_or_default(),
            evidence: self
                .path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        };
        let page = log_view::page(
            &self.path.display().to_string(),
            &parsed.entries,
            parsed.truncated,
            &links,
        );
        safefile::replace(&view, page.as_bytes())?;
        Ok(())
    }

    /// Forces the log to stable storage (at the end of a run).
    pub fn sync(&self) -> Result<(), ReportError> {
        self.file
            .sync_all()
            .map_err(|e| ReportError::io(&self.path, e))
    }
}
