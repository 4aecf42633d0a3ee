//! Text of control commands and `--fault` specs → typed values. Pure: no I/O.
//!
//! One line is one command: `inject KIND key=value…`, `clear [ID]`, `seed N`,
//! `status`, or a cache command (`cache`, `lie`, `lied`, `power-cut`: cache/command.rs). The grammar is documented in faultfs/README.md; parsing keeps the
//! whole vocabulary here so the control file and the command line agree.

use thiserror::Error;

/// Size of a sqliosim page; `page=P` means bytes `P*8192 .. (P+1)*8192`.
pub const PAGE_SIZE: u64 = 8192;

/// A command line could not be understood.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    /// The first word is not a known command.
    #[error("unknown command {0:?} (expected inject, clear, seed, status, cache, lie, lied or power-cut)")]
    UnknownCommand(String),
    /// The fault kind after `inject` is not known.
    #[error("unknown fault kind {0:?}")]
    UnknownKind(String),
    /// A word is not of the form key=value, or the key is not known.
    #[error("bad parameter {0:?}")]
    BadParam(String),
    /// A value does not parse as the number it must be.
    #[error("bad value for {key}: {value:?}")]
    BadValue {
        /// The parameter name.
        key: String,
        /// The text given.
        value: String,
    },
    /// A parameter the kind needs is missing.
    #[error("{kind} needs {param}")]
    Missing {
        /// The fault kind.
        kind: &'static str,
        /// The missing parameter.
        param: &'static str,
    },
}

/// What a fault does when it fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Acknowledge the write, store nothing.
    Lost,
    /// Store only the first `keep` bytes of the write.
    Torn {
        /// Bytes of the write that reach the backing file.
        keep: u64,
    },
    /// Store the write at `offset + shift`, in `to` if given, else in the same file.
    Misdirect {
        /// Signed byte distance from the intended offset.
        shift: i64,
        /// Another file of the mount to write into.
        to: Option<String>,
    },
    /// Flip one bit in the backing file at once (bit rot at rest).
    FlipNow {
        /// Absolute byte offset; chosen from the range with the seed when absent.
        byte: Option<u64>,
        /// Bit 0..7; chosen with the seed when absent.
        bit: Option<u8>,
    },
    /// Flip one bit in the data returned by reads covering that byte.
    FlipRead {
        /// Absolute byte offset; chosen from the range with the seed when absent.
        byte: Option<u64>,
        /// Bit 0..7; chosen with the seed when absent.
        bit: Option<u8>,
    },
    /// Return the content the range had before its last write, once per firing.
    Stale,
    /// Fail reads with `errno` (EIO unless `errno=N` says otherwise).
    EioRead {
        /// The error returned.
        errno: i32,
    },
    /// Fail writes with `errno` (EIO unless `errno=N` says otherwise), storing nothing.
    EioWrite {
        /// The error returned.
        errno: i32,
    },
    /// Sleep before serving reads.
    DelayRead {
        /// Milliseconds.
        ms: u64,
    },
    /// Sleep before serving writes.
    DelayWrite {
        /// Milliseconds.
        ms: u64,
    },
}

/// Every fault kind's name, as `inject KIND …` takes it (sqliosim's table of fault classes,
/// `io::faulty::classes`, is tested against this list).
pub const KIND_NAMES: &[&str] = &[
    "lost",
    "torn",
    "misdirect",
    "flip",
    "flip-read",
    "stale",
    "eio-read",
    "eio-write",
    "delay-read",
    "delay-write",
];

impl Kind {
    /// The name used in commands and status lines.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Lost => "lost",
            Kind::Torn { .. } => "torn",
            Kind::Misdirect { .. } => "misdirect",
            Kind::FlipNow { .. } => "flip",
            Kind::FlipRead { .. } => "flip-read",
            Kind::Stale => "stale",
            Kind::EioRead { .. } => "eio-read",
            Kind::EioWrite { .. } => "eio-write",
            Kind::DelayRead { .. } => "delay-read",
            Kind::DelayWrite { .. } => "delay-write",
        }
    }

    /// Whether the fault acts on reads (else on writes, or at once for `flip`).
    pub fn on_read(&self) -> bool {
        matches!(
            self,
            Kind::FlipRead { .. } | Kind::Stale | Kind::EioRead { .. } | Kind::DelayRead { .. }
        )
    }
}

/// One fault as asked for: what, where, and when it fires.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    /// What the fault does.
    pub kind: Kind,
    /// File name inside the mount; `None` matches every file.
    pub file: Option<String>,
    /// First byte of the targeted range.
    pub off: u64,
    /// Length of the targeted range; `None` means to the end of the file.
    pub len: Option<u64>,
    /// How many matching operations fire it; `None` means every one.
    pub count: Option<u64>,
    /// Matching operations to let through before it may fire.
    pub skip: u64,
    /// Probability that a matching operation fires it (seeded).
    pub prob: f64,
}

