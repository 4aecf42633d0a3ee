//! Errors of the capacity-run modes. Each names the file, switch or value at fault. They are
//! typed all the way up to `app`, which maps them onto exit codes (a panicked worker is an
//! internal failure, exit 3; everything else is usage or environment, exit 2).

use super::units::BadArg;
use crate::io::aio::RingError;
use crate::io::safefile::SafeFileError;
use std::path::PathBuf;
use thiserror::Error;

/// Anything that stops a capacity run before or while it measures.
#[derive(Debug, Error)]
pub enum BenchError {
    /// A switch value that does not parse.
    #[error(transparent)]
    Value(#[from] BadArg),
    /// A combination of switches that cannot work.
    #[error("{0}")]
    Usage(String),
    /// An OS call on a test file failed.
    #[error("{op} {path}: {cause}")]
    Io {
        /// What was attempted ("open", "fill", …).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: std::io::Error,
    },
    /// The file exists, has data, and was not created by `sqliosim bench`.
    #[error(
        "{path} exists and was not created by sqliosim bench (no SQLIOSIM-BENCH header); \
         pass --force to overwrite it"
    )]
    NotOurs {
        /// The file.
        path: PathBuf,
    },
    /// A block device without our header, and the run would write to it or check stamps.
    #[error(
        "{path} is a block device without a SQLIOSIM-BENCH header; {}",
        if *verify {
            "--verify needs a device prepared by sqliosim bench: run once with --force (which \
             overwrites the device) or drop --verify"
        } else {
            "writing would destroy its contents: pass --force to overwrite it, or run \
             --rw read, which reads it without writing"
        }
    )]
    DeviceNotOurs {
        /// The device.
        path: PathBuf,
        /// The refusal is for `--verify` (otherwise for writing).
        verify: bool,
    },
    /// A block device in use (mounted, swap, part of a stack, claimed): never written, even
    /// with `--force`, which is for idle devices.
    #[error(
        "{path} is in use: {what}. sqliosim bench never writes a device in use, even with \
         --force (which only overwrites an idle device): unmount it (swapoff it, or take it out \
         of its md/dm/LVM stack) first, or run --rw read without --verify, which only reads it"
    )]
    DeviceInUse {
        /// The device.
        path: PathBuf,
        /// What uses it.
        what: super::inuse::DeviceUse,
    },
    /// A device a run may write, named through a symlink (perhaps planted by another user).
    #[error(
        "{link} is a symlink to the block device {device}: sqliosim writes a device only when \
         named by its own node, with --force or without (a link in a shared directory may be \
         another user's); nothing written. Give {device} itself, or remove the link"
    )]
    DeviceThroughLink {
        /// The name given.
        link: PathBuf,
        /// The device it leads to.
        device: PathBuf,
    },
    /// A target that does not exist, where a new file would be created among the device nodes.
    #[error(
        "{path} does not exist, and sqliosim never creates files under /dev: check the device \
         name (lsblk lists them), or give a path on a mounted filesystem"
    )]
    NoSuchDevice {
        /// The path given.
        path: PathBuf,
    },
    /// `--verify` on a target an earlier run wrote without stamps.
    #[error(
        "{path}: an earlier run wrote blocks without stamps (--data zeros, or blocks or offsets \
         that are not multiples of 4 KiB), so --verify would report them; pass --force to fill \
         it again with stamped data, or drop --verify"
    )]
    StampsBroken {
        /// The file or device.
        path: PathBuf,
    },
    /// Ctrl-C arrived while the test file was being filled.
    #[error(
        "filling {path} was interrupted at {} MiB; the next run carries on from there",
        done >> 20
    )]
    FillInterrupted {
        /// The file.
        path: PathBuf,
        /// Bytes of the file written so far.
        done: u64,
    },
    /// The ring failed.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// The platform refused a request (EINVAL, EOPNOTSUPP…), or the device, mount or space
    /// went away while measuring: an environment error, not a failed I/O of the device.
    #[error("{0}")]
    Refused(String),
    /// The system would not start a worker thread (`ulimit -u`, memory): an environment error.
    #[error("cannot start bench worker thread {thread}: {cause}; raise the limit on processes and threads (ulimit -u) or on memory (ulimit -v), or use fewer threads (-t)")]
    NoThread {
        /// Which worker.
        thread: usize,
        /// The OS error.
        cause: std::io::Error,
    },
    /// A worker thread panicked: an internal failure (exit code 3), which `app` marks so.
    #[error("worker thread {0} panicked")]
    WorkerPanicked(usize),
    /// Writing the report to stdout or stderr failed (a stdout whose reader has gone is told
    /// apart by `exit`, from the `std::io::Error` this carries).
    #[error(transparent)]
    Output(#[from] std::io::Error),
    /// An output file (`--json`, `--csv`, `--html`) that may not be replaced (a planted link).
    #[error(transparent)]
    OutputFile(#[from] SafeFileError),
    /// An output file could not be written.
    #[error("writing {}", path.display())]
    Writing {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: SafeFileError,
    },
    /// The HTML report's charts could not be drawn.
    #[error("drawing {}: {cause}", path.display())]
    Drawing {
        /// The HTML file.
        path: PathBuf,
        /// What the chart library said.
        cause: String,
    },
}

impl BenchError {
    /// Wraps an OS error on `path`.
    pub fn io(op: &'static str, path: &std::path::Path, cause: std::io::Error) -> BenchError {
        BenchError::Io {
            op,
            path: path.to_path_buf(),
            cause,
        }
    }
}
