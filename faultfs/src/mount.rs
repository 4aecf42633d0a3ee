//! Test support: start a faultfs daemon, talk to its control file, unmount on drop.
//!
//! Used by faultfs's own tests and by sqliosim's end-to-end tests. The guard
//! never leaves a mount behind: Drop unmounts (fusermount3 -u, then umount,
//! then umount -l) and reaps the daemon, killing it if it does not exit.

#![expect(unsafe_code, reason = "mounting calls into libc with raw C strings")]

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};
use thiserror::Error;

use crate::control::CONTROL_NAME;

/// How long to wait for the mount to appear, and for the daemon to exit after unmount.
const WAIT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(20);

/// Why a faultfs mount could not be started, driven or stopped.
#[derive(Debug, Error)]
pub enum MountError {
    /// The faultfs binary was not found.
    #[error(
        "faultfs binary not found ({0}); build it with `cargo build -p faultfs` or set FAULTFS_BIN"
    )]
    NoBinary(String),
    /// A path or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The daemon exited before the mount appeared.
    #[error("faultfs exited before mounting ({0}); its stderr says why")]
    Exited(std::process::ExitStatus),
    /// The mount did not appear in time.
    #[error("no mount at {0} after {WAIT:?}")]
    Timeout(PathBuf),
    /// The daemon answered a command with an error.
    #[error("faultfs rejected {cmd:?}: {reply}")]
    Rejected {
        /// The command sent.
        cmd: String,
        /// The daemon's reply.
        reply: String,
    },
    /// Every unmount attempt failed.
    #[error("could not unmount {0}")]
    Unmount(PathBuf),
}

/// Shorthand for results of this module.
pub type Result<T> = std::result::Result<T, MountError>;

fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> MountError {
    let what = what.into();
    move |source| MountError::Io { what, source }
}

/// A mounted faultfs; unmounts and reaps the daemon when dropped.
pub struct Mount {
    child: Option<Child>,
    mountpoint: PathBuf,
}

impl Mount {
    /// Mounts with the faultfs binary from `FAULTFS_BIN` or next to the running test binary.
    pub fn start(backing: &Path, mountpoint: &Path) -> Result<Mount> {
        Mount::start_with_binary(&find_binary()?, backing, mountpoint)
    }

    /// Mounts `backing` at `mountpoint` with the given faultfs binary.
    pub fn start_with_binary(bin: &Path, backing: &Path, mountpoint: &Path) -> Result<Mount> {
        Mount::start_with_args(bin, backing, mountpoint, &[])
    }

    /// Mounts with extra daemon arguments, such as `["--fault", "lost page=3"]`.
    pub fn start_with_args(
        bin: &Path,
        backing: &Path,
        mountpoint: &Path,
        args: &[&str],
    ) -> Result<Mount> {
        let mnt = mountpoint
            .canonicalize()
            .map_err(io_err(format!("mountpoint {}", mountpoint.display())))?;
        let child = Command::new(bin)
            .arg(backing)
            .arg(&mnt)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(io_err(format!("starting {}", bin.display())))?;
        let mut mount = Mount {
            child: Some(child),
            mountpoint: mnt,
        };
        mount.wait_mounted()?;
        Ok(mount)
    }

