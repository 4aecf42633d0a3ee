//! What carried a run's disk I/O (`sqliosim run --engine`) and each file's direct-I/O unit:
//! recorded in the JSON summary, logged at start, and printed in the console header, all from
//! the same description.

use crate::events::FileUnit;
use crate::page::FileRole;

/// The `Func` attribute of the log entry that records what carried the I/O (its text, kept
/// for the logs that are grepped, is `I/O engine: ` and the description); `sqliosim report`
/// reads it back.
pub const LOG_FUNC: &str = "IoEngine";

/// The `Func` attribute of the log entries that record each file's direct-I/O unit (their
/// text is the run header's `Direct I/O unit of …` line).
pub const ALIGN_FUNC: &str = "DirectIoAlign";

pub use crate::events::facts::IoServiceInfo;

impl IoServiceInfo {
    /// One line for the console and the log, e.g. `uring, one engine for every thread, depth
    /// 32 (MaxOutstandingIO); the default engine`: what carries the I/O and why.
    pub fn describe(&self) -> String {
        format!("{}{}", self.what(), self.why())
    }

    /// Why this engine runs, after the description (nothing for a log of an older run).
    fn why(&self) -> String {
        let why = engine_reason(
            &self.chosen,
            self.probe.as_deref(),
            self.recommended.as_deref(),
        );
        if why.is_empty() {
            why
        } else {
            format!("; {why}")
        }
    }

    fn what(&self) -> String {
        let max = self.max_outstanding_io;
        match (self.used.as_str(), self.depth) {
            ("memory", _) => "memory (fault injection: files in memory, no engine)".into(),
            (used, Some(depth)) => {
                let refused = if used != self.requested && self.chosen != "measured" {
                    format!(" ({} refused)", self.requested)
                } else {
                    String::new()
                };
                let why = if max == 0 {
                    format!("MaxOutstandingIO = 0: the {used} engine's ceiling")
                } else if depth < max {
                    format!("MaxOutstandingIO = {max}, capped at the engine's largest depth")
                } else {
                    "MaxOutstandingIO".to_string()
                };
                let own = match (self.own_rings, max) {
                    (false, _) => String::new(),
                    (true, 0) => format!("; the asynchronous actors on io_uring rings of their own, each up to {depth} in flight"),
                    (true, _) => "; the asynchronous actors on io_uring rings of their own, MaxOutstandingIO held by a gate".into(),
                };
                let (scope, own_sync) = match (self.own_sync, max) {
                    (false, _) => (", one engine for every thread", ""),
                    (true, 0) => (" for the posted requests", "; the synchronous actors' reads and writes on their own threads (pread/pwrite: no hand-off)"),
                    (true, _) => (" for the posted requests", "; the synchronous actors' reads and writes on their own threads (pread/pwrite: no hand-off), MaxOutstandingIO held by a gate"),
                };
                format!("{used}{refused}{scope}, depth {depth} ({why}){own}{own_sync}")
            }
            (used, None) if max == 0 => {
                format!("{used} (each thread's own pread/pwrite, done on the spot even for the asynchronous actors; MaxOutstandingIO = 0: no cap)")
            }
            (used, None) => format!(
                "{used} (each thread's own pread/pwrite; MaxOutstandingIO = {max} held by a gate)"
            ),
        }
    }
}

