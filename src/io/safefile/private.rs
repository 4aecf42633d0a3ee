//! What a [`Dir`] offers beyond opening one name: files and subdirectories only the user
//! running the tool can read (page dumps hold the bytes of files that may be root-only, so
//! they are made 0600 in a 0700 directory whatever the umask and whatever an earlier run
//! left), temporaries under unguessable names (so that a name planted in a shared directory
//! cannot take a temporary's place and stop the write), subdirectories opened without
//! following a symlink, and the names a directory holds — all relative to the descriptor
//! held, never by path again.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{os, refused, Create, Dir, NameProblem, SafeFileError, Use};

/// How many fresh random names a temporary tries before giving up: a collision of 64 random
/// bits happens only when someone plants the name, and then the next name is another one.
const TEMP_TRIES: usize = 16;

impl Dir {
    /// Another descriptor of the same directory (a reader that outlives the writer holding
    /// this one, such as the bundle reading the run's dumps).
    pub fn try_clone(&self) -> Result<Dir, SafeFileError> {
        let fd = self.fd.try_clone().map_err(|source| SafeFileError::Os {
            path: self.path.clone(),
            what: "duplicate the descriptor of",
            source,
        })?;
        Ok(Dir {
            fd,
            path: self.path.clone(),
        })
    }

    /// As [`Dir::own_subdir`], but private: created mode 0700, and made 0700 when it already
    /// existed (an earlier version made it 0755), so that only we can list or read it.
    pub fn private_subdir(&self, name: &OsStr) -> Result<Dir, SafeFileError> {
        match rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(os(&self.join(name), "create the directory", e)),
        }
        let d = self.own_subdir(name)?;
        rfs::fchmod(&d.fd, Mode::from_raw_mode(0o700))
            .map_err(|e| os(&d.path, "make private (0700)", e))?;
        Ok(d)
    }

    /// Opens `name` as [`Dir::open_file`] does, a new file made mode 0600 and an existing one
    /// of ours made 0600 too: for bytes that may be another file's root-only content.
    pub fn open_private(
        &self,
        name: &OsStr,
        how: Create,
        use_: Use,
    ) -> Result<File, SafeFileError> {
        let f = self.open_file(name, how, use_)?;
        rfs::fchmod(&f, Mode::from_raw_mode(0o600))
            .map_err(|e| os(&self.join(name), "make private (0600)", e))?;
        Ok(f)
    }

    /// A new file of ours named `PREFIX` + 16 random hex digits + `suffix`, created with
    /// `O_EXCL` and mode `mode`; a name someone planted (whatever it is) is passed over for a
    /// fresh one. Returns the name and the file.
    pub fn new_temp(
        &self,
        prefix: &OsStr,
        suffix: &str,
        mode: u32,
    ) -> Result<(OsString, File), SafeFileError> {
        let flags = OFlags::RDWR
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        let mut last = None;
        for _ in 0..TEMP_TRIES {
            let mut name = prefix.to_os_string();
            name.push(format!("{:016x}{suffix}", rand::random::<u64>()));
            match rfs::openat(&self.fd, &name, flags, Mode::from_raw_mode(mode)) {
                Ok(fd) => return self.checked(fd, &name, Use::Own).map(|f| (name, f)),
                Err(Errno::EXIST) => last = Some(name),
                Err(e) => return Err(self.classify(&name, e, "create")),
            }
        }
        let name = last.unwrap_or_else(|| prefix.to_os_string());
        Err(refused(&self.join(&name), NameProblem::Exists))
    }

    /// The subdirectory `name`, opened without following a symlink (whoever owns it); `None`
    /// when there is no such name or it is not a directory.
    pub fn subdir(&self, name: &OsStr) -> Result<Option<Dir>, SafeFileError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rfs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Some(Dir {
                fd,
                path: self.join(name),
            })),
            Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP) => Ok(None),
            Err(e) => Err(os(&self.join(name), "open the directory", e)),
        }
    }

    /// As [`Dir::subdir`], but a symlink or a file under the name is refused (an error naming
    /// it), not passed over as absent: for trees read below a directory the user named where
    /// each directory is expected (a campaign's `hosts/HOST/cycle-K`).
    pub fn open_subdir(&self, name: &OsStr) -> Result<Option<Dir>, SafeFileError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rfs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => Ok(Some(Dir {
                fd,
                path: self.join(name),
            })),
            Err(Errno::NOENT) => Ok(None),
            Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                let st = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok();
                let is_link =
                    st.is_some_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
                match (is_link, e) {
                    (true, _) | (_, Errno::LOOP) => {
                        Err(refused(&self.join(name), NameProblem::Symlink))
                    }
                    _ => Err(refused(&self.join(name), NameProblem::NotDirectory)),
                }
            }
            Err(e) => Err(os(&self.join(name), "open the directory", e)),
        }
    }

    /// The names this directory holds (`.` and `..` left out), sorted.
    pub fn names(&self) -> Result<Vec<OsString>, SafeFileError> {
        let mut rd = rfs::Dir::read_from(&self.fd).map_err(|e| os(&self.path, "list", e))?;
        let mut v = Vec::new();
        while let Some(e) = rd.read() {
            let e = e.map_err(|e| os(&self.path, "list", e))?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                v.push(OsStr::from_bytes(n).to_os_string());
            }
        }
        v.sort();
        Ok(v)
    }
}
