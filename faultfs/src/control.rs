//! The control file `MOUNTPOINT/.faultfs-control`: commands in, replies and status out.
//!
//! Each open of the control file is a small conversation. Every complete line
//! written is one command (see spec.rs); its reply (`ok …` or `err …`) is queued
//! for reading on the same handle, and a bad command also fails the write with
//! EINVAL so `echo … > .faultfs-control` reports it. A handle that wrote nothing
//! reads the status. Offsets are ignored: the file is a stream.

use fuser::Errno;
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use crate::fs::{lock, FaultFs};
use crate::spec::{parse_command, Command};

/// Name of the control file in the mount root.
pub const CONTROL_NAME: &str = ".faultfs-control";
/// Inode number of the control file.
pub const CONTROL_INO: u64 = 2;

/// Per-open state of the control file.
#[derive(Default)]
pub struct ControlHandle {
    /// Bytes written after the last newline, run as a command at flush.
    pending: String,
    /// Reply bytes not yet read.
    out: Vec<u8>,
    /// Whether anything was written or read, so a fresh handle reads the status.
    used: bool,
}

impl ControlHandle {
    /// Runs every complete line in `data`; EINVAL if any command failed.
    pub fn write(&mut self, fs: &FaultFs, data: &[u8]) -> Result<(), Errno> {
        self.used = true;
        self.pending.push_str(&String::from_utf8_lossy(data));
        let mut ok = true;
        while let Some(nl) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=nl).collect();
            ok &= self.run_line(fs, &line);
        }
        if ok {
            Ok(())
        } else {
            Err(Errno::EINVAL)
        }
    }

    /// Runs a last command written without a newline.
    pub fn flush(&mut self, fs: &FaultFs) -> Result<(), Errno> {
        let line = std::mem::take(&mut self.pending);
        if self.run_line(fs, &line) {
            Ok(())
        } else {
            Err(Errno::EINVAL)
        }
    }

    /// Returns up to `size` reply bytes; a handle that wrote nothing gets the status.
    pub fn read(&mut self, fs: &FaultFs, size: usize) -> Vec<u8> {
        if !self.used {
            self.used = true;
            self.out = status(fs).into_bytes();
        }
        let n = size.min(self.out.len());
        self.out.drain(..n).collect()
    }

    fn run_line(&mut self, fs: &FaultFs, line: &str) -> bool {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            return true;
        }
        let (reply, ok) = match execute(fs, line) {
            Ok(reply) => (reply, true),
            Err(msg) => (format!("err {msg}\n"), false),
        };
        if fs.verbose || !ok {
            eprint!("faultfs: {} -> {reply}", line.trim());
        }
        self.out.extend_from_slice(reply.as_bytes());
        ok
    }
}

/// Runs one command line and returns its reply, or the reason it failed.
pub fn execute(fs: &FaultFs, line: &str) -> Result<String, String> {
    let cmd = parse_command(line).map_err(|e| e.to_string())?;
    match cmd {
        Command::Inject(spec) => {
            let (id, now) = lock(&fs.faults).arm(spec).map_err(|e| e.to_string())?;
            let Some((file, byte, bit)) = now else {
                return Ok(format!("ok id={id}\n"));
            };
            if let Err(e) = flip_at_rest(fs, &file, byte, bit) {
                lock(&fs.faults).clear(Some(id));
                return Err(format!("flip {file}@{byte}: {e}"));
            }
            Ok(format!("ok id={id} byte={byte} bit={bit}\n"))
        }
        Command::Clear(id) => Ok(format!("ok cleared={}\n", lock(&fs.faults).clear(id))),
        Command::Seed(seed) => {
            lock(&fs.faults).set_seed(seed);
            Ok(format!("ok seed={seed}\n"))
        }
        Command::Status => Ok(status(fs)),
        Command::Cache(cmd) => crate::cache::execute(fs, cmd),
    }
}

/// The status text: the fault table, the request counts, then the cache line once the cache
/// was used.
pub fn status(fs: &FaultFs) -> String {
    let mut text = lock(&fs.faults).status();
    text.push_str(&fs.requests.status());
    let c = lock(&fs.cache);
    if c.in_use() {
        text.push_str(&c.status());
    }
    text
}

/// Flips bit `bit` of byte `byte` in the backing file of `name`, as bit rot would.
fn flip_at_rest(fs: &FaultFs, name: &str, byte: u64, bit: u8) -> std::io::Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(fs.backing_path(name))?;
    let mut b = [0u8; 1];
    file.read_exact_at(&mut b, byte)?;
    b[0] ^= 1 << bit;
    file.write_all_at(&b, byte)?;
    // The corruption is meant to be "at rest": make it reach the disk like old data.
    file.sync_data()
}
