//! Why a run could not start: the typed error of setting a run up (creating or opening its
//! files, judging a set to resume, opening its journal, allocating its frames). Every one is
//! an environment or usage error (exit 2) that names the file and says what to do; the app
//! turns it into that message. The texts are the ones users and tests know.

use std::path::PathBuf;

use crate::io::IoError;
use crate::page::FileRole;
use crate::sim::engine::files::FileError;

/// Why a run could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Creating, opening or checking a file of the set failed.
    #[error(transparent)]
    File(#[from] FileError),
    /// The storage door refused an operation.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A file's own contents refused what was asked of it (a header, a log, a stream).
    #[error("{path}: {source}")]
    At {
        /// The file.
        path: PathBuf,
        /// What went wrong, typed by the layer that found it.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A backup stream's name beside the set cannot be opened as the Backup User opens it (a
    /// planted link, a file not of ours).
    #[error("{path}: {detail}")]
    Stream {
        /// The stream.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// `--resume` over a set that is not the one the configuration makes.
    #[error("cannot resume: {path} {why}; run without --resume to create the file set")]
    NotResumable {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: NotResumable,
    },
    /// A file of the set is of a format version this build does not read (the journal, a
    /// file header): refused by its path, version and the versions read.
    #[error(transparent)]
    Foreign(#[from] crate::codec::ForeignFile),
    /// The journal a resume would carry on cannot be read.
    #[error("cannot read the journal {path} to resume ({detail}); the resume would replace it: check it with `sqliosim verify`, or move it away to resume without it")]
    JournalUnreadable {
        /// The journal.
        path: PathBuf,
        /// Why it could not be read.
        detail: String,
    },
    /// The journal a resume would carry on has lost its Start record.
    #[error("the journal {path} has no readable Start record{}: its device lost or tore a write it had acknowledged; `sqliosim verify` reports it. Move it away (it is evidence) to resume without it", damage.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    JournalStartLost {
        /// The journal.
        path: PathBuf,
        /// Its damage, when the decoding found one.
        damage: Option<String>,
    },
    /// The run's journal could not be created.
    #[error("cannot create the journal {path}: {detail}; without it lost writes cannot be found: free the limit or the space (ulimit -n, disk), or choose another --journal-dir")]
    JournalCreate {
        /// The journal.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The frames of the requests in flight could not be allocated.
    #[error("cannot allocate the I/O frames for requests in flight: {0}; raise the memory limit (ulimit -v) or lower MaxOutstandingIO and MaxMemoryMB")]
    Frames(String),
}

/// What makes a file of the set one a resume cannot carry on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotResumable {
    /// It is missing or empty.
    #[error("does not exist or is empty")]
    Missing,
    /// It is another file of its set than the configuration makes it.
    #[error("is file {found} ({found_role:?}) of its set, the configuration makes it file {want} ({want_role:?})")]
    OtherPlace {
        /// Its file id.
        found: u32,
        /// Its role.
        found_role: FileRole,
        /// The id the configuration gives it.
        want: u32,
        /// The role the configuration gives it.
        want_role: FileRole,
    },
    /// It belongs to another run than the other files.
    #[error("belongs to another run than the other files")]
    OtherRun,
}

impl SetupError {
    /// An OS error on a named file, as a file of the set reports it ([`FileError::Os`]):
    /// `what` is what was being done ("stat", "cannot read").
    pub fn os(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> Self {
        SetupError::File(FileError::Os {
            path: path.into(),
            what,
            source,
        })
    }

    /// A file's own contents refused what was asked (`source` typed by the layer that found it).
    pub fn at(
        path: impl Into<PathBuf>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SetupError::At {
            path: path.into(),
            source: Box::new(source),
        }
    }

    /// The refusal of a resume without its advice to create the set afresh (for a set whose
    /// loss the journal owes, where a plain run is refused too): `None` for other errors.
    pub fn resume_refusal(&self) -> Option<String> {
        match self {
            SetupError::NotResumable { path, why } => {
                Some(format!("cannot resume: {} {why}", path.display()))
            }
            _ => None,
        }
    }
}
