//! `campaign.json`: what a power-cycle campaign was (schema "sqliosim-campaign/1": the cycle
//! count, the hosts, the witness, the cut command, when it started), read through the
//! safe-file door and checked before any cycle is. A host name becomes a directory name under
//! `hosts/`, so it must be a plain name: no `/`, not `.` or `..`, no NUL.

use std::collections::HashSet;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::io::safefile::{read_bounded_in, Dir, Kind, SafeFileError, Use};
use crate::report::views::printable::printable;

/// Value of the `schema` field of `campaign.json`.
pub const CAMPAIGN_SCHEMA: &str = "sqliosim-campaign/1";
/// The file naming the campaign, in the campaign directory.
pub const CAMPAIGN_FILE: &str = "campaign.json";
/// The most cycles a campaign may have.
pub const MAX_CYCLES: u64 = 10_000;
/// The most hosts a campaign may have.
pub const MAX_HOSTS: usize = 100_000;
/// The most rows (hosts × cycles) a report reads: each row opens up to five files.
pub const MAX_ROWS: u64 = 1_000_000;

/// The campaign, as `campaign.json` describes it.
#[derive(Debug, Clone, Serialize)]
pub struct Campaign {
    /// The campaign directory (as given on the command line).
    #[serde(serialize_with = "super::row::lossy_path")]
    pub dir: PathBuf,
    /// Power cuts per host.
    pub cycles: u32,
    /// The hosts, in the file's order.
    pub hosts: Vec<String>,
    /// The witness's address, when the campaign had one.
    pub witness: Option<String>,
    /// The command that cut the power.
    pub cut_command: Option<String>,
    /// When the campaign started, microseconds since the Unix epoch.
    pub started_us: Option<u64>,
}

/// Why the campaign could not be read: nothing is reported (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    /// The directory or `campaign.json` could not be opened or read.
    #[error(transparent)]
    Read(#[from] SafeFileError),
    /// `campaign.json` is not what the contract says.
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// `campaign.json`.
        path: PathBuf,
        /// What is wrong, host names made printable.
        reason: String,
    },
}

/// Reads and checks `campaign.json` in the campaign directory `top`.
pub fn load(top: &Dir) -> Result<Campaign, CampaignError> {
    let path = top.join(CAMPAIGN_FILE.as_ref());
    let bad = |reason: String| CampaignError::Invalid {
        path: path.clone(),
        reason,
    };
    let bytes = read_bounded_in(top, CAMPAIGN_FILE.as_ref(), Use::Input, Kind::Campaign)?
        .ok_or_else(|| bad("no such file: not a campaign directory".into()))?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    let obj = doc
        .as_object()
        .ok_or_else(|| bad("not a JSON object".into()))?;
    check_schema(obj).map_err(bad)?;
    let cycles = cycles(obj).map_err(bad)?;
    let hosts = hosts(obj).map_err(bad)?;
    if hosts.len() as u64 * u64::from(cycles) > MAX_ROWS {
        return Err(bad(format!(
            "{} hosts × {cycles} cycles is over the {MAX_ROWS} rows a report reads",
            hosts.len()
        )));
    }
    Ok(Campaign {
        dir: top.path().to_path_buf(),
        cycles,
        hosts,
        witness: optional_str(obj, "witness").map_err(bad)?,
        cut_command: optional_str(obj, "cut_command").map_err(bad)?,
        started_us: optional_u64(obj, "started_us").map_err(bad)?,
    })
}

fn check_schema(obj: &Map<String, Value>) -> Result<(), String> {
    match obj.get("schema") {
        Some(Value::String(s)) if s == CAMPAIGN_SCHEMA => Ok(()),
        Some(Value::String(s)) => Err(format!(
            "schema is \"{}\", not \"{CAMPAIGN_SCHEMA}\" (a campaign of another version?)",
            printable(s)
        )),
        _ => Err(format!("no \"schema\": \"{CAMPAIGN_SCHEMA}\"")),
    }
}

fn cycles(obj: &Map<String, Value>) -> Result<u32, String> {
    match obj.get("cycles").and_then(Value::as_u64) {
        Some(n @ 1..=MAX_CYCLES) => u32::try_from(n).map_err(|e| e.to_string()),
        _ => Err(format!(
            "\"cycles\" must be a whole number from 1 to {MAX_CYCLES}, not {}",
            obj.get("cycles").map_or("absent".into(), |v| v.to_string())
        )),
    }
}

fn hosts(obj: &Map<String, Value>) -> Result<Vec<String>, String> {
    let list = obj
        .get("hosts")
        .and_then(Value::as_array)
        .ok_or("\"hosts\" must be a list of host names")?;
    if list.is_empty() {
        return Err("\"hosts\" names no host: the report would check nothing".into());
    }
    if list.len() > MAX_HOSTS {
        return Err(format!(
            "\"hosts\" names {} hosts, over the limit of {MAX_HOSTS}",
            list.len()
        ));
    }
    let mut seen = HashSet::new();
    let mut hosts = Vec::with_capacity(list.len());
    for v in list {
        let name = v
            .as_str()
            .ok_or_else(|| format!("\"hosts\" must hold strings, not {v}"))?;
        plain_name(name)?;
        if !seen.insert(name) {
            return Err(format!("host \"{}\" is listed twice", printable(name)));
        }
        hosts.push(name.to_string());
    }
    Ok(hosts)
}

/// A host name is a directory name under `hosts/`: one plain path component.
fn plain_name(name: &str) -> Result<(), String> {
    let why = match name {
        "" => "is empty",
        "." | ".." => "is not a directory name of its own",
        n if n.contains('/') => "holds a '/'",
        n if n.contains('\0') => "holds a NUL byte",
        _ => return Ok(()),
    };
    Err(format!(
        "host name \"{}\" {why}: a host name must be a plain directory name under hosts/",
        printable(name)
    ))
}

fn optional_str(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(format!("\"{key}\" must be a string or null, not {v}")),
    }
}

fn optional_u64(obj: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("\"{key}\" must be microseconds since the epoch, not {v}")),
    }
}

#[cfg(test)]
mod tests {
    use super::plain_name;

    #[test]
    fn host_names_are_plain_directory_names() {
        for bad in ["", ".", "..", "a/b", "/etc", "a\0b"] {
            assert!(plain_name(bad).is_err(), "{bad:?} refused");
        }
        for good in ["node1", "db-01.example.com", "x..y", "\x1b[31mred"] {
            assert!(plain_name(good).is_ok(), "{good:?} accepted");
        }
    }
}
