//! One run per file set: before a run deletes, creates or opens any file of its set, it takes
//! an exclusive `flock` on a lock file beside each (`NAME.lock`), and `verify` a shared one,
//! so a second run, or a verify during a run, refuses instead of reporting the other process's
//! writes as corruption.
//!
//! The kernel drops a flock when its process dies, so a run killed with SIGKILL leaves no lock
//! behind; the lock file's text (PID, host, start time of the run holding it, emptied when the
//! run ends) names the holder in a refusal, and says when a lock left by a dead run is taken
//! over. docs/durability.md "What locking covers" says what it does not cover (hosts that
//! share a filesystem without sharing its locks).
//!
//! Why the lock files do not go through the `io` door (`crate::io::Backend`), as every file
//! under test and the journal do: a `flock` is taken on a kernel file descriptor, and it is
//! about processes on one kernel, not about the device. The in-memory faulty backend has no
//! descriptor to lock, and a lock that a faulty device could "lose" would let two runs share a
//! file set and accuse each other. So they are opened here with `std::fs`; faultfs, being a
//! real filesystem, still reaches them (tests/run_lock.rs refuses a second run through a
//! faultfs mount).
//!
//! How they are opened (docs/security.md): through `io::safefile`, never following a symlink,
//! never waiting on a FIFO, and refusing anything but a regular file with one link (a run's
//! also owned by its user) before anything is written; never truncated on open — the record
//! is rewritten in place only once the flock is held. `verify` creates nothing: it opens an
//! existing lock file read-only and takes its shared lock on that; no lock file means no run
//! holds the file (a run creates its lock files before it touches the set).
//!
//! A set may have no lock files at all (copied without them, or they were removed), so verify
//! also takes its shared flock on each file of the set itself, before it looks for the lock
//! files; a run, once it holds its lock files, probes each existing file of the set with an
//! exclusive flock before it deletes or opens one, and refuses while a verify holds it. In
//! that order, a verify and a run starting together cannot both go on: either the run finds
//! the verify's flock on a file, or the verify finds the run's on a lock file.

mod record;

use std::fs::File;
use std::path::{Path, PathBuf};

use rustix::fs::{flock, FlockOperation};

use crate::io::safefile::{self, Create, SafeFileError, Use};

use record::{read_record, write_record, Holder};

/// A file of the set is locked by another process.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another sqliosim holds the lock.
    #[error(
        "{file} is in use by {holder}; wait for it to finish, stop it, or use another directory"
    )]
    Busy {
        /// The file of the set.
        file: PathBuf,
        /// Who holds it, as its lock file says.
        holder: String,
    },
    /// The lock file cannot be created, opened or written.
    #[error("{path}: cannot {what} the lock file: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The lock file's name holds something a lock file must not be (a symlink, a hard
    /// link, a FIFO, a directory, another user's file).
    #[error(transparent)]
    Unsafe(#[from] SafeFileError),
}

/// Locks held on a file set; released (and the lock files emptied) when dropped.
#[derive(Debug)]
pub struct SetLock {
    files: Vec<File>,
    exclusive: bool,
    /// What each lock file said when it was taken (a dead run's record, or empty).
    left: Vec<String>,
    /// Put `left` back on drop instead of emptying the files.
    put_back: bool,
    /// A verify's shared flocks on the files of the set themselves.
    held: Vec<File>,
}

impl SetLock {
    /// On release, puts back the records that dead runs had left instead of emptying the lock
    /// files: a run that refuses to start over a crashed run's files leaves them as it found
    /// them, so the next attempt is refused too.
    pub fn put_back_left(&mut self) {
        self.put_back = true;
    }
}

impl Drop for SetLock {
    fn drop(&mut self) {
        if self.exclusive {
            // Emptied, not removed: removing a lock file races with a process that opened it.
            for (f, left) in self.files.iter().zip(&self.left) {
                let _ = f.set_len(0);
                if self.put_back && !left.is_empty() {
                    use std::os::unix::fs::FileExt;
                    let _ = f.write_all_at(left.as_bytes(), 0);
                }
            }
        }
    }
}

/// The locks taken, and a note for each lock a dead run had left.
#[derive(Debug)]
pub struct Taken {
    /// Held until dropped.
    pub lock: SetLock,
    /// "took over the lock … left by …" notes, to tell the user.
    pub taken_over: Vec<String>,
}

/// The lock file of a file of the set: `NAME.lock` beside it.
pub fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    file.with_file_name(name)
}

