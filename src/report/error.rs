//! Errors of the evidence writers and readers.

use std::path::PathBuf;

/// Why an evidence file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be created, written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The input is neither a readable XML log nor a JSON summary.
    #[error("{path}: not a sqliosim/SQLIOSim XML log or JSON summary: {reason}")]
    Unreadable {
        /// The file concerned.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// A name the tool writes holds something it must not write through (a planted symlink,
    /// hard link, FIFO, directory, another user's file).
    #[error(transparent)]
    Unsafe(#[from] crate::io::safefile::SafeFileError),
    /// An existing file under the name is not one sqliosim wrote.
    #[error("{path}: the file exists and was not written by sqliosim; refusing to overwrite it. Choose another path, remove it, or pass --force")]
    NotOurs {
        /// The file concerned.
        path: PathBuf,
    },
    /// Serialising the JSON summary failed (a bug).
    #[error("JSON encoding failed: {0}")]
    Json(#[from] serde_json::Error),
}

impl ReportError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ReportError {
        ReportError::Io {
            path: path.into(),
            source,
        }
    }
}
