//! The engine: expected-state oracle, read retry and triage, and (later) the buffer pool, data
//! and log files.

pub mod oracle;
pub mod retry;
