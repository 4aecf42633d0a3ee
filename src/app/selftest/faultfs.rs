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

/// A mounted faultfs; unmounted when dropped.
pub struct Daemon {
    child: Child,
    mnt: PathBuf,
}

impl Daemon {
    /// Mounts `backing` at `mnt` and waits for the mount to appear.
    pub fn mount(bin: &Path, backing: &Path, mnt: &Path) -> Result<Daemon, String> {
        let child = Command::new(bin)
            .arg(backing)
            .arg(mnt)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let mut d = Daemon {
            child,
            mnt: mnt.to_path_buf(),
        };
        let deadline = Instant::now() + WAIT;
        while !is_mounted(mnt) {
            if let Ok(Some(status)) = d.child.try_wait() {
                return Err(format!("faultfs exited before mounting ({status})"));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "no faultfs mount at {} after {WAIT:?}",
                    mnt.display()
                ));
            }
            sleep(POLL);
        }
        Ok(d)
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
        for (cmd, args) in [("fusermount3", ["-u"]), ("umount", ["-l"])] {
            let ok = Command::new(cmd)
                .args(args)
                .arg(&self.mnt)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                break;
            }
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

/// True when `mnt` is a mount point (listed in /proc/self/mountinfo).
fn is_mounted(mnt: &Path) -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    let want = mnt.to_string_lossy();
    info.lines()
        .any(|l| l.split(' ').nth(4) == Some(want.as_ref()))
}
