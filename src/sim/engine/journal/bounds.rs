//! What a whole journal record may say: a record whose checksum matches can still be wrong
//! (written by a buggy or hostile tool, or a corruption that kept the CRC), and replaying it
//! must not let a page number decide how much memory verify and `run --resume` take.
//!
//! A Start record names each file of the run once, with small ids (a run numbers its files
//! 0, 1, 2…), and since the bound was recorded the most pages each can have. Every Durable,
//! Resize and Log record after it must name one of those files, and no page or size may be
//! beyond the file's bound (for journals that record none, the largest page number a file
//! can have). A record that breaks this is damage at its offset, like a checksum mismatch:
//! only what precedes it is trusted. However large a bound, the replayed state's memory follows
//! the number of pages the journal names, not their numbers (see `gens.rs`).

use std::collections::HashMap;

use super::{Record, MAX_FILE_PAGES};

/// The most files a Start record may name (far above any configuration's).
const MAX_FILES: usize = 1 << 16;

/// The files of the last Start record and their page bounds.
#[derive(Debug, Default)]
pub(super) struct Bounds {
    /// None before the first Start: records before it change nothing in a replay.
    files: Option<HashMap<u32, u64>>,
}

impl Bounds {
    /// Checks `r` against the last Start; says why it cannot be right.
    pub(super) fn check(&mut self, r: &Record) -> Result<(), String> {
        if let Record::Start { files, .. } = r {
            self.files = Some(start_bounds(files)?);
            return Ok(());
        }
        let Some(files) = &self.files else {
            return Ok(());
        };
        let bound = |file_id: u32| {
            files
                .get(&file_id)
                .copied()
                .ok_or_else(|| format!("file {file_id} is not one of the run's files"))
        };
        match r {
            Record::Durable { file_id, pages } => {
                let max = bound(*file_id)?;
                match pages.iter().find(|(p, _)| *p >= max) {
                    Some((p, _)) => Err(format!(
                        "page {p} of file {file_id} is beyond the file's largest size ({max} pages)"
                    )),
                    None => Ok(()),
                }
            }
            Record::Resize { file_id, pages } => {
                let max = bound(*file_id)?;
                if *pages > max {
                    return Err(format!(
                        "a size of {pages} pages for file {file_id} is beyond its largest size ({max} pages)"
                    ));
                }
                Ok(())
            }
            Record::Log { file_id, .. } => bound(*file_id).map(|_| ()),
            _ => Ok(()),
        }
    }
}

/// Each file's bound, or why the list cannot be a run's.
fn start_bounds(files: &[super::JournalFile]) -> Result<HashMap<u32, u64>, String> {
    if files.len() > MAX_FILES {
        return Err(format!("{} files, more than any run has", files.len()));
    }
    let mut out = HashMap::with_capacity(files.len());
    for f in files {
        if f.file_id as usize >= files.len() {
            return Err(format!(
                "file id {} in a run of {} files (a run numbers its files from 0)",
                f.file_id,
                files.len()
            ));
        }
        let max = f.max_pages.unwrap_or(MAX_FILE_PAGES);
        if out.insert(f.file_id, max).is_some() {
            return Err(format!("file id {} named twice", f.file_id));
        }
    }
    Ok(out)
}