/// Locks every file of `files` (exclusive for a run, shared for a verify), all or nothing.
/// `command` is what the holder record says this process is ("run", …).
pub fn lock_set(files: &[PathBuf], exclusive: bool, command: &str) -> Result<Taken, LockError> {
    let mut taken = Taken {
        lock: SetLock {
            files: Vec::with_capacity(files.len()),
            exclusive,
            left: Vec::with_capacity(files.len()),
            put_back: false,
            held: Vec::new(),
        },
        taken_over: Vec::new(),
    };
    if !exclusive {
        taken.lock.held = hold_files(files)?;
    }
    // Non-blocking locks cannot deadlock, so the files are taken in the set's order (data
    // files first), and a refusal names the first file in use.
    let mut seen = Vec::with_capacity(files.len());
    for file in files {
        let path = lock_path(file);
        if seen.contains(&path) {
            continue;
        }
        let Some(f) = take_one(&path, file, exclusive)? else {
            // verify, and no lock file: no run holds the file, and verify creates nothing.
            continue;
        };
        let left = read_record(&f, &path)?;
        if let Some(h) = Holder::parse(&left) {
            taken.taken_over.push(format!(
                "took over the lock {} left by {}, which ended without releasing it (killed or crashed){}",
                path.display(),
                h.describe(),
                h.other_host_warning()
            ));
        }
        if exclusive {
            write_record(&f, &path, command)?;
        }
        taken.lock.files.push(f);
        taken.lock.left.push(left);
        seen.push(path);
    }
    if exclusive {
        probe_files(files)?;
    }
    Ok(taken)
}

/// Opens a file of the set only to flock it: read-only, never following a symlink nor
/// waiting on a FIFO, whatever it is (verify judges that itself); `None` when it cannot be
/// opened (missing: verify says so).
fn open_to_flock(file: &Path) -> Option<File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rustix::fs::open(file, flags, Mode::empty())
        .ok()
        .map(File::from)
}

/// Takes `op` (non-blocking) on each file of the set that can be opened; the flocks taken, or
/// the first file another process holds. A filesystem without flock is passed over: the lock
/// files still keep runs out.
fn flock_each(files: &[PathBuf], op: FlockOperation) -> Result<Vec<File>, &PathBuf> {
    let mut held = Vec::with_capacity(files.len());
    for file in files {
        let Some(f) = open_to_flock(file) else {
            continue;
        };
        match flock(&f, op) {
            Ok(()) => held.push(f),
            Err(rustix::io::Errno::WOULDBLOCK) => return Err(file),
            Err(_) => {}
        }
    }
    Ok(held)
}

/// A verify's shared flocks on the files of the set: refused while a run probes one.
fn hold_files(files: &[PathBuf]) -> Result<Vec<File>, LockError> {
    flock_each(files, FlockOperation::NonBlockingLockShared).map_err(|file| LockError::Busy {
        file: file.clone(),
        holder: "a sqliosim run starting up".into(),
    })
}

/// Refuses a run while a verify holds a file of the set itself (a set without lock files).
/// The probe's flocks are dropped at once: the run's own lock files keep later verifies out.
fn probe_files(files: &[PathBuf]) -> Result<(), LockError> {
    flock_each(files, FlockOperation::NonBlockingLockExclusive)
        .map(drop)
        .map_err(|file| LockError::Busy {
            file: file.clone(),
            holder: "a `sqliosim verify` reading it (or another process holding a flock on it)"
                .into(),
        })
}

/// Opens and locks the lock file at `path`: a run's created if missing (read-write), verify's
/// only if it exists (read-only; `None` when it does not).
fn take_one(path: &Path, file: &Path, exclusive: bool) -> Result<Option<File>, LockError> {
    let f = if exclusive {
        safefile::open_own(path, Create::Either)?
    } else {
        match safefile::open_existing(path, Use::Named)? {
            Some(f) => f,
            None => return Ok(None),
        }
    };
    let op = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    match flock(&f, op) {
        Ok(()) => Ok(Some(f)),
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let text = read_record(&f, path).unwrap_or_default();
            let holder = match Holder::parse(&text) {
                // The run named has ended (killed): what holds its lock is what it left
                // behind for a moment, a process it was starting (forked, not yet exec'd) or
                // I/O the kernel ends after the kill. Waited for, briefly.
                Some(h) if h.ended() => {
                    if flock_within(&f, op, ENDED_GRACE) {
                        return Ok(Some(f));
                    }
                    format!(
                        "{}, which has ended; a process it started still holds the lock after {} s",
                        h.describe(),
                        ENDED_GRACE.as_secs()
                    )
                }
                Some(h) => h.describe(),
                None => "another sqliosim process (a verify, or a run starting up)".to_string(),
            };
            Err(LockError::Busy {
                file: file.into(),
                holder,
            })
        }
        Err(e) => Err(LockError::Io {
            path: path.into(),
            what: "flock",
            source: e.into(),
        }),
    }
}

