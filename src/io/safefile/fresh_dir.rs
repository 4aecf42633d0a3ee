//! Directories the tool makes for itself in a shared place (the self-test's working directory
//! in `$TMPDIR`): created by this process under a random name, mode 0700, and checked on the
//! opened descriptor, so that no name another user planted, or guessed ahead from the pid, is
//! ever taken for one of ours; and every directory inside created the same way, never found.

use std::ffi::{OsStr, OsString};

use rustix::fs::{self as rfs, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::{os, refused, Dir, NameProblem, SafeFileError};

/// How many random names are tried before giving up (a collision is already unlikely).
const TRIES: usize = 16;

impl Dir {
    /// A new directory in this one, named `prefix` and a random suffix, mode 0700 and ours
    /// (as `mkdtemp` makes them); another name is tried when one is taken.
    pub fn new_private(&self, prefix: &str) -> Result<Dir, SafeFileError> {
        let mut last = None;
        for _ in 0..TRIES {
            let name = OsString::from(format!("{prefix}{:016x}", rand::random::<u64>()));
            match self.new_subdir(&name) {
                Err(SafeFileError::Refused {
                    problem: NameProblem::Exists,
                    path,
                }) => last = Some(path),
                other => return other,
            }
        }
        Err(refused(
            &last.unwrap_or_else(|| self.path.clone()),
            NameProblem::Exists,
        ))
    }

    /// A new subdirectory `name`, created by this call (an existing entry of any kind is
    /// refused, never used), mode 0700, opened without following a symlink and checked on its
    /// descriptor: a directory, owned by us.
    pub fn new_subdir(&self, name: &OsStr) -> Result<Dir, SafeFileError> {
        let path = self.join(name);
        match rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            Err(Errno::EXIST) => return Err(refused(&path, NameProblem::Exists)),
            Err(e) => return Err(os(&path, "create the directory", e)),
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&self.fd, name, flags, Mode::empty())
            .map_err(|e| self.classify(name, e, "open the directory"))?;
        // The umask may have taken bits away; none is added beyond 0700.
        rfs::fchmod(&fd, Mode::from_raw_mode(0o700)).map_err(|e| os(&path, "chmod", e))?;
        let st = rfs::fstat(&fd).map_err(|e| os(&path, "stat", e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return Err(refused(&path, NameProblem::NotDirectory));
        }
        let me = rustix::process::geteuid().as_raw();
        if st.st_uid != me {
            return Err(refused(&path, NameProblem::Owner(st.st_uid)));
        }
        Ok(Dir { fd, path })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_private_directory_is_new_0700_and_a_taken_name_is_refused() {
        let base = tempfile::tempdir().expect("tempdir");
        let parent = Dir::open(base.path()).expect("open");
        let a = parent.new_private("p-").expect("private");
        let b = parent.new_private("p-").expect("private");
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path())
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o700);
        a.new_subdir(OsStr::new("s00")).expect("new");
        let taken = a.new_subdir(OsStr::new("s00")).expect_err("taken");
        assert!(matches!(
            taken,
            SafeFileError::Refused {
                problem: NameProblem::Exists,
                ..
            }
        ));
        std::os::unix::fs::symlink(base.path(), a.path().join("link")).expect("symlink");
        assert!(
            a.new_subdir(OsStr::new("link")).is_err(),
            "a symlink is no new directory"
        );
    }
}
