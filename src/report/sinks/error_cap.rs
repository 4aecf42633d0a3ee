//! The error cap: past it, errors are counted but neither logged in full nor dumped.

use std::collections::BTreeMap;

/// What to do with one more error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Log and dump it.
    Yes,
    /// Suppress it; it is the first one suppressed (say so once).
    FirstSuppressed,
    /// Suppress it.
    Suppressed,
}

/// Counts errors against a cap (vdbench's default is 50).
#[derive(Debug, Clone)]
pub struct ErrorCap {
    cap: u64,
    admitted: u64,
    suppressed: BTreeMap<String, u64>,
}

/// The default cap.
pub const DEFAULT_ERROR_CAP: u64 = 50;

impl ErrorCap {
    /// A cap of `cap` errors (0: nothing is logged in full).
    pub fn new(cap: u64) -> ErrorCap {
        ErrorCap {
            cap,
            admitted: 0,
            suppressed: BTreeMap::new(),
        }
    }

    /// Decides about one more error of class `class`.
    pub fn admit(&mut self, class: &str) -> Admit {
        if self.admitted < self.cap {
            self.admitted += 1;
            return Admit::Yes;
        }
        let first = self.suppressed.is_empty();
        *self.suppressed.entry(class.to_string()).or_default() += 1;
        if first {
            Admit::FirstSuppressed
        } else {
            Admit::Suppressed
        }
    }

    /// The cap.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Errors logged in full.
    pub fn admitted(&self) -> u64 {
        self.admitted
    }

    /// Errors suppressed, by class.
    pub fn suppressed(&self) -> &BTreeMap<String, u64> {
        &self.suppressed
    }

    /// Total suppressed.
    pub fn suppressed_total(&self) -> u64 {
        self.suppressed.values().sum()
    }
}