/// How long a lock whose named run has ended is waited for.
const ENDED_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Tries `op` (non-blocking) again every 20 ms for up to `grace`; true once taken.
fn flock_within(f: &File, op: FlockOperation, grace: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < grace {
        std::thread::sleep(std::time::Duration::from_millis(20));
        if flock(f, op).is_ok() {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(dir: &Path) -> Vec<PathBuf> {
        vec![dir.join("a.mdx"), dir.join("a.ldx")]
    }

    #[test]
    fn a_second_exclusive_lock_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = lock_set(&set(dir.path()), true, "run").expect("first");
        assert!(first.taken_over.is_empty());
        let err = lock_set(&set(dir.path()), true, "run").expect_err("busy");
        let text = err.to_string();
        assert!(
            text.contains(&format!("PID {}", std::process::id())),
            "{text}"
        );
        assert!(lock_set(&set(dir.path())[1..], false, "verify").is_err());
        drop(first);
        let again = lock_set(&set(dir.path()), false, "verify").expect("free again");
        assert!(
            again.taken_over.is_empty(),
            "a released lock is not taken over"
        );
    }

    /// A set without lock files (copied without them): a verify still keeps a run out while it
    /// reads, and the run that is refused says a verify holds the file.
    #[test]
    fn a_verify_of_a_set_without_lock_files_keeps_a_run_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = set(dir.path());
        for f in &files {
            std::fs::write(f, b"data").expect("write");
        }
        let verify = lock_set(&files, false, "verify").expect("verify");
        assert!(!lock_path(&files[0]).exists(), "verify creates nothing");
        let err = lock_set(&files, true, "run").expect_err("a verify reads the set");
        assert!(err.to_string().contains("sqliosim verify"), "{err}");
        drop(verify);
        lock_set(&files, true, "run").expect("free once the verify is done");
    }

    #[test]
    fn a_lock_left_by_a_dead_run_is_taken_over_and_said() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = set(dir.path());
        let stale = "pid=4242\nhost=h1\nsince_us=0\ncommand=sqliosim run\n";
        std::fs::write(lock_path(&files[0]), stale).expect("write");
        let t = lock_set(&files, true, "run").expect("taken over");
        assert_eq!(t.taken_over.len(), 1, "{:?}", t.taken_over);
        assert!(t.taken_over[0].contains("PID 4242 on host h1"));
        let now = std::fs::read_to_string(lock_path(&files[0])).expect("read");
        assert!(now.contains(&format!("pid={}", std::process::id())));
        drop(t);
        assert_eq!(std::fs::read(lock_path(&files[0])).expect("read").len(), 0);
    }

    #[test]
    fn a_refusing_run_puts_the_dead_runs_record_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = set(dir.path());
        let stale = "pid=4242\nhost=h1\nsince_us=0\ncommand=sqliosim run\n";
        std::fs::write(lock_path(&files[0]), stale).expect("write");
        let mut t = lock_set(&files, true, "run").expect("taken");
        t.lock.put_back_left();
        drop(t);
        let now = std::fs::read_to_string(lock_path(&files[0])).expect("read");
        assert_eq!(
            now, stale,
            "the next attempt finds the dead run's record again"
        );
        assert_eq!(std::fs::read(lock_path(&files[1])).expect("read").len(), 0);
    }

    #[test]
    fn shared_locks_coexist() {
        let dir = tempfile::tempdir().expect("tempdir");
        drop(lock_set(&set(dir.path()), true, "run").expect("a run made the lock files"));
        let a = lock_set(&set(dir.path()), false, "verify").expect("a");
        let b = lock_set(&set(dir.path()), false, "verify").expect("b");
        assert!(lock_set(&set(dir.path()), true, "run").is_err());
        drop((a, b));
    }

    #[test]
    fn verify_creates_no_lock_file_and_planted_names_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = set(dir.path());
        let v = lock_set(&files, false, "verify").expect("nothing to lock");
        assert!(!lock_path(&files[0]).exists(), "verify created a lock file");
        drop(v);
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").expect("victim");
        std::os::unix::fs::symlink(&victim, lock_path(&files[0])).expect("symlink");
        for exclusive in [true, false] {
            let e = lock_set(&files, exclusive, "run").expect_err("a symlink");
            assert!(e.to_string().contains("is a symlink"), "{e}");
        }
        std::fs::remove_file(lock_path(&files[0])).expect("rm");
        std::fs::hard_link(&victim, lock_path(&files[0])).expect("link");
        let e = lock_set(&files, true, "run").expect_err("a hard link");
        assert!(e.to_string().contains("has 2 hard links"), "{e}");
        assert_eq!(std::fs::read(&victim).expect("read"), b"precious");
    }
}
