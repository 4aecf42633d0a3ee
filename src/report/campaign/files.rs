//! The files of one cycle, read through the safe-file door: every directory below the
//! campaign directory (`hosts`, `hosts/HOST`, `hosts/HOST/cycle-K`) and every file in it is
//! opened relative to its parent without following a symlink, and read whole only within its
//! kind's size limit, so that nothing planted in the tree leads the report out of it or stalls
//! it. What could not be read is kept as a sentence naming the file and why.

use std::ffi::OsStr;
use std::path::PathBuf;

use crate::io::safefile::{read_bounded_in, Dir, Kind, NameProblem, SafeFileError, Use};

/// A directory of the tree: opened, absent, or refused (why, naming it).
#[derive(Debug)]
pub enum Place {
    /// Opened.
    Open(Dir),
    /// No such directory.
    Absent,
    /// Not opened: a symlink, not a directory, or unreadable.
    Refused(String),
}

impl Place {
    /// The campaign's `hosts` directory.
    pub fn hosts(top: &Dir) -> Place {
        Place::below(top, OsStr::new("hosts"))
    }

    /// The subdirectory `name` of `dir`, never through a symlink.
    pub fn below(dir: &Dir, name: &OsStr) -> Place {
        match dir.open_subdir(name) {
            Ok(Some(d)) => Place::Open(d),
            Ok(None) => Place::Absent,
            Err(e) => Place::Refused(why(e)),
        }
    }

    /// The subdirectory `name` of this place (absent or refused as this place is).
    pub fn child(&self, name: &str) -> Place {
        match self {
            Place::Open(d) => Place::below(d, OsStr::new(name)),
            Place::Absent => Place::Absent,
            Place::Refused(why) => Place::Refused(why.clone()),
        }
    }
}

/// Why a name in the tree could not be used, naming it.
fn why(e: SafeFileError) -> String {
    match e {
        SafeFileError::Refused {
            path,
            problem: NameProblem::Symlink,
        } => format!(
            "{}: is a symlink; not followed (nothing in a campaign's tree is read through a symlink)",
            path.display()
        ),
        SafeFileError::Refused { path, problem } => {
            format!("{}: {problem}; not read", path.display())
        }
        e => e.to_string(),
    }
}

/// One file of a cycle.
#[derive(Debug, Clone, PartialEq)]
pub enum Got {
    /// There is no such file.
    Absent,
    /// Its content.
    Bytes(Vec<u8>),
    /// It could not be read: why, naming the file.
    Unreadable(String),
}

/// What a cycle directory holds (or why it could not be opened).
#[derive(Debug, Clone, PartialEq)]
pub struct CycleFiles {
    /// `hosts/HOST/cycle-K`, for messages.
    pub dir: PathBuf,
    /// Why the cycle directory (or a directory above it) could not be opened.
    pub refused: Option<String>,
    /// `cut.json`.
    pub cut: Got,
    /// `verify.json`.
    pub verify_json: Got,
    /// `verify.rc`.
    pub verify_rc: Got,
    /// `smart-before.txt`.
    pub smart_before: Got,
    /// `smart-after.txt`.
    pub smart_after: Got,
}

fn read(dir: &Dir, name: &str, kind: Kind) -> Got {
    match read_bounded_in(dir, OsStr::new(name), Use::Input, kind) {
        Ok(Some(b)) => Got::Bytes(b),
        Ok(None) => Got::Absent,
        Err(e) => Got::Unreadable(why(e)),
    }
}

/// Reads the cycle directory `cycle-K` of a host's place; `dir` is its path, for messages.
pub fn read_cycle(host: &Place, k: u32, dir: PathBuf) -> CycleFiles {
    let mut files = CycleFiles {
        dir,
        refused: None,
        cut: Got::Absent,
        verify_json: Got::Absent,
        verify_rc: Got::Absent,
        smart_before: Got::Absent,
        smart_after: Got::Absent,
    };
    match host.child(&format!("cycle-{k}")) {
        Place::Open(d) => {
            files.cut = read(&d, "cut.json", Kind::CycleRecord);
            files.verify_json = read(&d, "verify.json", Kind::Summary);
            files.verify_rc = read(&d, "verify.rc", Kind::CycleRecord);
            files.smart_before = read(&d, "smart-before.txt", Kind::CycleRecord);
            files.smart_after = read(&d, "smart-after.txt", Kind::CycleRecord);
        }
        Place::Absent => {}
        Place::Refused(why) => files.refused = Some(why),
    }
    files
}
