//! What the fleet report takes from an XML log's text beyond what the reader keeps: the host
//! and the device under each file (our "System: host …" and "Storage for …" entries), and the
//! count of long I/Os (the CheckForLongIO warnings, ours and SQLIOSim's).

use quick_xml::escape::unescape;

use super::device::DeviceKey;
use crate::report::sinks::json::IDENTITY_PREFIX;

/// Host and devices as an XML log states them.
#[derive(Debug, Clone, Default)]
pub struct LogHost {
    /// Host name, when the log names it (SQLIOSim's logs do not).
    pub hostname: Option<String>,
    /// Test file path → device.
    pub devices: Vec<(String, DeviceKey)>,
    /// The run's `--host-label`, from the "Host identity" entry.
    pub label: Option<String>,
    /// The machine id, from the "Host identity" entry.
    pub machine_id: Option<String>,
}

/// The EXTENDED_DESCRIPTION texts that start with `prefix`, unescaped.
fn descriptions<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = String> + 'a {
    text.match_indices(prefix).filter_map(move |(at, _)| {
        let rest = &text[at..];
        let raw = &rest[..rest.find('<')?];
        Some(unescape(raw).map_or_else(|_| raw.to_string(), |t| t.into_owned()))
    })
}

/// The text between `start` and the next `end` in `s`.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let rest = &s[from..];
    Some(rest.find(end).map_or(rest, |e| &rest[..e]))
}

/// Host and devices of the run the log records.
pub fn host_of(text: &str) -> LogHost {
    let hostname = descriptions(text, "System: host ")
        .next()
        .and_then(|d| between(&d, "System: host ", ", kernel ").map(str::to_string))
        .filter(|h| !h.is_empty());
    let devices = descriptions(text, "Storage for ")
        .filter_map(|d| storage_line(&d))
        .collect();
    let (label, machine_id) = identity(text);
    LogHost {
        hostname,
        devices,
        label,
        machine_id,
    }
}

/// Label and machine id of our "Host identity: label L, machine id M" entry ("none": absent).
fn identity(text: &str) -> (Option<String>, Option<String>) {
    let Some(d) = descriptions(text, IDENTITY_PREFIX).next() else {
        return (None, None);
    };
    let label = known(between(&d, IDENTITY_PREFIX, ", machine id "));
    let id = known(d.rsplit_once(", machine id ").map(|(_, id)| id));
    (label, id)
}

/// A field of the identity entry, None when empty or "none".
fn known(s: Option<&str>) -> Option<String> {
    s.map(str::trim)
        .filter(|s| !s.is_empty() && *s != "none")
        .map(str::to_string)
}

/// "Storage for PATH: device NAME (disk …), model M, serial S, firmware F, logical…".
fn storage_line(d: &str) -> Option<(String, DeviceKey)> {
    let rest = d.strip_prefix("Storage for ")?;
    let at = rest.find(": device ")?;
    let path = rest[..at].to_string();
    let name = between(rest, ": device ", " (disk ")?;
    let field = |k: &str, next: &str| between(rest, k, next).unwrap_or("unknown").to_string();
    let key = DeviceKey {
        name: if name == "unknown" {
            name.to_string()
        } else {
            format!("/dev/{name}")
        },
        model: field("), model ", ", serial "),
        serial: field(", serial ", ", firmware "),
        firmware: field(", firmware ", ", logical/physical"),
    };
    Some((path, key))
}

/// The number that starts a description ("12 I/O requests …").
fn leading_number(d: &str) -> Option<u64> {
    let digits: String = d.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// I/Os outstanding for more than 15 s: our final "N I/O requests were outstanding … during the
/// run" when present, else the sum of the periodic "N IO requests are outstanding …" warnings
/// (SQLIOSim writes only those).
pub fn long_ios(text: &str) -> u64 {
    let mut periodic = 0;
    for (at, _) in text.match_indices(" outstanding for more than ") {
        let head = &text[..at];
        let start = head.rfind('>').map_or(0, |i| i + 1);
        let Some(n) = leading_number(&head[start..]) else {
            continue;
        };
        if head[start..].contains(" were") {
            return n;
        }
        periodic += n;
    }
    periodic
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_host_devices_and_long_ios() {
        let log = "<ENTRY><EXTENDED_DESCRIPTION>System: host db-7, kernel Linux 6, CPU 2 x EPYC</EXTENDED_DESCRIPTION></ENTRY>\
            <ENTRY><EXTENDED_DESCRIPTION>Storage for /d/a.mdx: device nvme0n1p2 (disk nvme0n1, 259:2), model Acme &amp; Co, serial S1, firmware F2, logical/physical block size 512/4096</EXTENDED_DESCRIPTION></ENTRY>\
            <ENTRY><EXTENDED_DESCRIPTION>3 IO requests are outstanding for more than 15 sec.</EXTENDED_DESCRIPTION></ENTRY>\
            <ENTRY><EXTENDED_DESCRIPTION>2 IO requests are outstanding for more than 15 sec.</EXTENDED_DESCRIPTION></ENTRY>";
        let h = host_of(log);
        assert_eq!(h.hostname.as_deref(), Some("db-7"));
        let (path, d) = &h.devices[0];
        assert_eq!(path, "/d/a.mdx");
        assert_eq!(d.name, "/dev/nvme0n1p2");
        assert_eq!((d.model.as_str(), d.serial.as_str()), ("Acme & Co", "S1"));
        assert_eq!(d.firmware, "F2");
        assert_eq!(long_ios(log), 5);
        let fin = format!("{log}<EXTENDED_DESCRIPTION>4 I/O requests were outstanding for more than 15 sec. during the run</EXTENDED_DESCRIPTION>");
        assert_eq!(long_ios(&fin), 4);
        assert_eq!(host_of("<LOG/>").hostname, None);
        assert_eq!((h.label, h.machine_id), (None, None));
        let ided = format!("{log}<EXTENDED_DESCRIPTION>Host identity: label rack1-n3, machine id 0a1b</EXTENDED_DESCRIPTION>");
        let h = host_of(&ided);
        assert_eq!(h.label.as_deref(), Some("rack1-n3"));
        assert_eq!(h.machine_id.as_deref(), Some("0a1b"));
    }
}