    fn wait_mounted(&mut self) -> Result<()> {
        let deadline = Instant::now() + WAIT;
        while !is_mounted(&self.mountpoint) {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    return Err(MountError::Exited(status));
                }
            }
            if Instant::now() > deadline {
                return Err(MountError::Timeout(self.mountpoint.clone()));
            }
            sleep(POLL);
        }
        Ok(())
    }

    /// The mount point (canonical path).
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// Path of a file inside the mount.
    pub fn path(&self, name: &str) -> PathBuf {
        self.mountpoint.join(name)
    }

    /// Sends one control line and returns the daemon's reply.
    pub fn command(&self, line: &str) -> Result<String> {
        let path = self.path(CONTROL_NAME);
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io_err(format!("opening {}", path.display())))?;
        let sent = f.write_all(format!("{}\n", line.trim()).as_bytes());
        let mut reply = String::new();
        f.read_to_string(&mut reply)
            .map_err(io_err(format!("reading {}", path.display())))?;
        if sent.is_err() || reply.starts_with("err") {
            let cmd = line.to_string();
            return Err(MountError::Rejected { cmd, reply });
        }
        Ok(reply)
    }

    /// Arms a fault (`"lost file=x page=5"`, with or without a leading `inject`); returns its id.
    pub fn inject(&self, spec: &str) -> Result<u64> {
        let spec = spec.trim();
        let spec = spec.strip_prefix("inject ").unwrap_or(spec);
        let reply = self.command(&format!("inject {spec}"))?;
        field(&reply, "id").ok_or(MountError::Rejected {
            cmd: spec.to_string(),
            reply,
        })
    }

    /// Removes every armed fault.
    pub fn clear(&self) -> Result<()> {
        self.command("clear").map(|_| ())
    }

    /// The status text: a `seed=… faults=…` line, then one line per fault.
    pub fn status(&self) -> Result<String> {
        let path = self.path(CONTROL_NAME);
        std::fs::read_to_string(&path).map_err(io_err(format!("reading {}", path.display())))
    }

    /// How many times fault `id` has fired (0 if it is unknown).
    pub fn fired(&self, id: u64) -> Result<u64> {
        let status = self.status()?;
        let line = status.lines().find(|l| l.starts_with(&format!("id={id} ")));
        Ok(line.and_then(|l| field(l, "fired")).unwrap_or(0))
    }

    /// Kills the daemon with SIGKILL, as a device vanishing would: accesses then fail ENOTCONN.
    pub fn kill_daemon(&mut self) -> Result<()> {
        if let Some(child) = self.child.as_mut() {
            child.kill().map_err(io_err("killing faultfs"))?;
            child.wait().map_err(io_err("reaping faultfs"))?;
        }
        Ok(())
    }

    /// Unmounts and waits for the daemon, reporting failure (Drop does the same silently).
    pub fn unmount(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        let mnt = self.mountpoint.clone();
        let attempts: [(&str, &[&str]); 3] = [
            ("fusermount3", &["-u"]),
            ("umount", &[]),
            ("umount", &["-l"]),
        ];
        let mut unmounted = !is_mounted(&mnt);
        for (tool, args) in attempts {
            if unmounted {
                break;
            }
            let quiet = Command::new(tool)
                .args(args)
                .arg(&mnt)
                .stderr(Stdio::null())
                .status();
            unmounted = quiet.is_ok_and(|s| s.success()) || !is_mounted(&mnt);
        }
        if let Some(mut child) = self.child.take() {
            reap(&mut child);
        }
        if unmounted {
            Ok(())
        } else {
            Err(MountError::Unmount(mnt))
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            eprintln!("faultfs: {e}");
        }
    }
}

/// Waits for the daemon to exit after unmount; kills it if it hangs.
fn reap(child: &mut Child) {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        sleep(POLL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The number after `key=` in a line of `key=value` words.
fn field(text: &str, key: &str) -> Option<u64> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// Whether `/proc/self/mountinfo` lists a mount at `path` (a canonical path).
pub fn is_mounted(path: &Path) -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    let want = path.to_string_lossy();
    // Field 5 is the mount point, with space, tab, newline and backslash octal-escaped.
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .any(|p| unescape_mountinfo(p) == want)
}

fn unescape_mountinfo(p: &str) -> String {
    p.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// The faultfs binary: `FAULTFS_BIN`, or `faultfs` beside or above the running executable
/// (test binaries live in target/debug/deps, the binary in target/debug).
fn find_binary() -> Result<PathBuf> {
    if let Some(bin) = std::env::var_os("FAULTFS_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let exe = std::env::current_exe().map_err(io_err("locating the test executable"))?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("faultfs"))
        .find(|p| p.is_file())
        .ok_or_else(|| MountError::NoBinary(format!("looked beside {}", exe.display())))
}

/// Checks that FUSE can be mounted here: /dev/fuse opens, and we are root or have fusermount3.
pub fn fuse_available() -> std::result::Result<(), String> {
    if !Path::new("/dev/fuse").exists() {
        return Err("/dev/fuse does not exist".into());
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map_err(|e| format!("cannot open /dev/fuse: {e}"))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let fusermount = Command::new("fusermount3").arg("-V").output().is_ok();
    if !root && !fusermount {
        return Err("not root and fusermount3 is not installed".into());
    }
    Ok(())
}

/// For tests: true if FUSE is usable; otherwise prints `SKIPPED: …` and returns false,
/// or panics when `SQLIOSIM_REQUIRE_FUSE=1` (CI) so a missing FUSE never passes silently.
pub fn fuse_or_skip(test: &str) -> bool {
    match fuse_available() {
        Ok(()) => true,
        Err(reason) if std::env::var("SQLIOSIM_REQUIRE_FUSE").as_deref() == Ok("1") => {
            panic!("{test}: SQLIOSIM_REQUIRE_FUSE=1 but FUSE is unavailable: {reason}")
        }
        Err(reason) => {
            // Written to fd 2 directly: the test harness captures eprintln! of passing tests,
            // and a skip must be seen.
            let line =
                format!("SKIPPED: faultfs tests need /dev/fuse and root: {reason} ({test})\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_mountinfo_escapes() {
        assert_eq!(field("ok id=12 byte=5", "id"), Some(12));
        assert_eq!(field("id=1 kind=lost fired=3 hits=", "fired"), Some(3));
        assert_eq!(field("ok", "id"), None);
        assert_eq!(unescape_mountinfo("/a\\040b"), "/a b");
        assert!(is_mounted(Path::new("/proc")));
        assert!(!is_mounted(Path::new("/no/such/mount")));
    }
}
