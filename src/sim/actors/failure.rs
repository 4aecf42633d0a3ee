//! A failed request that is not the device's fault: told apart from findings here, before any
//! evidence is gathered.
//!
//! [`crate::io::oserr::classify`] decides. A device error goes on to become a finding as
//! before. A request the platform refused because of how it was made, or a device or mount
//! that went away, stops the run once, with one message that names the file, the request and
//! what to do; the exit status says so at the end (2, or 3 for a bug of the tool). Out of
//! space (or quota) on a read or write stops the run the same way: the pages it cannot write
//! cannot be tested, and a sparse file larger than its filesystem otherwise met ENOSPC on
//! every request of the initial update, for ever. A file that cannot grow only stops growing
//! (a warning, `actors::shrink`), as SQL Server's failed autogrow does.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::Mutex;

use super::context::Run;
use crate::findings::Severity;
use crate::io::oserr::{self, ErrorClass};
use crate::sim::control::stop::StopReason;

/// Why a run stopped because of its environment (or of the tool itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvStop {
    /// What happened and what to do, in full.
    pub text: String,
    /// True when the tool itself is at fault (exit code 3 rather than 2).
    pub internal: bool,
}

/// Errors met while working that are not integrity findings.
#[derive(Debug, Default)]
pub struct EnvErrors {
    stop: Mutex<Option<EnvStop>>,
    no_space_warned: Mutex<HashSet<(usize, &'static str)>>,
    no_space: AtomicU64,
    /// ERROR messages of the run (an actor that could not do its work: a name it may not
    /// use, a stream it could not write), and the first one's text.
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
}

impl EnvErrors {
    /// The error that stopped the run, if one did.
    pub fn stop(&self) -> Option<EnvStop> {
        self.stop.lock().clone()
    }

    /// Requests that failed for lack of space (or quota).
    pub fn no_space(&self) -> u64 {
        self.no_space.load(Ordering::Acquire)
    }

    /// Counts an out-of-space failure; true the first time for this file and kind of request.
    pub fn note_no_space(&self, file: usize, what: &'static str) -> bool {
        self.no_space.fetch_add(1, Ordering::AcqRel);
        self.no_space_warned.lock().insert((file, what))
    }

    /// Counts an ERROR message of the run (keeping the first one's text).
    pub fn note_error(&self, text: &str) {
        if self.errors.fetch_add(1, Ordering::AcqRel) == 0 {
            *self.first_error.lock() = Some(text.to_string());
        }
    }

    /// What the run's outcome says of its errors: the stop, if one stopped it; else, when an
    /// actor met errors (it stopped, or skipped its work), those, as an environment error, so
    /// that a run that met any error never ends CLEAN (issue #35 §6).
    pub fn outcome(&self) -> Option<EnvStop> {
        self.stop().or_else(|| {
            let n = self.errors.load(Ordering::Acquire);
            let first = self.first_error.lock().clone()?;
            Some(EnvStop {
                text: format!(
                    "{n} error(s) kept part of the run from being done, so it is not a clean pass (first: {first}); see the error log"
                ),
                internal: false,
            })
        })
    }

    /// Keeps the first stop; true when this one is the first.
    fn set_stop(&self, stop: EnvStop) -> bool {
        let mut s = self.stop.lock();
        if s.is_some() {
            return false;
        }
        *s = Some(stop);
        true
    }
}

/// One failed request, as the caller knows it.
#[derive(Debug, Clone, Copy)]
pub struct Failed<'a> {
    /// File index.
    pub file: usize,
    /// What was asked: "read", "write", "log write", "grow", …
    pub what: &'static str,
    /// Byte offset, when the request had one.
    pub offset: Option<u64>,
    /// Bytes asked for (0 when unknown).
    pub len: u64,
    /// The error.
    pub error: &'a std::io::Error,
}

/// Handles `f` unless it is the device's fault; returns true when it was handled (the caller
/// must not report a finding), false when it is a device error (the caller reports it).
pub fn handled(run: &Run<'_>, f: &Failed<'_>) -> bool {
    match oserr::classify(f.error) {
        ErrorClass::Device => false,
        ErrorClass::NoSpace if f.what == "grow" => {
            no_space(run, f);
            true
        }
        ErrorClass::NoSpace => {
            run.reporting.env.note_no_space(f.file, f.what);
            let text = full_text(&run.files[f.file].path, f);
            stop(
                run,
                EnvStop {
                    text,
                    internal: false,
                },
            );
            true
        }
        ErrorClass::Gone => {
            let text = gone_text(&run.files[f.file].path, f);
            stop(
                run,
                EnvStop {
                    text,
                    internal: false,
                },
            );
            true
        }
        class => {
            let text = refused_text(run, f);
            let internal = class == ErrorClass::ToolBug;
            stop(run, EnvStop { text, internal });
            true
        }
    }
}