/// A parsed control command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Arm a fault.
    Inject(FaultSpec),
    /// Remove one fault, or all when `None`.
    Clear(Option<u64>),
    /// Set the seed for faults armed from now on.
    Seed(u64),
    /// Report faults and counters.
    Status,
    /// A command of the volatile cache (`cache`, `lie`, `lied`, `power-cut`).
    Cache(crate::cache::CacheCommand),
}

/// Parses one control line.
pub fn parse_command(line: &str) -> Result<Command, SpecError> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    match word {
        "inject" => parse_fault(rest).map(Command::Inject),
        "clear" if rest.trim().is_empty() => Ok(Command::Clear(None)),
        "clear" => parse_u64("id", rest.trim()).map(|id| Command::Clear(Some(id))),
        "seed" => parse_u64("seed", rest.trim()).map(Command::Seed),
        "status" => Ok(Command::Status),
        other => match crate::cache::parse(other, rest) {
            Some(cmd) => cmd.map(Command::Cache),
            None => Err(SpecError::UnknownCommand(other.to_string())),
        },
    }
}

/// Parses a fault spec: `KIND key=value…` (the text after `inject`).
pub fn parse_fault(text: &str) -> Result<FaultSpec, SpecError> {
    let mut words = text.split_whitespace();
    let kind_word = words.next().unwrap_or("");
    let mut params = Params::default();
    for word in words {
        params.set(word)?;
    }
    let kind = build_kind(kind_word, &params)?;
    let unlimited_by_default = matches!(
        kind,
        Kind::FlipRead { .. } | Kind::DelayRead { .. } | Kind::DelayWrite { .. }
    );
    let count = match params.count {
        Some(c) => c,
        None if unlimited_by_default => None,
        None => Some(1),
    };
    let (off, len) = match params.page {
        Some(p) => (p * PAGE_SIZE, Some(PAGE_SIZE)),
        None => (params.off.unwrap_or(0), params.len),
    };
    Ok(FaultSpec {
        kind,
        file: params.file.filter(|f| f != "*"),
        off,
        len,
        count,
        skip: params.skip.unwrap_or(0),
        prob: params.prob.unwrap_or(1.0),
    })
}

/// The key=value words of a spec, each checked as it is read.
#[derive(Default)]
struct Params {
    file: Option<String>,
    page: Option<u64>,
    off: Option<u64>,
    len: Option<u64>,
    count: Option<Option<u64>>,
    skip: Option<u64>,
    prob: Option<f64>,
    keep: Option<u64>,
    shift: Option<i64>,
    to: Option<String>,
    byte: Option<u64>,
    bit: Option<u8>,
    ms: Option<u64>,
    errno: Option<i32>,
}

impl Params {
    fn set(&mut self, word: &str) -> Result<(), SpecError> {
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| SpecError::BadParam(word.to_string()))?;
        match key {
            "file" => self.file = Some(value.to_string()),
            "to" => self.to = Some(value.to_string()),
            "page" => self.page = Some(parse_u64(key, value)?),
            "off" => self.off = Some(parse_u64(key, value)?),
            "len" => self.len = Some(parse_u64(key, value)?),
            "count" if value == "always" => self.count = Some(None),
            "count" => self.count = Some(Some(parse_u64(key, value)?)),
            "skip" => self.skip = Some(parse_u64(key, value)?),
            "prob" => self.prob = Some(parse_prob(value)?),
            "keep" => self.keep = Some(parse_u64(key, value)?),
            "shift" => self.shift = Some(parse_i64(key, value)?),
            "byte" => self.byte = Some(parse_u64(key, value)?),
            "bit" => self.bit = Some(parse_bit(value)?),
            "ms" => self.ms = Some(parse_u64(key, value)?),
            "errno" => self.errno = Some(parse_errno(value)?),
            _ => return Err(SpecError::BadParam(word.to_string())),
        }
        Ok(())
    }
}

fn build_kind(word: &str, p: &Params) -> Result<Kind, SpecError> {
    let ms = |kind| {
        p.ms.ok_or(SpecError::Missing {
            kind,
            param: "ms=N",
        })
    };
    Ok(match word {
        "lost" => Kind::Lost,
        "torn" => Kind::Torn {
            keep: p.keep.unwrap_or(4096),
        },
        "misdirect" => Kind::Misdirect {
            shift: p.shift.unwrap_or(PAGE_SIZE as i64),
            to: p.to.clone(),
        },
        "flip" => Kind::FlipNow {
            byte: p.byte,
            bit: p.bit,
        },
        "flip-read" => Kind::FlipRead {
            byte: p.byte,
            bit: p.bit,
        },
        "stale" => Kind::Stale,
        "eio-read" => Kind::EioRead {
            errno: p.errno.unwrap_or(libc::EIO),
        },
        "eio-write" => Kind::EioWrite {
            errno: p.errno.unwrap_or(libc::EIO),
        },
        "delay-read" => Kind::DelayRead {
            ms: ms("delay-read")?,
        },
        "delay-write" => Kind::DelayWrite {
            ms: ms("delay-write")?,
        },
        other => return Err(SpecError::UnknownKind(other.to_string())),
    })
}

