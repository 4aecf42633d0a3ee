//! Page dumps: the raw received and expected images of a corrupt page, and a text file that
//! decodes both headers and shows the differing bytes (like SQLIOSim's SqlSimErrorDump files).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::findings::Finding;

use super::dumptext::dump_text;
use super::error::ReportError;

/// Writes dumps into one directory, numbering repeated dumps of the same page.
#[derive(Debug)]
pub struct DumpWriter {
    dir: PathBuf,
    seen: HashMap<(String, u64), u32>,
}

/// The files written for one finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpFiles {
    /// The text file (decoded headers and differences): the "dump file" of the log entry.
    pub text: PathBuf,
    /// The raw bytes read, if they were kept.
    pub received: Option<PathBuf>,
    /// The raw bytes expected, if they could be regenerated.
    pub expected: Option<PathBuf>,
}

impl DumpWriter {
    /// Dumps go into `dir` (created on the first dump).
    pub fn new(dir: impl Into<PathBuf>) -> DumpWriter {
        DumpWriter {
            dir: dir.into(),
            seen: HashMap::new(),
        }
    }

    /// The directory dumps go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `<file>.<page>.<n>.received`, `.expected` and `.txt` for a finding.
    pub fn write(&mut self, f: &Finding) -> Result<DumpFiles, ReportError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| ReportError::io(&self.dir, e))?;
        let file = f.path.file_name().map_or_else(
            || format!("file{}", f.file_id),
            |n| n.to_string_lossy().into_owned(),
        );
        let n = self.seen.entry((file.clone(), f.page_id)).or_insert(0);
        *n += 1;
        let stem = format!("{file}.{}.{n}", f.page_id);
        let name = |ext: &str| self.dir.join(format!("{stem}.{ext}"));
        let raw = |ext: &str, bytes: &Option<Vec<u8>>| -> Result<Option<PathBuf>, ReportError> {
            let Some(bytes) = bytes else { return Ok(None) };
            let p = name(ext);
            std::fs::write(&p, bytes).map_err(|e| ReportError::io(&p, e))?;
            Ok(Some(p))
        };
        let received = raw("received", &f.received)?;
        let expected = raw("expected", &f.expected_image)?;
        let text = name("txt");
        std::fs::write(&text, dump_text(f)).map_err(|e| ReportError::io(&text, e))?;
        Ok(DumpFiles {
            text,
            received,
            expected,
        })
    }
}