/// Why an engine runs, as the run header and bench's report say it: `chosen` is `default`,
/// `named`, `measured` or (bench at queue depth 1) `cheaper` (see [`crate::io::aio::probe::decide`]), `probe` what the engine
/// probe measured, `recommended` a faster engine than the one named. Empty for an unknown
/// `chosen` (a log written before the probe).
pub fn engine_reason(chosen: &str, probe: Option<&str>, recommended: Option<&str>) -> String {
    match (chosen, probe, recommended) {
        ("default", None, _) => "the default engine".into(),
        ("default", Some(p), Some(r)) => {
            format!("the default engine, but --engine {r} would add no latency here ({p})")
        }
        ("default", Some(p), None) => format!("the default engine ({p})"),
        ("named", Some(p), Some(r)) => {
            format!("named by --engine, but --engine {r} would add no latency here ({p})")
        }
        ("named", Some(p), None) => format!("named by --engine ({p})"),
        ("named", None, _) => "named by --engine".into(),
        ("cheaper", p, _) => format!(
            "chosen by measurement instead of the default io_uring: at one request in flight per thread a ring has nothing to gain, and a pread on the worker's own thread reads no slower here ({}; --engine uring keeps io_uring)",
            p.unwrap_or_default()
        ),
        ("measured", p, _) => format!(
            "chosen by measurement instead of the default io_uring, which adds latency on this device ({}; --engine uring keeps io_uring)",
            p.unwrap_or_default()
        ),
        _ => String::new(),
    }
}

