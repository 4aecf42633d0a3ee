//! The self-contained fleet page: verdict, corruption lines, bars of IOPS and p99 per host and
//! device (corrupt hosts red, outliers orange, the fleet median as a line), the latency
//! distributions overlaid on the fleet's merged one, the fleet table, the outlier rule, and
//! what did not finish or could not be read. No scripts, no external resources.

use std::fmt::Write;

use crate::report::views::charts::html_escape as esc;
use crate::report::views::html::STYLE;
use crate::stats::LatencyHistogram;

use super::charts::{bars, distributions, Bar, Mark, MAX_CURVES};
use super::merge::Fleet;
use super::row::{HostVerdict, LatencySource, Row};
use super::verdict::FleetVerdict;

const EXTRA_STYLE: &str =
    ".warn{background:#fff3cd;color:#7a5200}tr.corrupt td{background:#fde2e2}\
tr.outlier td{background:#fff0d9}tr.unfinished td{background:#fff8e1}\
td.w{overflow-wrap:normal;white-space:nowrap}";

fn label(r: &Row) -> String {
    format!("{} ({})", r.name, r.device.name)
}

/// Bar names: the host alone when no host has several devices.
fn bar_label(f: &Fleet, r: &Row) -> String {
    match f.rows.iter().filter(|x| x.name == r.name).count() {
        1 => r.name.clone(),
        _ => label(r),
    }
}

/// The page.
pub fn render(f: &Fleet, v: &FleetVerdict) -> String {
    let mut s = String::new();
    let _ = write!(s, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>sqliosim fleet report</title><style>{STYLE}{EXTRA_STYLE}</style></head><body>\n<h1>sqliosim fleet report</h1>\n");
    let class = match v.code {
        0 => "pass",
        1 => "fail",
        _ => "warn",
    };
    let _ = writeln!(
        s,
        "<div class='verdict {class}' id='verdict'>{}</div>",
        esc(&v.line)
    );
    let utc = |us| crate::report::sinks::clock::utc(Some(us));
    let made = utc(crate::report::sinks::clock::now_us());
    let _ = match f.span_us {
        Some((from, to)) => writeln!(
            s,
            "<p id='when'>Runs from {} to {}; this page made {made}.</p>",
            utc(from),
            utc(to)
        ),
        None => writeln!(
            s,
            "<p id='when'>This page made {made} (no run here records its dates).</p>"
        ),
    };
    corruption(&mut s, f);
    totals(&mut s, f);
    charts(&mut s, f);
    table(&mut s, f);
    outliers(&mut s, f);
    problems(&mut s, f);
    s.push_str("</body></html>\n");
    s
}

fn corruption(s: &mut String, f: &Fleet) {
    let corrupt: Vec<&Row> = f.rows.iter().filter(|r| r.findings() > 0).collect();
    if corrupt.is_empty() {
        return;
    }
    s.push_str("<ul id='corruption'>\n");
    for r in corrupt {
        let _ = writeln!(
            s,
            "<li class='fail'>{}</li>",
            esc(&super::table::corruption_line(r))
        );
    }
    s.push_str("</ul>\n");
}

fn totals(s: &mut String, f: &Fleet) {
    let t = &f.totals;
    let _ = write!(
        s,
        "<p id='totals'>{} run(s) on {} host(s): {} I/Os, IOPS {:.1}, MB/s {:.2} (sums over the hosts).",
        t.runs, t.hosts, t.ops, t.iops, t.mb_per_s
    );
    match t.hist.as_ref().filter(|h| h.count() > 0) {
        Some(h) => {
            let l = h.latency();
            let _ = write!(s, " Fleet latency from the merged histograms of {} of {} run(s): p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms.", t.runs_merged, t.runs, l.p50_us / 1e3, l.p99_us / 1e3, l.p999_us / 1e3);
        }
        None => s.push_str(" No run carries a latency histogram: no fleet percentiles."),
    }
    if !t.not_mergeable.is_empty() {
        let _ = write!(
            s,
            " {} run(s) without a histogram are counted but not in the fleet percentiles.",
            t.not_mergeable.len()
        );
    }
    s.push_str("</p>\n");
}

fn mark(r: &Row, tag: &str) -> Mark {
    if r.verdict() == HostVerdict::Corruption {
        Mark::Corrupt
    } else if r.outlier.contains(&tag) {
        Mark::Outlier
    } else {
        Mark::Normal
    }
}

fn median_of(f: &Fleet, name: &str) -> Option<f64> {
    f.outliers
        .measures
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.median)
}

