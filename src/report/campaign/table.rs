//! The terminal campaign report: what the campaign was, one table row per host per cycle,
//! then what made each row CORRUPT, MISSING or ERROR and the notes, then the verdict. Names
//! from the files are printed as they are here; the caller makes the text printable.

use std::fmt::Write;

use super::row::Row;
use super::verdict::CampaignVerdict;
use super::Report;
use crate::report::sinks::clock::utc;

/// The widest the host column is padded to: a longer name is printed whole.
const MAX_HOST_WIDTH: usize = 64;

/// When the row's power cut was, UTC ("-" when unknown).
pub fn cut_time(r: &Row) -> String {
    utc(r.cut.as_ref().and_then(|c| c.cut_at_us))
}

/// A count that may be unknown.
pub fn opt(n: Option<u64>) -> String {
    n.map_or_else(|| "-".into(), |n| n.to_string())
}

/// Acknowledged-but-not-witnessed as "batches/pages".
pub fn acked(r: &Row) -> String {
    match r.acked_unwitnessed {
        Some(a) => format!("{}/{}", opt(a.batches), opt(a.pages)),
        None => "-".into(),
    }
}

/// Unsafe shutdowns before→after ("-" without SMART counts).
pub fn shutdowns(r: &Row) -> String {
    match r.unsafe_shutdowns.as_slice() {
        [] => "-".into(),
        [one] => one.text(),
        many => many
            .iter()
            .map(|s| format!("{} {}", s.device, s.text()))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What the columns mean, for the text and the page (one line each).
pub const LEGEND: &str = "In flight: pages newer than the journal's last record + tears allowed (writes that landed after it).
Acked-unwitnessed: batches/pages acknowledged after the witness's last record.
Owed: pages the journal said must hold a generation. Torn: tears not allowed.
Shutdowns: the drives' unsafe-shutdown count before→after the cut.";

/// The whole terminal report.
pub fn render(rep: &Report, v: &CampaignVerdict) -> String {
    let c = &rep.campaign;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sqliosim campaign report: {}: {} host(s) × {} cycle(s), witness {}, started {}",
        c.dir.display(),
        c.hosts.len(),
        c.cycles,
        c.witness.as_deref().unwrap_or("none"),
        utc(c.started_us)
    );
    if let Some(cmd) = &c.cut_command {
        let _ = writeln!(s, "cut command: {cmd}");
    }
    s.push('\n');
    table(&mut s, &rep.rows);
    let _ = writeln!(s, "{LEGEND}");
    reasons(&mut s, &rep.rows);
    let _ = writeln!(s, "\n{}", v.line);
    s
}

fn table(s: &mut String, rows: &[Row]) {
    let hw = rows
        .iter()
        .map(|r| r.host.chars().count())
        .max()
        .unwrap_or(0);
    let hw = hw.clamp(4, MAX_HOST_WIDTH);
    let _ = writeln!(
        s,
        "{:<hw$}  {:>5}  {:<20}  {:<7}  {:>9}  {:>17}  {:>7}  {:>5}  {:>5}  {:>13}  {:>5}  Shutdowns",
        "Host", "Cycle", "Cut (UTC)", "Verdict", "In flight", "Acked-unwitnessed", "Owed", "Lost", "Torn", "Allowed tears", "Other"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<hw$}  {:>5}  {:<20}  {:<7}  {:>9}  {:>17}  {:>7}  {:>5}  {:>5}  {:>13}  {:>5}  {}",
            r.host,
            r.cycle,
            cut_time(r),
            r.verdict.word(),
            opt(r.in_flight),
            acked(r),
            opt(r.pages_owed),
            r.lost,
            r.torn,
            opt(r.allowed_tears),
            r.other,
            shutdowns(r)
        );
    }
}

/// What made each row what it is, and the notes.
fn reasons(s: &mut String, rows: &[Row]) {
    let mut first = true;
    for r in rows
        .iter()
        .filter(|r| !r.why.is_empty() || !r.notes.is_empty())
    {
        if first {
            s.push('\n');
            first = false;
        }
        for why in &r.why {
            let _ = writeln!(
                s,
                "{} cycle {} {}: {why}",
                r.host,
                r.cycle,
                r.verdict.word()
            );
        }
        for note in &r.notes {
            let _ = writeln!(s, "{} cycle {} note: {note}", r.host, r.cycle);
        }
    }
}
