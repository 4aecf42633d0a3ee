//! The facts a run's evidence records about the machine: system information ([`sysinfo`]), the
//! block device under each file ([`blockdev`]), what carried the I/O ([`io_service`]), the
//! device LBA of a finding's page ([`lba`]), the kernel's messages of the run ([`kmsg`]), the
//! drives' health before and after ([`health`]) and the host as an RMA asks for it ([`host`]); the host tools they ask are
//! run bounded in time ([`tool`]).

pub mod blockdev;
pub mod health;
pub mod host;
pub mod io_service;
pub mod kmsg;
pub mod lba;
pub mod sysinfo;
pub mod tool;

use std::path::Path;

/// What is reported for a field that could not be read.
pub const UNKNOWN: &str = "unknown";

/// `v`, or [`UNKNOWN`] when it is missing or empty.
pub(crate) fn or_unknown(v: Option<String>) -> String {
    v.filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_string())
}

/// The trimmed text of a small file (sysfs, procfs), if it reads.
pub(crate) fn read_opt(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}
