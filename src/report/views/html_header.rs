//! The HTML report's header: what a vendor asks first about a run — the host, the device under
//! each file (model, serial, firmware), when it started and ended and for how long, the seed
//! that replays it, the version and the command line. Read from the JSON summary (given, or the
//! one the run wrote beside its log); what the input does not say is "unknown".

use std::fmt::Write;

use crate::report::facts::UNKNOWN;
use crate::report::sinks::json::JsonReport;
use crate::report::views::charts::html_escape as esc;

/// The header's rows, label and value, in order.
pub fn rows(json: Option<&JsonReport>) -> Vec<(&'static str, String)> {
    let unknown = || UNKNOWN.to_string();
    let Some(j) = json else {
        let labels = [
            "Host", "Device", "Start", "End", "Duration", "Seed", "Version",
        ];
        let mut v: Vec<_> = labels.into_iter().map(|l| (l, unknown())).collect();
        v.push(("Command line", unknown()));
        return v;
    };
    let time = |us: u64| crate::report::sinks::clock::iso_utc(us);
    let mut v = vec![("Host", host(j))];
    for d in devices(j) {
        v.push(("Device", d));
    }
    v.push((
        "Start",
        Some(j.started_us)
            .filter(|&t| t > 0)
            .map_or_else(unknown, time),
    ));
    let end = match j.ended_us {
        Some(t) => time(t),
        None if j.updated_us > 0 => format!("not ended (last update {})", time(j.updated_us)),
        None => unknown(),
    };
    v.push(("End", end));
    v.push((
        "Duration",
        duration(j).map_or_else(unknown, |s| format!("{s:.1} s")),
    ));
    v.push((
        "Seed",
        j.seed.map_or_else(unknown, |s| format!("0x{s:016X} ({s})")),
    ));
    let t = &j.tool;
    v.push((
        "Version",
        format!("{} {} (page format {})", t.name, t.version, t.page_format),
    ));
    let cmd = if j.command_line.is_empty() {
        unknown()
    } else {
        j.command_line.join(" ")
    };
    v.push(("Command line", cmd));
    v
}

/// Seconds from start to end, or to the last update of a run that has not ended.
pub fn duration(j: &JsonReport) -> Option<f64> {
    let end = j.ended_us.unwrap_or(j.updated_us);
    (j.started_us > 0 && end >= j.started_us).then(|| (end - j.started_us) as f64 / 1e6)
}

fn host(j: &JsonReport) -> String {
    let name = j
        .host
        .as_ref()
        .map(|h| h.hostname.clone())
        .filter(|h| !h.is_empty())
        .or_else(|| j.system.as_ref().map(|s| s.hostname.clone()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| UNKNOWN.into());
    match j.host.as_ref().and_then(|h| h.label.as_deref()) {
        Some(label) => format!("{name} (label {label})"),
        None => name,
    }
}

/// One line per distinct device under the run's files.
fn devices(j: &JsonReport) -> Vec<String> {
    let field = |s: &str| if s.is_empty() { UNKNOWN } else { s }.to_string();
    let mut out: Vec<String> = Vec::new();
    for f in j.system.iter().flat_map(|s| &s.files) {
        let d = &f.device;
        let line = format!(
            "{}: model {}, serial {}, firmware {}",
            field(&d.disk),
            field(&d.model),
            field(&d.serial),
            field(&d.firmware)
        );
        if !out.contains(&line) {
            out.push(line);
        }
    }
    if out.is_empty() {
        out.push("model unknown, serial unknown, firmware unknown".into());
    }
    out
}

/// The header as an HTML table (`id='run'`).
pub fn render(s: &mut String, json: Option<&JsonReport>) {
    s.push_str("<table id='run'>\n");
    for (label, value) in rows(json) {
        let _ = writeln!(
            s,
            "<tr><th class='l'>{label}</th><td class='l'>{}</td></tr>",
            esc(&value)
        );
    }
    s.push_str("</table>\n");
}
