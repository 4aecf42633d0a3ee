//! The self-contained HTML report: verdict, charts (inline SVG), tables, findings with links
//! to their dumps. No scripts, no external resources.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::findings::Finding;
use crate::stats::{Latency, OpTotals, Summary};

use crate::report::facts::sysinfo::SystemInfo;
use crate::report::readers::load::RunEvidence;
use crate::report::sinks::json::JsonReport;
use crate::report::views::charts::{
    depth_chart, findings_chart, html_escape as esc, percentile_chart, timeline_charts,
};
use crate::report::views::dump_links::DumpLinks;

/// Everything the page shows.
#[derive(Debug, Clone, Default)]
pub struct HtmlInput<'a> {
    /// Page title (the evidence file).
    pub title: String,
    /// The verdict line.
    pub verdict: String,
    /// Whether the run found integrity errors (colours the verdict).
    pub failed: bool,
    /// The run is still going or did not finish: no pass (coloured amber unless failed).
    pub open: bool,
    /// Statistics, if known.
    pub summary: Option<&'a Summary>,
    /// Findings logged in full.
    pub findings: &'a [Finding],
    /// Integrity errors by class (suppressed ones included).
    pub by_class: BTreeMap<String, u64>,
    /// Machine and storage, if known.
    pub system: Option<&'a SystemInfo>,
    /// What carried the run's disk I/O, if known.
    pub io_service: Option<&'a str>,
    /// Run start, microseconds since the Unix epoch (origin of the findings chart).
    pub origin_us: u64,
    /// Where the dump links point.
    pub links: DumpLinks,
    /// The JSON summary of the run, for the header (host, devices, times, seed, version,
    /// command line; "unknown" throughout without one).
    pub run: Option<&'a JsonReport>,
    /// Seconds from the chart's origin to the run's end (or last update): the findings
    /// chart's axis spans them.
    pub span_s: Option<f64>,
    /// The XML log's entries, shown as SQLIOSim's table at the end (none for a JSON summary).
    pub log: &'a [crate::report::readers::logparse::LogEntry],
}

/// The report of a run from its statistics and findings.
pub fn render(summary: &Summary, findings: &[Finding]) -> String {
    let mut by_class = BTreeMap::new();
    for f in findings {
        *by_class.entry(f.class.as_str().to_string()).or_insert(0) += 1;
    }
    let failed = !findings.is_empty();
    render_input(&HtmlInput {
        title: "sqliosim run".into(),
        verdict: if failed {
            format!("FAILED: {} integrity error(s)", findings.len())
        } else {
            "CLEAN: no integrity errors".into()
        },
        failed,
        open: false,
        summary: Some(summary),
        findings,
        by_class,
        system: None,
        io_service: None,
        origin_us: findings.iter().map(|f| f.time_us).min().unwrap_or(0),
        links: DumpLinks::Recorded,
        run: None,
        span_s: None,
        log: &[],
    })
}

/// The report of a log or JSON summary read back, its dump links made as `links` says.
pub fn render_loaded(l: &RunEvidence, links: DumpLinks) -> String {
    let json = l.json.as_ref();
    let first = l
        .findings
        .iter()
        .map(|f| f.time_us)
        .min()
        .unwrap_or(u64::MAX);
    // A finding cannot precede the start; if one does, the clocks disagree: use it.
    let origin_us = json.map_or(first, |j| j.started_us.min(first));
    // The axis spans the run from start to end, unless a finding precedes the start.
    let span_s = json
        .filter(|j| j.started_us == origin_us)
        .and_then(crate::report::views::html_header::duration);
    render_input(&HtmlInput {
        title: l.path.display().to_string(),
        verdict: crate::report::views::terminal::verdict(l),
        failed: l.integrity_errors() > 0,
        open: !l.complete,
        summary: l.summary.as_ref(),
        findings: &l.findings,
        by_class: l.by_class.clone(),
        system: json.and_then(|j| j.system.as_ref()),
        io_service: l.io_service.as_deref(),
        origin_us,
        links,
        run: json,
        span_s,
        log: &l.log,
    })
}

/// Long text cells (paths, verdicts, the command line: `td.l`) wrap anywhere rather than widen
/// the page: `overflow-wrap:anywhere` also lowers a cell's minimum width, so a table capped at
/// the page's width shrinks those columns instead of overflowing (a 1400 px window shows it
/// all). Numbers, headers and the short words of a column (`.n`: a time, a class) never break
/// ("Pa|ge", "1|0" in a narrow column read as garbage).
pub(crate) const STYLE: &str = "body{font-family:sans-serif;font-size:14px;margin:20px;color:#222}\
table{border-collapse:collapse;margin:8px 0 20px;max-width:100%}td.l{overflow-wrap:anywhere}\
td:not(.l),th,td.n{white-space:nowrap;overflow-wrap:normal}\
#findings{table-layout:auto;width:100%}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#eee}td.l,th.l{text-align:left}.pass{background:#dff5df;color:#135d13}.fail{background:#fde2e2;color:#8b0000}.open{background:#fff3cd;color:#7a5b00}\
.verdict{font-size:20px;font-weight:bold;padding:10px;border-radius:4px}.chart{margin:10px 0}";

