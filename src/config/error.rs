//! The configuration's error and warning types: what went wrong, where (file, line, key), the
//! value given and what is allowed. Nothing in `config` prints; callers decide what to show.

use std::fmt;
use std::path::PathBuf;

/// A configuration or command-line problem that stops the run before anything is tested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file could not be read.
    #[error("cannot read the configuration file {}: {message}", path.display())]
    Read {
        /// The file that was asked for.
        path: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// A key's value is malformed or out of range (boxed: it is the largest variant).
    #[error("{}:{}: [{}] {}={}: {}", .0.file, .0.line, .0.section, .0.key, .0.value, .0.allowed)]
    BadValue(Box<BadValue>),
    /// A Min/Max pair where the minimum exceeds the maximum.
    #[error(
        "{file}:{line}: [{section}] {min_key}={min} is greater than {max_key}={max}: \
         the minimum must not exceed the maximum"
    )]
    MinAboveMax {
        /// Configuration file name as shown to the user.
        file: String,
        /// Line of the later of the two keys (or of the section when both are defaults).
        line: usize,
        /// Section holding the pair.
        section: String,
        /// Name of the minimum key.
        min_key: &'static str,
        /// Value of the minimum.
        min: u64,
        /// Name of the maximum key.
        max_key: &'static str,
        /// Value of the maximum.
        max: u64,
    },
    /// A rule about a whole section or the whole file (a missing key, a total, a missing file).
    #[error("{}", located(file, *line, message))]
    Rule {
        /// Configuration file name as shown to the user.
        file: String,
        /// Line of the section or key concerned (0 when the file as a whole is concerned).
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// A command-line value that is malformed or conflicts with the configuration.
    #[error("command line {option} {value}: {allowed}")]
    BadOption {
        /// The option as the user knows it, e.g. `--size`.
        option: String,
        /// The value given.
        value: String,
        /// What is allowed instead.
        allowed: String,
    },
}

/// The details of [`ConfigError::BadValue`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    /// Configuration file name as shown to the user.
    pub file: String,
    /// 1-based line number of the key.
    pub line: usize,
    /// Section the key belongs to.
    pub section: String,
    /// The key as written.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is allowed instead.
    pub allowed: String,
}

/// `file:line: message`, or `file: message` when the whole file is concerned (line 0).
fn located(file: &str, line: usize, message: &str) -> String {
    if line == 0 {
        format!("{file}: {message}")
    } else {
        format!("{file}:{line}: {message}")
    }
}

/// Something worth telling the user that does not stop the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Configuration file name as shown to the user, or "command line".
    pub file: String,
    /// 1-based line number, when the warning concerns one line.
    pub line: Option<usize>,
    /// The advice itself.
    pub message: String,
}

impl Warning {
    /// A warning about one line of a configuration file.
    pub fn at(file: &str, line: usize, message: impl Into<String>) -> Self {
        Warning {
            file: file.to_string(),
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}
