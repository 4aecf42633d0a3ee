//! How much of a file the tool reads into memory, by kind: one table of size limits, and the
//! one function that reads a file whole ([`read_bounded`]) after checking its size on the
//! opened descriptor against its kind's limit. A sparse file of terabytes costs its maker no
//! disk, so without a bound one `report x.json` could take the machine's memory, or abort the
//! tool under `ulimit -v` (docs/security.md, "Input limits").
//!
//! Why each limit is what it is (each with a margin of ten or more over what a real run
//! writes, and each small enough that reading and parsing the largest allowed file keeps
//! `report`, `verify` and `run --resume` under 1 GiB of memory):
//!
//! | Kind | Limit | What a real one holds |
//! |---|---|---|
//! | JSON summary | 64 MiB | findings are capped per class (the rest counted in `suppressed`); a day's run writes a few MB |
//! | XML log | 128 MiB | entries repeat past a cap as one counted line; SQLIOSim's own logs are a few MB |
//! | configuration | 16 MiB | 20,000 `[FileN]` sections are 2 MB |
//! | host list | 16 MiB | a million host names |
//! | `sqlio -F` parameter file | 1 MiB | one line per target file |
//! | lock record | 64 KiB | one line: pid, host, command |
//! | witness token | 4 KiB | a secret of a few dozen bytes |
//! | campaign description | 16 MiB | `campaign.json`: the cycle count and the host names (at most 100,000 of them, a few MB) |
//! | campaign cycle record | 64 KiB | `cut.json`, `verify.rc`, `smart-*.txt`: a few hundred bytes each |
//! | journal | 256 MiB | compacted to its snapshot (16 bytes per durable page) once it is twice that: 256 MiB is 8 M durable pages, a 64 GiB file set of 8 KiB pages written whole |

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{SafeFileError, Use};

/// What kind of file is being read, which sets its size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A JSON run summary (`report`, a run's evidence of the previous run).
    Summary,
    /// A sqliosim or SQLIOSim XML error log.
    XmlLog,
    /// A configuration file (`--config`, `sqliosim.cfg.ini`).
    Config,
    /// A host list (`report --expect-hosts`).
    HostList,
    /// A `sqlio -F` parameter file.
    ParamFile,
    /// A lock file's record.
    LockRecord,
    /// The durability journal.
    Journal,
    /// The witness's shared token (`--token-file`, `--witness-token-file`).
    Token,
    /// A power-cycle campaign's `campaign.json` (`report CAMPAIGN_DIR`).
    Campaign,
    /// A small record of one campaign cycle: `cut.json`, `verify.rc`, `smart-*.txt`.
    CycleRecord,
}

const MIB: u64 = 1 << 20;

impl Kind {
    /// The most bytes a file of this kind may hold (see the module's table for why).
    pub const fn limit(self) -> u64 {
        match self {
            Kind::Summary => 64 * MIB,
            Kind::XmlLog => 128 * MIB,
            Kind::Config | Kind::HostList | Kind::Campaign => 16 * MIB,
            Kind::ParamFile => MIB,
            Kind::LockRecord | Kind::CycleRecord => 64 << 10,
            Kind::Token => 4 << 10,
            Kind::Journal => 256 * MIB,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Summary => "a JSON summary",
            Kind::XmlLog => "an XML log",
            Kind::Config => "a configuration",
            Kind::HostList => "a host list",
            Kind::ParamFile => "a parameter file",
            Kind::LockRecord => "a lock record",
            Kind::Token => "a witness token",
            Kind::Journal => "a journal",
            Kind::Campaign => "a campaign description",
            Kind::CycleRecord => "a campaign cycle record",
        })
    }
}

/// A file larger than its kind allows, refused before a byte of it was read.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", path.display(), self.why())]
pub struct TooBig {
    /// The file.
    pub path: PathBuf,
    /// Its size, from `fstat` on the opened descriptor.
    pub size: u64,
    /// The limit for its kind.
    pub limit: u64,
    /// Its kind.
    pub kind: Kind,
}

impl TooBig {
    /// What is wrong, without the file's name (for messages that give it already).
    pub fn why(&self) -> String {
        format!(
            "{} bytes ({} MiB), over the {}-byte ({} MiB) limit for {}; refusing to read it (is it the file you meant?)",
            self.size,
            self.size >> 20,
            self.limit,
            self.limit >> 20,
            self.kind
        )
    }
}

/// Checks the size of the opened `file` against `kind`'s limit.
pub fn check_size(file: &std::fs::File, path: &Path, kind: Kind) -> Result<u64, SafeFileError> {
    let st = rustix::fs::fstat(file).map_err(|e| super::os(path, "stat", e))?;
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > kind.limit() {
        return Err(SafeFileError::TooBig(Box::new(TooBig {
            path: path.to_path_buf(),
            size,
            limit: kind.limit(),
            kind,
        })));
    }
    Ok(size)
}

/// Reads the opened `file` whole, once its size is within `kind`'s limit; never more than the
/// limit even when the file grows meanwhile (a longer file is refused, not cut).
pub fn read_checked(
    file: std::fs::File,
    path: &Path,
    kind: Kind,
) -> Result<Vec<u8>, SafeFileError> {
    let size = check_size(&file, path, kind)?;
    let read_err = |source| SafeFileError::Os {
        path: path.to_path_buf(),
        what: "read",
        source,
    };
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
        .map_err(|_| read_err(std::io::ErrorKind::OutOfMemory.into()))?;
    // One byte past the limit tells a file that grew past it from one that reached it.
    file.take(kind.limit() + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > kind.limit() {
        return Err(SafeFileError::TooBig(Box::new(TooBig {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            limit: kind.limit(),
            kind,
        })));
    }
    Ok(bytes)
}

/// The whole content of `name` in `dir`, a file of `kind`, opened relative to the directory
/// (never through a symlink, never waiting on a FIFO) and checked against `use_`; `None` when
/// there is no such name. For trees walked below a directory the user named, where a symlink
/// planted inside must not lead the reader out of it.
pub fn read_bounded_in(
    dir: &super::Dir,
    name: &std::ffi::OsStr,
    use_: Use,
    kind: Kind,
) -> Result<Option<Vec<u8>>, SafeFileError> {
    match dir.open_read(name, use_)? {
        Some(file) => read_checked(file, &dir.join(name), kind).map(Some),
        None => Ok(None),
    }
}

/// The whole content of `path`, a file of `kind`, opened as `use_` says (a [`Use::Input`] is
/// opened as the user named it, symlinks followed; any other never through a symlink), its
/// kind, owner and size checked on the descriptor before a byte is read.
pub fn read_bounded(path: &Path, use_: Use, kind: Kind) -> Result<Vec<u8>, SafeFileError> {
    let file = match use_ {
        Use::Input => super::open_input(path)?,
        _ => super::open_existing(path, use_)?.ok_or_else(|| SafeFileError::Os {
            path: path.to_path_buf(),
            what: "open",
            source: std::io::ErrorKind::NotFound.into(),
        })?,
    };
    read_checked(file, path, kind)
}