fn bad(key: &str, value: &str) -> SpecError {
    SpecError::BadValue {
        key: key.to_string(),
        value: value.to_string(),
    }
}

/// Decimal or `0x` hexadecimal.
fn parse_u64(key: &str, value: &str) -> Result<u64, SpecError> {
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    };
    parsed.map_err(|_| bad(key, value))
}

fn parse_i64(key: &str, value: &str) -> Result<i64, SpecError> {
    match value.strip_prefix('-') {
        Some(abs) => parse_u64(key, abs).map(|v| -(v as i64)),
        None => parse_u64(key, value.trim_start_matches('+')).map(|v| v as i64),
    }
}

fn parse_prob(value: &str) -> Result<f64, SpecError> {
    match value.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(bad("prob", value)),
    }
}

/// An errno for `eio-read`/`eio-write`: 1..=4095, as the kernel's error range.
fn parse_errno(value: &str) -> Result<i32, SpecError> {
    match value.parse::<i32>() {
        Ok(e) if (1..4096).contains(&e) => Ok(e),
        _ => Err(bad("errno", value)),
    }
}

fn parse_bit(value: &str) -> Result<u8, SpecError> {
    match value.parse::<u8>() {
        Ok(b) if b < 8 => Ok(b),
        _ => Err(bad("bit", value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `KIND_NAMES` is exactly the kinds `inject` accepts: each parses, and names itself back.
    #[test]
    fn kind_names_are_the_kinds_that_parse() {
        for name in KIND_NAMES {
            let spec = parse_fault(&format!("{name} ms=1")).expect(name);
            assert_eq!(spec.kind.name(), *name);
        }
        assert!(parse_fault("melt").is_err());
    }

    #[test]
    fn page_sets_range_and_defaults_fire_once() {
        let spec = parse_fault("lost file=a.mdf page=5").expect("parse");
        assert_eq!(spec.kind, Kind::Lost);
        assert_eq!(spec.file.as_deref(), Some("a.mdf"));
        assert_eq!((spec.off, spec.len), (5 * 8192, Some(8192)));
        assert_eq!(spec.count, Some(1));
    }

    #[test]
    fn delays_and_read_flips_fire_always_by_default() {
        let spec = parse_fault("delay-write ms=20").expect("parse");
        assert_eq!(spec.count, None);
        assert_eq!(spec.file, None);
        let spec = parse_fault("flip-read file=* byte=0x10 bit=3 count=2").expect("parse");
        assert_eq!(spec.count, Some(2));
        assert_eq!(
            spec.kind,
            Kind::FlipRead {
                byte: Some(16),
                bit: Some(3)
            }
        );
    }

    #[test]
    fn misdirect_shift_is_signed_and_defaults_to_a_page() {
        let spec = parse_fault("misdirect shift=-8192 to=b").expect("parse");
        let want = Kind::Misdirect {
            shift: -8192,
            to: Some("b".into()),
        };
        assert_eq!(spec.kind, want);
        let spec = parse_fault("misdirect").expect("parse");
        assert_eq!(
            spec.kind,
            Kind::Misdirect {
                shift: 8192,
                to: None
            }
        );
    }

    #[test]
    fn commands_parse_and_errors_name_the_problem() {
        assert_eq!(parse_command("clear"), Ok(Command::Clear(None)));
        assert_eq!(parse_command(" clear 3 "), Ok(Command::Clear(Some(3))));
        assert_eq!(parse_command("seed 42"), Ok(Command::Seed(42)));
        assert_eq!(parse_command("status"), Ok(Command::Status));
        assert!(matches!(
            parse_command("frob"),
            Err(SpecError::UnknownCommand(_))
        ));
        assert!(matches!(
            parse_fault("melt"),
            Err(SpecError::UnknownKind(_))
        ));
        assert!(matches!(
            parse_fault("lost page"),
            Err(SpecError::BadParam(_))
        ));
        assert!(matches!(
            parse_fault("flip bit=8"),
            Err(SpecError::BadValue { .. })
        ));
        assert!(matches!(
            parse_fault("lost prob=2"),
            Err(SpecError::BadValue { .. })
        ));
        assert_eq!(
            parse_fault("eio-write errno=22").map(|s| s.kind),
            Ok(Kind::EioWrite { errno: 22 })
        );
        assert_eq!(
            parse_fault("eio-read").map(|s| s.kind),
            Ok(Kind::EioRead { errno: libc::EIO })
        );
        assert!(matches!(
            parse_fault("eio-read errno=0"),
            Err(SpecError::BadValue { .. })
        ));
        assert!(matches!(
            parse_fault("delay-read"),
            Err(SpecError::Missing { .. })
        ));
    }
}
