//! What the SQLIO and DiskSpd front ends share: their switches as strings, the `--engine` switch,
//! notes and warnings on stderr, and the outcome of a finished run.

use std::ffi::OsString;
use std::io::Write;

use crate::bench::error::BenchError;
use crate::bench::latency::BenchStats;
use crate::exit::Outcome;
use crate::io::aio::RingKind;

/// The switches after the display name (`args[0]`), as strings. An argument that is not UTF-8
/// (a target in a directory named in Latin-1) is refused by name: made text with U+FFFD, it
/// would name another file than the one meant, or a directory that does not exist.
pub(crate) fn arg_strings(args: &[OsString]) -> Result<Vec<String>, BenchError> {
    args.iter()
        .skip(1)
        .map(|s| {
            s.to_str().map(str::to_owned).ok_or_else(|| {
                BenchError::Usage(format!(
                    "{}: the argument is not UTF-8 text; the switches and targets of {} are read as text, so a target must have a UTF-8 name",
                    s.as_encoded_bytes().escape_ascii(),
                    args.first().map_or("sqliosim".into(), |a| a.to_string_lossy())
                ))
            })
        })
        .collect()
}

/// The ring kind named by `--engine`.
pub(crate) fn ring_kind_of(name: &str) -> Result<RingKind, BenchError> {
    RingKind::from_name(name).ok_or_else(|| {
        BenchError::Usage(format!(
            "--engine: {:?} is not valid; expected uring, psync or libaio",
            name
        ))
    })
}

/// One note on `err` per switch `tool` accepts for compatibility and ignores.
pub(crate) fn note_ignored(
    err: &mut dyn Write,
    tool: &str,
    ignored: &[String],
) -> std::io::Result<()> {
    for s in ignored {
        writeln!(
            err,
            "sqliosim {tool}: note: {s} is accepted for compatibility and has no effect"
        )?;
    }
    Ok(())
}

/// The run's warnings on `err`, one a line.
pub(crate) fn warn_all(
    err: &mut dyn Write,
    tool: &str,
    warnings: &[String],
) -> std::io::Result<()> {
    for w in warnings {
        writeln!(err, "sqliosim {tool}: warning: {w}")?;
    }
    Ok(())
}

/// Findings when any I/O failed or any read-back did not verify, else clean.
pub(crate) fn outcome_of(total: &BenchStats) -> Outcome {
    if total.errors > 0 || total.verify_failures > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    }
}
