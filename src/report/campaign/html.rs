//! The self-contained campaign page: the verdict, what the campaign was, a grid of hosts ×
//! cycles coloured by verdict, the table of every row, and what made each row CORRUPT,
//! MISSING or ERROR with the notes. Every value from the files is escaped; no scripts, no
//! external resources.

use std::fmt::Write;

use crate::report::views::charts::html_escape as esc;
use crate::report::views::html::STYLE;

use super::row::{CutVerdict, Row};
use super::table::{acked, cut_time, opt, shutdowns, LEGEND};
use super::verdict::CampaignVerdict;
use super::Report;
use crate::report::sinks::clock::utc;

const EXTRA_STYLE: &str = ".warn{background:#fff3cd;color:#7a5200}\
tr.corrupt td,td.corrupt{background:#fde2e2}tr.missing td,td.missing,tr.error td,td.error{background:#fff3cd}\
td.clean{background:#dff5df}#grid td{text-align:center}\
li.corrupt{color:#8b0000}li.missing,li.error{color:#7a5200}";

fn class(v: CutVerdict) -> &'static str {
    match v {
        CutVerdict::Clean => "clean",
        CutVerdict::Corrupt => "corrupt",
        CutVerdict::Missing => "missing",
        CutVerdict::Error => "error",
    }
}

/// The page.
pub fn render(rep: &Report, v: &CampaignVerdict) -> String {
    let mut s = String::new();
    let _ = write!(s, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>sqliosim campaign report</title><style>{STYLE}{EXTRA_STYLE}</style></head><body>\n<h1>sqliosim campaign report</h1>\n");
    let verdict_class = match v.code {
        0 => "pass",
        1 => "fail",
        _ => "warn",
    };
    let _ = writeln!(
        s,
        "<div class='verdict {verdict_class}' id='verdict'>{}</div>",
        esc(&v.line)
    );
    facts(&mut s, rep);
    grid(&mut s, rep);
    table(&mut s, &rep.rows);
    reasons(&mut s, &rep.rows);
    s.push_str("</body></html>\n");
    s
}

fn facts(s: &mut String, rep: &Report) {
    let c = &rep.campaign;
    let started = utc(c.started_us);
    let _ = writeln!(
        s,
        "<p id='campaign'>Campaign {}: {} host(s) × {} cycle(s); witness {}; started {}; cut command <code>{}</code>.</p>",
        esc(&c.dir.to_string_lossy()),
        c.hosts.len(),
        c.cycles,
        esc(c.witness.as_deref().unwrap_or("none")),
        esc(&started),
        esc(c.cut_command.as_deref().unwrap_or("-"))
    );
}

/// Hosts down, cycles across, each cell the verdict.
fn grid(s: &mut String, rep: &Report) {
    s.push_str("<h2>Hosts × cycles</h2><table id='grid'><tr><th class='l'>Host</th>");
    for k in 1..=rep.campaign.cycles {
        let _ = write!(s, "<th>{k}</th>");
    }
    s.push_str("</tr>\n");
    for host in &rep.campaign.hosts {
        let _ = write!(s, "<tr><td class='l n'>{}</td>", esc(host));
        for r in rep.rows.iter().filter(|r| &r.host == host) {
            let _ = write!(
                s,
                "<td class='{}'>{}</td>",
                class(r.verdict),
                r.verdict.word()
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

fn table(s: &mut String, rows: &[Row]) {
    s.push_str("<h2>Every cycle</h2><table id='campaign-table'><tr><th class='l'>Host</th><th>Cycle</th><th class='l'>Cut (UTC)</th><th class='l'>Verdict</th><th>In flight</th><th>Acked-unwitnessed</th><th>Owed</th><th>Lost</th><th>Torn</th><th>Allowed tears</th><th>Other</th><th class='l'>Unsafe shutdowns</th><th class='l'>Findings</th></tr>\n");
    for r in rows {
        let _ = writeln!(
            s,
            "<tr class='{}'><td class='l n'>{}</td><td>{}</td><td class='l n'>{}</td><td class='l n'>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class='l'>{}</td><td class='l'>{}</td></tr>",
            class(r.verdict),
            esc(&r.host),
            r.cycle,
            esc(&cut_time(r)),
            r.verdict.word(),
            opt(r.in_flight),
            acked(r),
            opt(r.pages_owed),
            r.lost,
            r.torn,
            opt(r.allowed_tears),
            r.other,
            esc(&shutdowns(r)),
            esc(&r.classes())
        );
    }
    let legend = esc(LEGEND).replace('\n', "<br>");
    let _ = writeln!(s, "</table>\n<p id='legend'>{legend}</p>");
}

fn reasons(s: &mut String, rows: &[Row]) {
    let marked: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.why.is_empty() || !r.notes.is_empty())
        .collect();
    if marked.is_empty() {
        return;
    }
    s.push_str("<h2>Why, and notes</h2><ul id='reasons'>\n");
    for r in marked {
        let who = format!("{} cycle {}", r.host, r.cycle);
        for why in &r.why {
            let _ = writeln!(
                s,
                "<li class='{}'>{} {}: {}</li>",
                class(r.verdict),
                esc(&who),
                r.verdict.word(),
                esc(why)
            );
        }
        for note in &r.notes {
            let _ = writeln!(s, "<li>{} note: {}</li>", esc(&who), esc(note));
        }
    }
    s.push_str("</ul>\n");
}
