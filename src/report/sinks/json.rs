//! The JSON summary: configuration, seed, versions, system information, statistics and every
//! finding, rewritten atomically (temporary file + rename) so a killed run leaves a valid file.
//! The schema is documented in docs/json-schema.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::findings::Finding;
use crate::stats::Summary;

use crate::report::error::ReportError;
use crate::report::facts::io_service::IoServiceInfo;
use crate::report::facts::sysinfo::SystemInfo;

/// Value of the `schema` field; bumped on incompatible changes.
pub const SCHEMA: &str = "sqliosim-summary/2";

/// The `Func` of the configuration's warnings in the log, gathered into `config_warnings`.
pub const CONFIG_WARNING_FUNC: &str = "Config::Adjusted";

/// The tool that wrote the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolInfo {
    /// "sqliosim".
    pub name: String,
    /// Crate version.
    pub version: String,
    /// Page format version.
    pub page_format: u16,
}

impl Default for ToolInfo {
    fn default() -> Self {
        ToolInfo {
            name: "sqliosim".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            page_format: crate::page::layout::FORMAT_VERSION,
        }
    }
}

/// Who ran the run: what a fleet report keys its rows on, with each file's device (model,
/// serial, firmware) in `system.files`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostInfo {
    /// The host name (uname nodename).
    pub hostname: String,
    /// /etc/machine-id (systemd's machine id), null where the machine has none.
    pub machine_id: Option<String>,
    /// The name the run was given with `--host-label` (an inventory name), null without one:
    /// the fleet report keys and shows the host by it.
    pub label: Option<String>,
}

impl HostInfo {
    /// This machine: its host name and /etc/machine-id (trimmed; null when absent or empty).
    pub fn capture() -> HostInfo {
        let machine_id = std::fs::read_to_string("/etc/machine-id")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        HostInfo {
            hostname: rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned(),
            machine_id,
            label: None,
        }
    }

    /// "Host identity: label NAME, machine id ID" ("none" for what is not known): the XML
    /// log's entry the fleet report reads back ([`crate::report::fleet`]).
    pub fn identity_line(&self) -> String {
        format!(
            "{IDENTITY_PREFIX}{}, machine id {}",
            self.label.as_deref().unwrap_or("none"),
            self.machine_id.as_deref().unwrap_or("none")
        )
    }
}

/// How the XML log's host identity entry begins.
pub const IDENTITY_PREFIX: &str = "Host identity: label ";

