//! The engine: expected-state oracle, read retry and triage, buffer pool, data files and the
//! write-ahead log.

pub mod backup;
pub mod ceiling;
pub mod files;
pub mod journal;
pub mod logblock;
pub mod logforward;
pub mod logio;
pub mod logpack;
pub mod logscan;
pub mod logwrites;
pub mod manifest;
pub mod oracle;
pub mod pool;
pub mod retry;
pub mod setup;
pub mod snapshot;
pub mod tear;
pub mod wal;
