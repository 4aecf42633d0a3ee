//! A file set at rest, checked: what `sqliosim verify` and `run --resume` share — the scans of
//! data and log files against the expected state ([`scan`]), which files a verify checks
//! ([`scope`]), and what the journal holds the device to and what its damage means
//! ([`journal_verdict`]).

pub mod journal_verdict;
pub mod scan;
pub mod scope;