/// Handles an errno from a read verdict (see [`handled`]).
pub fn handled_errno(run: &Run<'_>, file: usize, offset: u64, len: u64, errno: i32) -> bool {
    let error = std::io::Error::from_raw_os_error(errno);
    let f = Failed {
        file,
        what: "read",
        offset: Some(offset),
        len,
        error: &error,
    };
    handled(run, &f)
}

/// Stops the run for `s`, saying so once.
pub fn stop(run: &Run<'_>, s: EnvStop) {
    if run.reporting.env.set_stop(s.clone()) {
        run.message(Severity::Error, "System", "Environment", s.text);
    }
    run.controls.stop.stop_run(StopReason::Environment);
}

fn request(f: &Failed<'_>) -> String {
    match (f.offset, f.len) {
        (Some(off), len) if len > 0 => {
            format!("{} of {len} bytes at offset {off} (0x{off:X})", f.what)
        }
        (Some(off), _) => format!("{} at offset {off} (0x{off:X})", f.what),
        (None, _) => f.what.to_string(),
    }
}

fn no_space(run: &Run<'_>, f: &Failed<'_>) {
    if !run.reporting.env.note_no_space(f.file, f.what) {
        return;
    }
    let text = format!(
        "{}: no space left for a {}: {}. Out of space is a condition, not corruption: the pages of a failed write are not checked until they are written again; further out-of-space failures of this file are only counted",
        run.files[f.file].path.display(),
        request(f),
        f.error
    );
    run.message(Severity::Warning, "System", "Environment", text);
}

fn full_text(path: &Path, f: &Failed<'_>) -> String {
    format!(
        "{}: no space left for a {}: {}. This is not an integrity finding, but pages that cannot be written cannot be tested: the run stops here. Free space on that filesystem (or raise the quota), or lower InitialSize and MaxSize so the files fit (a sparse file can be larger than the space left)",
        path.display(),
        request(f),
        f.error
    )
}

fn gone_text(path: &Path, f: &Failed<'_>) -> String {
    format!(
        "the device or mount holding {} went away (or became read-only): a {} failed with {}. This is not an integrity finding; the run stops here. Check the device and the mount (dmesg, mount), then run again",
        path.display(),
        request(f),
        f.error
    )
}

fn refused_text(run: &Run<'_>, f: &Failed<'_>) -> String {
    let path = &run.files[f.file].path;
    let errno = f.error.raw_os_error();
    if errno == Some(libc::ENOMEM) {
        return format!(
            "{}: cannot get the memory for a {}: {}. The memory limit (ulimit -v, or the memory cgroup) or the machine's memory is too small for this run: not an integrity finding. What to do: raise the limit, or lower MaxMemoryMB, the user counts or MaxOutstandingIO",
            path.display(),
            request(f),
            f.error,
        );
    }
    format!(
        "{}: the platform refused a {}: {}. This is about how the request was made, not what the device did: not an integrity finding. {}. What to do: {}",
        path.display(),
        request(f),
        f.error,
        alignment(run, path),
        oserr::advice(errno)
    )
}

/// The direct-I/O alignment in force for `path`, in words.
fn alignment(run: &Run<'_>, path: &Path) -> String {
    if !run.plan.direct {
        return "The file is opened for buffered I/O (NoBuffering=FALSE), so no direct-I/O alignment applies".into();
    }
    let info = crate::io::direct::direct_io_info(path);
    match (info.mem_align, info.offset_align) {
        (Some(m), Some(o)) => format!(
            "Direct I/O on {}: offset and length must be multiples of {o} bytes, buffers aligned to {m} bytes (statx DIOALIGN); sqliosim uses 4096-aligned buffers and 8192-byte pages",
            info.filesystem
        ),
        _ => format!(
            "Direct I/O on {}: the kernel reports no direct-I/O alignment (statx DIOALIGN)",
            info.filesystem
        ),
    }
}
