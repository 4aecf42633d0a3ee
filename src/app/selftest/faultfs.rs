//! A faultfs daemon driven by the self-test: mount, talk to its control file, unmount.
//!
//! A small copy of what faultfs's own test-support guard does, so the `sqliosim` binary does
//! not link the FUSE crate: the daemon is a separate program found beside `sqliosim` or in
//! `FAULTFS_BIN`.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(20);

/// Why FUSE cannot be used here, if it cannot.
pub fn unavailable() -> Option<String> {
    if let Err(e) = OpenOptions::new().read(true).write(true).open("/dev/fuse") {
        return Some(format!("cannot open /dev/fuse ({e})"));
    }
    let root = rustix::process::geteuid().is_root();
    let fusermount = Command::new("fusermount3")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    (!root && !fusermount).then(|| "not root, and fusermount3 is not installed".to_string())
}

/// The faultfs binary: `FAULTFS_BIN`, or `faultfs` beside this executable (or one level up).
pub fn find_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("FAULTFS_BIN") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("FAULTFS_BIN={} is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find sqliosim itself: {e}"))?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("faultfs"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "the faultfs binary was not found beside {} (build it with `cargo build --release -p faultfs`, or set FAULTFS_BIN)",
                exe.display()
            )
        })
}

/// A mounted faultfs; unmounted when dropped, if the mount at its directory is still the one
/// it made.
pub struct Daemon {
    child: Child,
    mnt: PathBuf,
    /// The mount's id in /proc/self/mountinfo.
    id: u64,
}

impl Daemon {
    /// Mounts `backing` at `mnt` (a directory this process created) and waits for the mount
    /// to appear: a new FUSE mount at `mnt`, on top of whatever was there.
    pub fn mount(bin: &Path, backing: &Path, mnt: &Path) -> Result<Daemon, String> {
        let before = top_mount(mnt).map(|m| m.0);
        let mut child = Command::new(bin)
            .arg(backing)
            .arg(mnt)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let deadline = Instant::now() + WAIT;
        loop {
            match top_mount(mnt) {
                Some((id, fuse)) if fuse && Some(id) != before => {
                    let mnt = mnt.to_path_buf();
                    return Ok(Daemon { child, mnt, id });
                }
                _ => {}
            }
            let failed = match child.try_wait() {
                Ok(Some(status)) => Some(format!("faultfs exited before mounting ({status})")),
                _ if Instant::now() > deadline => Some(format!(
                    "no faultfs mount at {} after {WAIT:?}",
                    mnt.display()
                )),
                _ => None,
            };
            if let Some(why) = failed {
                // Nothing was mounted by us, so nothing is unmounted: only the daemon goes.
                let _ = child.kill();
                let _ = child.wait();
                return Err(why);
            }
            sleep(POLL);
        }
    }

    /// Sends one control line and returns the reply.
    pub fn command(&self, line: &str) -> Result<String, String> {
        let path = self.mnt.join(".faultfs-control");
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        f.write_all(format!("{line}\n").as_bytes())
            .map_err(|e| format!("faultfs rejected {line:?}: {e}"))?;
        let mut reply = String::new();
        f.read_to_string(&mut reply)
            .map_err(|e| format!("cannot read the faultfs reply: {e}"))?;
        Ok(reply)
    }

    /// Arms a fault; returns its id.
    pub fn inject(&self, spec: &str) -> Result<u64, String> {
        let reply = self.command(&format!("inject {spec}"))?;
        field(&reply, "id").ok_or_else(|| format!("faultfs said {reply:?} to inject {spec}"))
    }

    /// How many times fault `id` fired.
    pub fn fired(&self, id: u64) -> u64 {
        let status = self.command("status").unwrap_or_default();
        status
            .lines()
            .find(|l| field(l, "id") == Some(id))
            .and_then(|l| field(l, "fired"))
            .unwrap_or(0)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // Only the mount this daemon made, and only while it is the top one at its directory:
        // never another filesystem that a changed name would lead the unmount to.
        let ours = || top_mount(&self.mnt).is_some_and(|(id, _)| id == self.id);
        for (cmd, args) in [("fusermount3", ["-u"]), ("umount", ["-l"])] {
            if !ours() {
                break;
            }
            let _ = Command::new(cmd)
                .args(args)
                .arg(&self.mnt)
                .stderr(Stdio::null())
                .status();
        }
        let deadline = Instant::now() + WAIT;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The number after `key=` in a faultfs reply or status line.
fn field(text: &str, key: &str) -> Option<u64> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// The top mount at `mnt` in /proc/self/mountinfo: its id, and whether it is a FUSE mount.
fn top_mount(mnt: &Path) -> Option<(u64, bool)> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = escaped(mnt);
    // A later line is a mount made later: the last one at `mnt` is the one on top.
    info.lines()
        .rev()
        .filter(|l| l.split(' ').nth(4) == Some(want.as_str()))
        .find_map(|l| {
            let id = l.split(' ').next()?.parse().ok()?;
            let fstype = l.split(" - ").nth(1)?.split(' ').next()?;
            Some((id, fstype == "fuse" || fstype.starts_with("fuse.")))
        })
}

/// `path` as mountinfo writes it: space, tab, newline and backslash as octal escapes.
fn escaped(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for &b in path.as_os_str().as_bytes() {
        match b {
            b' ' | b'\t' | b'\n' | b'\\' => out.extend(format!("\\{b:03o}").bytes()),
            _ => out.push(b),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