/// Bars of IOPS and p99 per row, then the latency distributions.
fn charts(s: &mut String, f: &Fleet) {
    let iops: Vec<Bar> = f
        .rows
        .iter()
        .filter(|r| r.ops > 0)
        .map(|r| Bar {
            label: bar_label(f, r),
            value: r.iops,
            mark: mark(r, "iops"),
        })
        .collect();
    let p99: Vec<Bar> = f
        .rows
        .iter()
        .filter(|r| r.latency_source != LatencySource::None)
        .map(|r| Bar {
            label: bar_label(f, r),
            value: r.latency.p99_us / 1000.0,
            mark: mark(r, "p99"),
        })
        .collect();
    s.push_str("<h2>Per host and device</h2><p>Red: found corruption; orange: outlier on that measure; line: fleet median.</p>\n");
    let _ = writeln!(
        s,
        "<div class='chart' id='chart-iops'>{}</div>",
        bars(
            "IOPS per host and device",
            "IOPS",
            &iops,
            median_of(f, "iops")
        )
    );
    let _ = writeln!(
        s,
        "<div class='chart' id='chart-p99'>{}</div>",
        bars(
            "p99 latency per host and device",
            "p99 (ms)",
            &p99,
            median_of(f, "p99_ms")
        )
    );
    latency_chart(s, f);
}

/// The distributions of the fleet and of up to MAX_CURVES rows, overlaid.
fn latency_chart(s: &mut String, f: &Fleet) {
    // Corrupt and outlier rows first, so they are among the curves drawn.
    let mut picked: Vec<&Row> = f.rows.iter().filter(|r| r.hist.is_some()).collect();
    picked.sort_by_key(|r| (r.verdict() != HostVerdict::Corruption, r.outlier.is_empty()));
    let fleet = f.totals.hist.as_ref();
    let mut series: Vec<(String, &LatencyHistogram)> = fleet
        .map(|h| ("fleet (merged)".to_string(), h))
        .into_iter()
        .collect();
    series.extend(
        picked
            .iter()
            .take(MAX_CURVES)
            .filter_map(|r| Some((label(r), r.hist.as_ref()?))),
    );
    let more = picked.len().saturating_sub(MAX_CURVES);
    let _ = writeln!(
        s,
        "<h2>Latency distributions</h2><div class='chart' id='chart-latency'>{}</div>",
        distributions(
            "Latency by percentile: fleet (merged histograms) and hosts",
            &series
        )
    );
    if more > 0 {
        let _ = writeln!(s, "<p>{more} more host/device curve(s) not drawn (corrupt and outlier rows are drawn first; the fleet curve includes every histogram).</p>");
    }
}

