//! Versions: each format names the versions this build reads in an enum made by
//! `versions!`, and a version it does not read is an [`UnknownVersion`], said with the
//! format, the version found and the versions read ([`ForeignFile`] adds the file's path).
//!
//! Found versions are `u32`: the backup streams and the witness's record keep theirs in a
//! `u32` field, and a version is shown as it was stored, never narrowed first.

use std::fmt;
use std::path::PathBuf;

/// A format's versions: the ones this build reads, and the one it writes.
pub trait Versioned: Sized + Copy {
    /// The format's name in messages ("journal", "log backup stream", …).
    const FORMAT: &'static str;
    /// Every version this build reads, as stored.
    const READS: &'static [u32];
    /// The version this build writes.
    const CURRENT: Self;

    /// The version stored as `n`, if this build reads it.
    fn from_number(n: u32) -> Option<Self>;

    /// The version as stored.
    fn number(self) -> u32;

    /// The version stored as `found`, or why this build refuses it.
    fn check(found: u32) -> Result<Self, UnknownVersion> {
        Self::from_number(found).ok_or(UnknownVersion {
            format: Self::FORMAT,
            found,
            reads: Self::READS,
        })
    }
}

/// Defines a format's version enum: its variants with their stored numbers, and the
/// [`Versioned`] implementation (the format's name and the version this build writes).
macro_rules! versions {
    ($(#[$m:meta])* $vis:vis enum $name:ident: $format:literal, writes $cur:ident {
        $($(#[$vm:meta])* $var:ident = $n:literal),+ $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vm])* $var),+
        }

        impl $crate::codec::Versioned for $name {
            const FORMAT: &'static str = $format;
            const READS: &'static [u32] = &[$($n),+];
            const CURRENT: Self = $name::$cur;

            fn from_number(n: u32) -> Option<Self> {
                match n {
                    $($n => Some($name::$var),)+
                    _ => None,
                }
            }

            fn number(self) -> u32 {
                match self {
                    $($name::$var => $n),+
                }
            }
        }
    };
}
pub(crate) use versions;

/// A version of a format this build does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownVersion {
    /// The format.
    pub format: &'static str,
    /// The version found.
    pub found: u32,
    /// The versions this build reads.
    pub reads: &'static [u32],
}

impl fmt::Display for UnknownVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reads: Vec<String> = self.reads.iter().map(u32::to_string).collect();
        let plural = if reads.len() == 1 { "" } else { "s" };
        write!(
            f,
            "{} format version {}; this build of sqliosim reads version{plural} {}",
            self.format,
            self.found,
            reads.join(", ")
        )?;
        if self.found == 0 {
            // The spare bytes a version now occupies held zeros before formats stated one.
            f.write_str(
                " (0: none stated, as in journals and logs written before they stated one)",
            )?;
        }
        Ok(())
    }
}

impl UnknownVersion {
    /// The refusal of the file at `path`.
    pub fn at(self, path: impl Into<PathBuf>) -> ForeignFile {
        ForeignFile {
            path: path.into(),
            version: self,
        }
    }
}

/// A file of a format version this build does not read: refused by name, not judged (it is
/// not the device's doing; another sqliosim wrote it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {version}: refused, not read (use the sqliosim that wrote it)", path.display())]
pub struct ForeignFile {
    /// The file.
    pub path: PathBuf,
    /// Its version and the versions read.
    pub version: UnknownVersion,
}