/// The page.
pub fn render_input(inp: &HtmlInput) -> String {
    let mut s = String::new();
    let _ = write!(s, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>sqliosim report: {}</title><style>{STYLE}</style></head><body>\n", esc(&inp.title));
    let _ = writeln!(s, "<h1>sqliosim report</h1><p>{}</p>", esc(&inp.title));
    crate::report::views::html_header::render(&mut s, inp.run);
    let class = match (inp.failed, inp.open) {
        (true, _) => "fail",
        (false, true) => "open",
        (false, false) => "pass",
    };
    let _ = writeln!(
        s,
        "<div class='verdict {class}' id='verdict'>{}</div>",
        esc(&inp.verdict)
    );
    by_class_table(&mut s, &inp.by_class);
    let _ = writeln!(
        s,
        "<h2>Findings</h2><div class='chart'>{}</div>",
        findings_chart(inp.findings, inp.origin_us, inp.span_s)
    );
    let kernel = inp.run.and_then(|j| j.kernel_log.as_ref());
    findings_table(&mut s, inp.findings, &inp.links, kernel);
    if let Some(sum) = inp.summary {
        stats_section(&mut s, sum);
    } else {
        s.push_str("<p>No statistics in this file.</p>\n");
    }
    if let Some(b) = inp.run.and_then(|j| j.bench.as_ref()) {
        bench_table(&mut s, b);
    }
    if let Some(io) = inp.io_service {
        let _ = writeln!(s, "<p>I/O engine: {}</p>", esc(io));
    }
    if let Some(sys) = inp.system {
        system_table(&mut s, sys);
    }
    if !inp.log.is_empty() {
        s.push_str(&crate::report::views::log_view::section(
            inp.log, &inp.links,
        ));
    }
    s.push_str("</body></html>\n");
    s
}

fn by_class_table(s: &mut String, by: &BTreeMap<String, u64>) {
    if by.is_empty() {
        return;
    }
    s.push_str("<h2>Integrity errors by class</h2><table><tr><th class='l'>Class</th><th>Count</th></tr>\n");
    for (c, n) in by {
        let _ = writeln!(s, "<tr><td class='l'>{}</td><td>{n}</td></tr>", esc(c));
    }
    s.push_str("</table>\n");
}

fn stats_section(s: &mut String, sum: &Summary) {
    let _ = writeln!(s, "<h2>Throughput</h2>");
    if sum.timeline.is_empty() {
        s.push_str("<p>No timeline in this file (XML logs carry only the final summary).</p>\n");
    } else {
        for c in timeline_charts(&sum.timeline) {
            let _ = writeln!(s, "<div class='chart'>{c}</div>");
        }
    }
    depth_section(s, sum);
    let files: Vec<(String, Latency)> = sum
        .files
        .iter()
        .map(|f| (f.path.clone(), f.io.latency))
        .collect();
    let actors: Vec<(String, Latency)> = sum
        .actors
        .iter()
        .map(|a| (a.name.clone(), a.io.latency))
        .collect();
    let _ = writeln!(
        s,
        "<h2>Latency</h2><div class='chart'>{}</div>",
        percentile_chart("Latency percentiles per file", &files)
    );
    let _ = writeln!(
        s,
        "<div class='chart'>{}</div>",
        percentile_chart("Latency percentiles per actor", &actors)
    );
    let mut rows: Vec<(String, &OpTotals)> =
        sum.files.iter().map(|f| (f.path.clone(), &f.io)).collect();
    if let Some(o) = &sum.other {
        rows.push((crate::stats::OTHER_FILES.to_string(), o));
    }
    totals_table(s, "Per file", &rows);
    let rows: Vec<(String, &OpTotals)> =
        sum.actors.iter().map(|a| (a.name.clone(), &a.io)).collect();
    totals_table(s, "Per actor", &rows);
}

/// The depth the device saw: the chart over time, and per file and phase the most requests in
/// flight at once and the time-weighted mean.
fn depth_section(s: &mut String, sum: &Summary) {
    let rows: Vec<(&str, &crate::stats::DepthSummary)> = sum
        .files
        .iter()
        .filter_map(|f| Some((f.path.as_str(), f.depth.as_ref()?)))
        .collect();
    let chart = depth_chart(&sum.timeline);
    if rows.is_empty() && chart.is_none() {
        return;
    }
    s.push_str("<h2>Requests in flight</h2>\n");
    if let Some(c) = chart {
        let _ = writeln!(s, "<div class='chart'>{c}</div>");
    }
    s.push_str("<table><tr><th class='l'>File</th><th class='l'>Phase</th><th>Most at once</th><th>Mean (time-weighted)</th><th>Seconds</th></tr>\n");
    for (path, d) in rows {
        let _ = writeln!(s, "<tr><td class='l'>{}</td><td class='l'>whole run</td><td>{}</td><td>{:.2}</td><td></td></tr>", esc(path), d.max, d.mean);
        for p in &d.phases {
            let _ = writeln!(s, "<tr><td class='l'>{}</td><td class='l'>{}</td><td>{}</td><td>{:.2}</td><td>{:.1}</td></tr>", esc(path), esc(&p.phase), p.max, p.mean, p.seconds);
        }
    }
    s.push_str("</table>\n");
}

fn totals_table(s: &mut String, title: &str, rows: &[(String, &OpTotals)]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(s, "<h3>{title}</h3><table><tr><th class='l'>Name</th><th>Reads</th><th>Scatter reads</th><th>Writes</th><th>Gather writes</th><th>Syncs</th><th>Errors</th><th>IOPS</th><th>MB/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr>");
    for (name, t) in rows {
        let l = &t.latency;
        let _ = write!(s, "<tr><td class='l'>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.2}</td>", esc(name), t.reads, t.scatter_reads, t.writes, t.gather_writes, t.syncs, t.errors, t.iops, t.mb_per_s);
        for us in [l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us] {
            let _ = write!(s, "<td>{:.3}</td>", us / 1000.0);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

/// The findings, each followed by a row of the kernel lines near its time when the run's
/// kernel log has any (`tr.kernel`, the window of [`crate::report::views::forensics::beside`]).
fn findings_table(
    s: &mut String,
    findings: &[Finding],
    links: &DumpLinks,
    kernel: Option<&crate::report::facts::kmsg::KernelLog>,
) {
    if findings.is_empty() {
        s.push_str("<p>No findings.</p>\n");
        return;
    }
    s.push_str("<table id='findings'><tr><th>#</th><th class='l'>Time (UTC)</th><th class='l'>Class</th><th class='l'>File</th><th>Page</th><th>Offset</th><th class='l'>Verdict</th><th>Re-reads</th><th class='l'>Dump</th></tr>\n");
    for f in findings {
        let dump = f.dump.as_ref().map_or_else(String::new, |d| {
            let href = links.href(d);
            format!("<a href='{}'>{}</a>", esc(&href), esc(&href))
        });
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td class='l n'>{}</td><td class='l n'>{}</td><td class='l'>{}</td><td>{}</td><td>0x{:X}</td><td class='l'>{}</td><td>{}{}</td><td class='l'>{dump}</td></tr>",
            f.seq,
            crate::report::sinks::clock::iso_utc(f.time_us),
            f.class.as_str(),
            esc(&f.path.display().to_string()),
            f.page_id,
            f.offset,
            esc(&crate::report::sinks::finding_xml::what(f)),
            f.retries.len(),
            if f.persistent { " (persistent)" } else { "" }
        );
        let near = kernel.map(|k| crate::report::views::forensics::beside(k, f));
        if let Some(near) = near.filter(|v| !v.is_empty()) {
            let lines: Vec<String> = near.iter().map(|l| esc(l)).collect();
            let _ = writeln!(
                s,
                "<tr class='kernel'><td></td><td class='l' colspan='8'>Kernel lines ({}):<br><code>{}</code></td></tr>",
                crate::report::views::forensics::WINDOW_WORDS,
                lines.join("<br>")
            );
        }
    }
    s.push_str("</table>\n");
}

/// The capacity run beside the simulation (`run --bench`): its options and headline figures.
fn bench_table(s: &mut String, b: &crate::report::sinks::bench_figures::BenchFigures) {
    s.push_str("<h2 id='bench'>Capacity run beside the simulation</h2><table>\n");
    let ms = |us: Option<f64>| us.map_or_else(|| "-".into(), |u| format!("{:.3}", u / 1000.0));
    let rows = [
        ("Options", format!("sqliosim bench {}", b.args)),
        ("Outcome", b.outcome.clone()),
        ("Figures", b.describe()),
        ("Combination", b.combination.clone()),
        ("IOPS", format!("{:.0}", b.iops)),
        ("MB/s", format!("{:.1}", b.mb_per_s)),
        ("p99 ms", ms(b.p99_us)),
        ("max ms", ms(b.max_us)),
        ("Errors", b.errors.to_string()),
    ];
    for (k, v) in rows {
        let _ = writeln!(
            s,
            "<tr><th class='l'>{k}</th><td class='l'>{}</td></tr>",
            esc(&v)
        );
    }
    s.push_str("</table>\n");
}

fn system_table(s: &mut String, sys: &SystemInfo) {
    s.push_str("<h2>System</h2><table>\n");
    for line in crate::report::facts::sysinfo::describe(sys) {
        let _ = writeln!(s, "<tr><td class='l'>{}</td></tr>", esc(&line));
    }
    s.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn text_and_quoted_attributes_are_escaped() {
        assert_eq!(
            esc(r#"<a href='x' title="y">R&D</a>"#),
            "&lt;a href=&apos;x&apos; title=&quot;y&quot;&gt;R&amp;D&lt;/a&gt;"
        );
        assert_eq!(esc("/data/ok-path_1.mdx"), "/data/ok-path_1.mdx");
    }
}
