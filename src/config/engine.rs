//! `--engine`: what carries a run's disk I/O, by the name the user types.

/// How `sqliosim run` carries its disk I/O (`--engine`): through the I/O service
/// ([`crate::io::IoService`]) on an io_uring, kernel AIO or psync [`crate::io::aio::Ring`], or
/// with no
/// service at all (`sync`). The user-facing word stays "engine".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoServiceKind {
    /// One I/O service on an io_uring ring shared by every thread, MaxOutstandingIO deep
    /// (psync when io_uring is refused).
    #[default]
    Uring,
    /// The same service on a psync ring (pread/pwrite helper threads).
    Psync,
    /// The same service on a kernel AIO ring (`io_submit`/`io_getevents`, as SQL Server on
    /// Linux submits; asynchronous on O_DIRECT files only). Named `libaio`, as fio names it.
    #[serde(rename = "libaio")]
    Kaio,
    /// Each thread's own pread/pwrite; MaxOutstandingIO held by a gate.
    Sync,
}

impl IoServiceKind {
    /// Every name, as typed on the command line.
    pub const NAMES: [&'static str; 4] = ["uring", "psync", "libaio", "sync"];

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<IoServiceKind> {
        match name {
            "uring" | "io_uring" => Some(IoServiceKind::Uring),
            "psync" => Some(IoServiceKind::Psync),
            "libaio" | "aio" | "kaio" => Some(IoServiceKind::Kaio),
            "sync" => Some(IoServiceKind::Sync),
            _ => None,
        }
    }

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            IoServiceKind::Uring => "uring",
            IoServiceKind::Psync => "psync",
            IoServiceKind::Kaio => "libaio",
            IoServiceKind::Sync => "sync",
        }
    }
}