fn table(s: &mut String, f: &Fleet) {
    s.push_str("<h2>Fleet</h2><table id='fleet-table'><tr><th class='l'>Host</th><th class='l'>Device</th><th class='l'>Model / serial / firmware</th><th class='l'>Verdict</th><th>IOPS</th><th>MB/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>Throttled</th><th>Long I/Os</th><th class='l'>Outlier</th><th class='l'>Findings</th><th class='l'>Bench (run --bench)</th></tr>\n");
    for r in &f.rows {
        let class = match (r.verdict(), r.outlier.is_empty()) {
            (HostVerdict::Corruption, _) => "corrupt",
            (_, false) => "outlier",
            (HostVerdict::Unfinished, _) => "unfinished",
            _ => "clean",
        };
        let l = &r.latency;
        let star = if r.latency_source == LatencySource::Merged {
            ""
        } else {
            "*"
        };
        let lat = |us: f64| match r.latency_source {
            LatencySource::None => "-".to_string(),
            _ => format!("{:.3}{star}", us / 1000.0),
        };
        let d = &r.device;
        let _ = writeln!(
            s,
            "<tr class='{class}'><td class='l w'>{}</td><td class='l w'>{}</td><td class='l'>{} / {} / {}</td><td class='l w'>{}</td><td>{:.1}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class='l'>{}</td><td class='l'>{}</td><td class='l'>{}</td></tr>",
            esc(&r.name), esc(&d.name), esc(&d.model), esc(&d.serial), esc(&d.firmware),
            r.verdict().word(), r.iops, r.mb_per_s, lat(l.p50_us), lat(l.p99_us), lat(l.p999_us),
            r.throttled, r.long_ios.map_or_else(|| "-".into(), |n| n.to_string()),
            r.outlier.join(", "), esc(&r.classes()), esc(&bench_cell(r))
        );
    }
    s.push_str("</table>\n");
    // The footnote only where a row carries its mark.
    if f.rows.iter().any(|r| {
        matches!(
            r.latency_source,
            LatencySource::Recorded | LatencySource::Partial
        )
    }) {
        s.push_str("<p>* not mergeable: no latency histogram in that run (schema /1 or XML log): percentiles as recorded, left out of the fleet percentiles.</p>\n");
    }
}

/// The row's capacity runs beside the simulation, in words ("-" without one).
fn bench_cell(r: &Row) -> String {
    if r.bench.is_empty() {
        return "-".into();
    }
    let v: Vec<String> = r.bench.iter().map(|(_, b)| b.describe()).collect();
    v.join("; ")
}

fn outliers(s: &mut String, f: &Fleet) {
    let _ = writeln!(
        s,
        "<h2>Outliers</h2><p id='outlier-rule'>Rule: {}.</p><ul id='outliers'>",
        esc(&f.outliers.rule)
    );
    for m in &f.outliers.measures {
        let who: Vec<String> = m
            .flagged
            .iter()
            .map(|x| {
                format!(
                    "{} ({}) {:.3} ({:+.1} MAD)",
                    x.host, x.device, x.value, x.deviations
                )
            })
            .collect();
        let who = if who.is_empty() {
            "none".to_string()
        } else {
            who.join("; ")
        };
        let _ = writeln!(
            s,
            "<li>{}: median {:.3}, MAD {:.3}, unit {:.3}: {}</li>",
            m.name,
            m.median,
            m.mad,
            m.scale,
            esc(&who)
        );
    }
    for why in &f.outliers.not_analysed {
        let _ = writeln!(s, "<li>not analysed: {}</li>", esc(why));
    }
    s.push_str("</ul>\n");
}

fn problems(s: &mut String, f: &Fleet) {
    let unfinished: Vec<String> = f
        .rows
        .iter()
        .flat_map(|r| {
            r.unfinished
                .iter()
                .map(move |w| format!("{}: {w}", label(r)))
        })
        .collect();
    if unfinished.is_empty() && f.unreadable.is_empty() && f.missing.is_empty() {
        return;
    }
    s.push_str("<h2>Missing, did not finish or could not be read</h2><ul id='problems'>\n");
    for name in &f.missing {
        let why = super::expect::MISSING_WHY;
        let _ = writeln!(s, "<li class='fail'>MISSING {}: {why}</li>", esc(name));
    }
    for u in unfinished {
        let _ = writeln!(s, "<li>UNFINISHED {}</li>", esc(&u));
    }
    for p in &f.unreadable {
        let _ = writeln!(
            s,
            "<li>UNREADABLE {}: {}</li>",
            esc(&p.path.display().to_string()),
            esc(&p.reason)
        );
    }
    s.push_str("</ul>\n");
}