/// `sha256:` and the hex SHA-256 of `serde_json::to_string(config)`: the `config_hash` of a
/// document whose `config` is `config` (a reader recomputes it from the document itself).
pub fn config_hash(config: &serde_json::Value) -> String {
    use sha2::Digest;
    let text = serde_json::to_string(config).unwrap_or_default();
    let digest = sha2::Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

pub use crate::events::facts::StopInfo;

/// The whole JSON summary document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JsonReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Tool and versions.
    pub tool: ToolInfo,
    /// The command line of the run.
    pub command_line: Vec<String>,
    /// Seed that drives every random choice of the run.
    pub seed: Option<u64>,
    /// Run id of the file set.
    pub run_id: Option<u64>,
    /// The host that ran it (schema /2; absent in /1 documents).
    pub host: Option<HostInfo>,
    /// `sha256:` and the hex SHA-256 of the effective configuration's canonical JSON
    /// (`serde_json::to_string` of `config`), so a fleet report can tell which hosts ran the
    /// same configuration (schema /2).
    pub config_hash: Option<String>,
    /// Run start, microseconds since the Unix epoch.
    pub started_us: u64,
    /// Run end (the final write), microseconds since the Unix epoch; null while running or when
    /// the run was killed (schema /2).
    pub ended_us: Option<u64>,
    /// How and when the run stopped; null while running or when it was killed (schema /2).
    pub stop: Option<StopInfo>,
    /// Last rewrite, microseconds since the Unix epoch.
    pub updated_us: u64,
    /// True only in the final write of a run that ran its planned course: false while it is
    /// going on, when it was killed, and when a signal cut it short.
    pub complete: bool,
    /// "running", "clean", "findings", "environment_error" (the run stopped on a refused
    /// request or a vanished device or mount, with no finding), or "interrupted" (a signal cut
    /// the run short and nothing was found; schema /2).
    pub outcome: String,
    /// The environment error that stopped the run, if one did (not a finding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment_error: Option<String>,
    /// The effective configuration, as the caller describes it.
    pub config: serde_json::Value,
    /// Machine and storage.
    pub system: Option<SystemInfo>,
    /// What carried the disk I/O.
    pub io_engine: Option<IoServiceInfo>,
    /// Statistics, as of `updated_us`: while the run goes on, the running statistics (as of
    /// the workers' last flush), in the final write the run's.
    pub stats: Option<Summary>,
    /// Where the run was at its last tick (phase, cycle, rates, in flight); null before the
    /// first tick (an addition to schema /2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<crate::report::sinks::status::RunStatus>,
    /// The process id of the writer, so a reader on the same machine can tell a run still
    /// going from one killed (an addition to schema /2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Warnings of the run (every WARNING entry of its XML log; an addition to schema /2).
    pub warnings_total: u64,
    /// The configuration's warnings: each key the run lowered, split, mapped or ignored, as
    /// said on stderr at the start and logged as WARNING entries with `Func`
    /// [`CONFIG_WARNING_FUNC`] (an addition to schema /2; absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config_warnings: Vec<String>,
    /// Findings logged in full (at most the error cap).
    pub findings: Vec<Finding>,
    /// All integrity findings, including suppressed ones.
    pub findings_total: u64,
    /// All errors (findings and ERROR messages), including suppressed ones.
    pub errors_total: u64,
    /// The error cap.
    pub error_cap: u64,
    /// Errors past the cap, by class.
    pub suppressed: BTreeMap<String, u64>,
    /// The XML log, if any.
    pub log: Option<PathBuf>,
    /// Directory of the page dumps, if any.
    pub dump_dir: Option<PathBuf>,
    /// The kernel's messages of the run's window about its devices (docs/evidence.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_log: Option<crate::report::facts::kmsg::KernelLog>,
    /// DMI, kernel command line, block stack, AER counters and queue settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_facts: Option<crate::report::facts::host::HostFacts>,
    /// SMART and NVMe logs of each disk under test, before and after the run, or why absent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drive_health: Vec<crate::report::facts::health::HealthReport>,
    /// The capacity run of `run --bench` beside the simulation, when one was asked for (an
    /// addition to schema /2; docs/json-schema.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bench: Option<crate::report::sinks::bench_figures::BenchFigures>,
    /// What `verify` (or a resume's first check) held the files to and counted (an addition
    /// to schema /2; docs/json-schema.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judgement: Option<crate::report::sinks::judgement::Judgement>,
}

impl JsonReport {
    /// An empty document of the current schema.
    pub fn new() -> JsonReport {
        JsonReport {
            schema: SCHEMA.into(),
            outcome: "running".into(),
            ..JsonReport::default()
        }
    }
}

pub use crate::config::beside_log;

/// Writes `value` as pretty JSON to `path` atomically: a temporary file `.NAME.<random>.tmp` created
/// anew in the same directory, then renamed over the old file (see
/// [`crate::io::safefile::Replacement`]).
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), ReportError> {
    let text = serde_json::to_vec_pretty(value)?;
    Ok(crate::io::safefile::replace(path, &text)?)
}

/// Parses a JSON summary; a document cut short is repaired as far as it goes.
pub fn parse(text: &str) -> Result<(JsonReport, bool), serde_json::Error> {
    match serde_json::from_str::<JsonReport>(text) {
        Ok(r) => Ok((r, false)),
        Err(e) if e.is_eof() => crate::report::readers::json_repair::candidates(text)
            .iter()
            .find_map(|c| serde_json::from_str(c).ok())
            .map(|r| (r, true))
            .ok_or(e),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_goes_beside_the_log() {
        let p = |s: &str| beside_log(Path::new(s));
        assert_eq!(
            p("/d/sqliosim.log.xml"),
            PathBuf::from("/d/sqliosim.log.json")
        );
        assert_eq!(p("/d/run.log"), PathBuf::from("/d/run.log.json"));
        assert_eq!(p("log.xml.bak"), PathBuf::from("log.xml.bak.json"));
    }

    #[test]
    fn config_hash_is_sha256_of_the_compact_json() {
        // sha256 of the two bytes `{}`.
        let h = config_hash(&serde_json::json!({}));
        assert_eq!(
            h,
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        let a = config_hash(&serde_json::json!({"CONFIG": {"TestCycles": "1"}}));
        let b = config_hash(&serde_json::json!({"CONFIG": {"TestCycles": "2"}}));
        assert_ne!(a, b);
    }
}
