//! The kinds of I/O operation that are counted separately.

use serde::{Deserialize, Serialize};

/// One kind of I/O operation, as SQLIOSim counts them in its summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A single-buffer read (`pread`).
    Read,
    /// A single-buffer write (`pwrite`).
    Write,
    /// A multi-buffer read (`preadv`), SQLIOSim's ReadFileScatter.
    ScatterRead,
    /// A multi-buffer write (`pwritev`), SQLIOSim's WriteFileGather.
    GatherWrite,
    /// A flush (`fsync` / `fdatasync`).
    Sync,
}

impl OpKind {
    /// All kinds, in index order.
    pub const ALL: [OpKind; 5] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::ScatterRead,
        OpKind::GatherWrite,
        OpKind::Sync,
    ];

    /// Number of kinds.
    pub const COUNT: usize = 5;

    /// Dense index, for arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for the kinds that read data.
    pub fn is_read(self) -> bool {
        matches!(self, OpKind::Read | OpKind::ScatterRead)
    }

    /// True for the kinds that write data.
    pub fn is_write(self) -> bool {
        matches!(self, OpKind::Write | OpKind::GatherWrite)
    }

    /// Stable snake_case name for JSON and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::ScatterRead => "scatter_read",
            OpKind::GatherWrite => "gather_write",
            OpKind::Sync => "sync",
        }
    }
}