/// The run header's line for one file's direct-I/O unit, e.g. `Direct I/O unit of
/// m/sqliosim.ldx = 4096 bytes (statx DIOALIGN: offset 4096, memory 512; ext4), log blocks in
/// 4096-byte units`; the log entry ([`ALIGN_FUNC`]) has the same text.
pub fn unit_line(u: &FileUnit) -> String {
    let unit = u.info.unit();
    let log = match u.role {
        FileRole::Log => {
            let log = u.info.log_unit(u.force_4k_log);
            let why = match (u.force_4k_log, u.info.physical_block) {
                (true, _) if log == 4096 => " (Force4KLogIO)".to_string(),
                (_, Some(p)) if p == log && log > unit => " (the physical sector)".to_string(),
                _ => String::new(),
            };
            format!(", log blocks in {log}-byte units{why}")
        }
        // The allowed-tear rule's unit (docs/durability.md): verify and --resume accept a
        // tear at its boundaries of a write the journal does not hold.
        FileRole::Data => format!(
            ", atomic unit assumed {unit} bytes (the logical sector: a write not acknowledged may tear at its boundaries)"
        ),
    };
    let buffered = if u.direct {
        ""
    } else {
        " (buffered I/O: not enforced)"
    };
    format!(
        "Direct I/O unit of {} = {}{buffered}{log}",
        u.path.display(),
        u.info.describe()
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_default_engine_the_probe_would_change_says_so_and_keeps_its_word() {
        assert_eq!(
            engine_reason("default", Some("P"), Some("psync")),
            "the default engine, but --engine psync would add no latency here (P)"
        );
        assert_eq!(
            engine_reason("default", Some("P"), None),
            "the default engine (P)"
        );
    }

    use super::*;

    fn info(requested: &str, used: &str, depth: Option<u64>, max: u64) -> IoServiceInfo {
        IoServiceInfo {
            requested: requested.into(),
            used: used.into(),
            depth,
            max_outstanding_io: max,
            own_rings: false,
            ..IoServiceInfo::default()
        }
    }

    #[test]
    fn the_line_says_why_the_engine_runs() {
        let with = |chosen: &str, probe: Option<&str>, rec: Option<&str>, used: &str| {
            IoServiceInfo {
                chosen: chosen.into(),
                probe: probe.map(Into::into),
                recommended: rec.map(Into::into),
                ..info("uring", used, Some(32), 32)
            }
            .describe()
        };
        assert!(with("default", None, None, "uring")
            .ends_with("(MaxOutstandingIO); the default engine"));
        assert!(with("default", Some("M"), None, "uring").ends_with("; the default engine (M)"));
        assert!(with("named", None, None, "uring").ends_with("; named by --engine"));
        assert!(with("named", Some("M"), Some("psync"), "uring")
            .ends_with("; named by --engine, but --engine psync would add no latency here (M)"));
        let measured = with("measured", Some("M"), None, "psync");
        assert!(
            measured.starts_with("psync, one engine"),
            "not a refusal: {measured}"
        );
        assert!(measured.contains("chosen by measurement instead of the default io_uring"));
        assert!(
            measured.contains("(M; --engine uring keeps io_uring)"),
            "{measured}"
        );
        let cheaper = engine_reason("cheaper", Some("M"), None);
        assert!(
            cheaper.starts_with("chosen by measurement instead of the default io_uring: at one request in flight per thread")
                && cheaper.ends_with("(M; --engine uring keeps io_uring)"),
            "{cheaper}"
        );
        // A refusal still says so.
        assert!(with("default", None, None, "psync").starts_with("psync (uring refused)"));
    }

    #[test]
    fn descriptions_name_the_io_service_its_depth_and_a_fallback() {
        assert_eq!(
            info("uring", "uring", Some(32), 32).describe(),
            "uring, one engine for every thread, depth 32 (MaxOutstandingIO)"
        );
        assert_eq!(
            info("uring", "psync", Some(52), 0).describe(),
            "psync (uring refused), one engine for every thread, depth 52 (MaxOutstandingIO = 0: the psync engine's ceiling)"
        );
        assert_eq!(
            info("uring", "uring", Some(16384), 140000).describe(),
            "uring, one engine for every thread, depth 16384 (MaxOutstandingIO = 140000, capped at the engine's largest depth)"
        );
        assert_eq!(
            info("sync", "sync", None, 8).describe(),
            "sync (each thread's own pread/pwrite; MaxOutstandingIO = 8 held by a gate)"
        );
        let own = IoServiceInfo {
            own_rings: true,
            ..info("uring", "uring", Some(64), 64)
        };
        assert_eq!(
            own.describe(),
            "uring, one engine for every thread, depth 64 (MaxOutstandingIO); the asynchronous actors on io_uring rings of their own, MaxOutstandingIO held by a gate"
        );
        let own = IoServiceInfo {
            own_rings: true,
            ..info("uring", "uring", Some(4096), 0)
        };
        assert!(own.describe().ends_with(
            "; the asynchronous actors on io_uring rings of their own, each up to 4096 in flight"
        ));
        assert!(info("uring", "memory", None, 0)
            .describe()
            .starts_with("memory"));
        let own_sync = IoServiceInfo {
            own_sync: true,
            chosen: "measured".into(),
            ..info("uring", "psync", Some(64), 64)
        };
        assert!(
            own_sync.describe().starts_with(
                "psync for the posted requests, depth 64 (MaxOutstandingIO); the synchronous actors' reads and writes on their own threads (pread/pwrite: no hand-off), MaxOutstandingIO held by a gate; chosen by measurement"
            ),
            "{}",
            own_sync.describe()
        );
    }

    fn log_on(physical: Option<u32>, force_4k_log: bool) -> String {
        let u = FileUnit {
            path: "m/sqliosim.ldx".into(),
            role: FileRole::Log,
            info: crate::io::DirectIoInfo {
                mem_align: Some(512),
                offset_align: Some(512),
                filesystem: "ext4".into(),
                honoured: true,
                logical_block: Some(512),
                physical_block: physical,
            },
            direct: true,
            force_4k_log,
        };
        unit_line(&u)
    }

    #[test]
    fn a_log_on_a_512e_disk_is_written_in_physical_sectors_and_the_override_forces_4096() {
        assert!(log_on(None, false).ends_with(", log blocks in 512-byte units"));
        assert!(log_on(Some(512), false).ends_with(", log blocks in 512-byte units"));
        assert!(log_on(Some(4096), false)
            .ends_with(", log blocks in 4096-byte units (the physical sector)"));
        assert!(log_on(Some(512), true).ends_with(", log blocks in 4096-byte units (Force4KLogIO)"));
        // A physical sector larger than a page is not a log unit the format allows.
        assert!(log_on(Some(65536), false).ends_with(", log blocks in 512-byte units"));
    }
}
