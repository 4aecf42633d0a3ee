//! The record in a lock file: which process holds (or held) the set, on which host, since
//! when, running what; written by the run that takes the lock and read back to name it in a
//! refusal.

use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::LockError;

/// The record of the lock file `f` (at `path`): one line, read only so far.
pub(super) fn read_record(mut f: &File, path: &Path) -> Result<String, LockError> {
    // A record is one line; a lock file grown past the limit is read only that far.
    let limit = crate::io::safefile::Kind::LockRecord.limit();
    let mut text = String::new();
    f.rewind()
        .and_then(|_| f.take(limit).read_to_string(&mut text))
        .map_err(|source| LockError::Io {
            path: path.into(),
            what: "read",
            source,
        })?;
    Ok(text)
}

/// Writes this process's record in place: only ever called with the exclusive lock held.
pub(super) fn write_record(f: &File, path: &Path, command: &str) -> Result<(), LockError> {
    let io = |source| LockError::Io {
        path: path.into(),
        what: "write",
        source,
    };
    let text = format!(
        "pid={}\nhost={}\nsince_us={}\ncommand=sqliosim {command}\n",
        std::process::id(),
        host(),
        crate::page::layout::now_us()
    );
    f.write_all_at(text.as_bytes(), 0).map_err(io)?;
    f.set_len(text.len() as u64).map_err(io)
}

fn host() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// What a lock file says about the process that holds (or held) it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Holder {
    pid: u32,
    host: String,
    since_us: u64,
    command: String,
}

impl Holder {
    /// The holder a record names, when it is whole.
    pub(super) fn parse(text: &str) -> Option<Holder> {
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
                .map(str::trim)
        };
        Some(Holder {
            pid: field("pid")?.parse().ok()?,
            host: field("host")?.to_string(),
            since_us: field("since_us")?.parse().ok()?,
            command: field("command").unwrap_or("sqliosim").to_string(),
        })
    }

    /// "`COMMAND`, PID N on host H, since T".
    pub(super) fn describe(&self) -> String {
        format!(
            "`{}`, PID {} on host {}, since {}",
            self.command,
            self.pid,
            self.host,
            crate::report::sinks::clock::iso_utc(self.since_us)
        )
    }

    /// What to add when the holder ran on another host (else nothing).
    /// True when the process named ran on this host and is gone (a PID taken again since
    /// reads as running: the lock is then refused as held).
    pub(super) fn ended(&self) -> bool {
        let Some(pid) = i32::try_from(self.pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        self.host == host()
            && rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
    }

    pub(super) fn other_host_warning(&self) -> String {
        if self.host == host() {
            String::new()
        } else {
            "; it ran on another host: if it still runs there, this filesystem does not share locks between hosts — stop one of them".into()
        }
    }
}
