//! The terminal fleet report: corruption lines, one table row per host and device, fleet
//! totals from merged histograms, outliers with their rule, unfinished and unreadable results,
//! and the verdict.

use std::fmt::Write;

use super::merge::Fleet;
use super::outliers::Measure;
use super::row::{classes, LatencySource, Row};
use super::verdict::FleetVerdict;

/// At most this many paths are listed in one line of skipped files or unmerged runs.
const LIST_MAX: usize = 10;

/// The whole terminal report.
pub fn render(f: &Fleet, v: &FleetVerdict) -> String {
    let mut s = String::new();
    let t = &f.totals;
    let _ = write!(
        s,
        "sqliosim fleet report: {} run(s) on {} host(s), {} host/device row(s); {} unreadable, {} skipped",
        t.runs,
        t.hosts,
        f.rows.len(),
        f.unreadable.len(),
        f.skipped.len()
    );
    let _ = match f.expected {
        Some(n) => writeln!(s, "; {n} host(s) expected, {} missing", f.missing.len()),
        None => writeln!(s),
    };
    for r in f.rows.iter().filter(|r| r.findings() > 0) {
        let _ = writeln!(s, "{}", corruption_line(r));
    }
    s.push('\n');
    table(&mut s, &f.rows);
    bench_lines(&mut s, &f.rows);
    totals(&mut s, f);
    outliers(&mut s, f);
    problems(&mut s, f);
    let _ = writeln!(s, "\n{}", v.line);
    s
}

/// `CORRUPTION on host3 (/dev/loop7): 12 finding(s) (lost_write 8, torn_write 4) in
/// hosts/node3/sqliosim.log.json (dumps …, bundle …)`: each run of the row that found
/// corruption, with where its dumps and bundle are, so they can be found among merged runs.
pub fn corruption_line(r: &Row) -> String {
    let runs: Vec<String> = r
        .corrupt_runs
        .iter()
        .map(|c| {
            let n = match r.corrupt_runs.len() {
                1 => String::new(),
                _ => format!("{} finding(s) ", c.findings),
            };
            format!("{n}in {} ({})", c.path.display(), c.evidence)
        })
        .collect();
    format!(
        "CORRUPTION on {} ({}): {} finding(s) ({}) {}",
        r.name,
        r.device.name,
        r.findings(),
        r.classes(),
        runs.join("; ")
    )
    .trim_end()
    .to_string()
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// The widest the host and device columns are padded to: a longer name is printed whole and
/// pushes its row out (a width over 65,535 made `format!` panic).
const MAX_NAME_WIDTH: usize = 64;

fn table(s: &mut String, rows: &[Row]) {
    let hw = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let hw = hw.clamp(4, MAX_NAME_WIDTH);
    let dw = rows.iter().map(|r| r.device.name.len()).max().unwrap_or(0);
    let dw = dw.clamp(6, MAX_NAME_WIDTH);
    let _ = writeln!(
        s,
        "{:<hw$}  {:<dw$}  {:<10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {:<8} Findings",
        "Host",
        "Device",
        "Verdict",
        "IOPS",
        "MB/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "Throttled",
        "Long I/Os",
        "Outlier"
    );
    for r in rows {
        let l = &r.latency;
        let (p50, p99, p999) = match r.latency_source {
            LatencySource::None => ("-".into(), "-".into(), "-".into()),
            LatencySource::Merged => (ms(l.p50_us), ms(l.p99_us), ms(l.p999_us)),
            _ => (
                format!("{}*", ms(l.p50_us)),
                format!("{}*", ms(l.p99_us)),
                format!("{}*", ms(l.p999_us)),
            ),
        };
        let long = r.long_ios.map_or_else(|| "-".into(), |n| n.to_string());
        let outlier = if r.outlier.is_empty() {
            "-".to_string()
        } else {
            r.outlier.join(",")
        };
        let _ = writeln!(
            s,
            "{:<hw$}  {:<dw$}  {:<10} {:>10.1} {:>9.2} {p50:>9} {p99:>9} {p999:>9} {:>9} {long:>9}  {outlier:<8} {}",
            r.name,
            r.device.name,
            r.verdict().word(),
            r.iops,
            r.mb_per_s,
            r.throttled,
            r.classes()
        );
    }
    if rows.iter().any(|r| {
        matches!(
            r.latency_source,
            LatencySource::Recorded | LatencySource::Partial
        )
    }) {
        s.push_str("* not mergeable: the run has no latency histogram (schema /1 summary or XML log); its percentiles are as it recorded them (or merged from its row's runs that have one) and are left out of the fleet percentiles.\n");
    }
    s.push_str("Long I/Os: I/Os outstanding for more than 15 s, from each run's XML log (- where no log was found beside the summary).\n");
}

/// The capacity runs beside the simulation (`run --bench`), one line each under its row.
pub(super) fn bench_lines(s: &mut String, rows: &[Row]) {
    let lines: Vec<String> = rows
        .iter()
        .flat_map(|r| r.bench.iter().map(move |(p, b)| (r, p, b)))
        .map(|(r, p, b)| {
            format!(
                "  {} {}: {} [sqliosim bench {}; {}]",
                r.name,
                r.device.name,
                b.describe(),
                b.args,
                p.display()
            )
        })
        .collect();
    if !lines.is_empty() {
        s.push_str("\nCapacity runs beside the simulation (run --bench):\n");
        for l in lines {
            let _ = writeln!(s, "{l}");
        }
    }
}

fn list(paths: &[impl AsRef<std::path::Path>]) -> String {
    let mut v: Vec<String> = paths
        .iter()
        .take(LIST_MAX)
        .map(|p| p.as_ref().display().to_string())
        .collect();
    if paths.len() > LIST_MAX {
        v.push(format!("and {} more", paths.len() - LIST_MAX));
    }
    v.join(", ")
}

fn totals(s: &mut String, f: &Fleet) {
    let t = &f.totals;
    let _ = writeln!(
        s,
        "\nFleet totals: {} run(s) on {} host(s): {} I/Os, IOPS {:.1}, MB/s {:.2} (sums over the hosts), throttled {}, long I/Os {}, findings {} ({})",
        t.runs, t.hosts, t.ops, t.iops, t.mb_per_s, t.throttled, t.long_ios,
        t.by_class.values().sum::<u64>(), classes(&t.by_class)
    );
    match &t.hist {
        Some(h) if h.count() > 0 => {
            let l = h.latency();
            let _ = writeln!(
                s,
                "Fleet latency from the merged histograms of {} of {} run(s) ({} I/Os): p50 {} ms, p99 {} ms, p99.9 {} ms, max {} ms",
                t.runs_merged, t.runs, l.count, ms(l.p50_us), ms(l.p99_us), ms(l.p999_us), ms(l.max_us)
            );
        }
        _ => s.push_str("Fleet latency: no run carries a latency histogram (schema /2), so no fleet percentiles (percentiles are never averaged).\n"),
    }
    if !t.not_mergeable.is_empty() {
        let _ = writeln!(
            s,
            "Not mergeable: {} run(s) without a latency histogram, counted in the totals but not in the fleet percentiles: {}",
            t.not_mergeable.len(),
            list(&t.not_mergeable)
        );
    }
}

fn measure_line(m: &Measure) -> String {
    let what = if m.name == "iops" { "IOPS" } else { "p99 ms" };
    let head = format!(
        "  {what}: median {:.3}, MAD {:.3}, unit {:.3} over {} host/device(s): ",
        m.median, m.mad, m.scale, m.rows
    );
    if m.flagged.is_empty() {
        return format!("{head}none");
    }
    let mut v: Vec<String> = m
        .flagged
        .iter()
        .take(LIST_MAX * 2)
        .map(|f| {
            format!(
                "{} ({}) {:.3} ({:+.1} MAD)",
                f.host, f.device, f.value, f.deviations
            )
        })
        .collect();
    if m.flagged.len() > LIST_MAX * 2 {
        let more = m.flagged.len() - LIST_MAX * 2;
        v.push(format!(
            "and {more} more (all of them in --json and --html)"
        ));
    }
    format!("{head}{} outlier(s): {}", m.flagged.len(), v.join("; "))
}

fn outliers(s: &mut String, f: &Fleet) {
    let _ = writeln!(s, "\nOutliers: {}.", f.outliers.rule);
    for m in &f.outliers.measures {
        let _ = writeln!(s, "{}", measure_line(m));
    }
    for why in &f.outliers.not_analysed {
        let _ = writeln!(s, "  not analysed: {why}");
    }
}

fn problems(s: &mut String, f: &Fleet) {
    let unfinished: Vec<&Row> = f.rows.iter().filter(|r| !r.unfinished.is_empty()).collect();
    if !unfinished.is_empty() || !f.unreadable.is_empty() || !f.missing.is_empty() {
        s.push('\n');
    }
    for r in unfinished {
        for why in &r.unfinished {
            let _ = writeln!(s, "UNFINISHED on {} ({}): {why}", r.name, r.device.name);
        }
    }
    for name in &f.missing {
        let _ = writeln!(s, "MISSING {name}: {}", super::expect::MISSING_WHY);
    }
    for p in &f.unreadable {
        let _ = writeln!(s, "UNREADABLE {}: {}", p.path.display(), p.reason);
    }
    if !f.skipped.is_empty() {
        let paths: Vec<&std::path::PathBuf> = f.skipped.iter().map(|p| &p.path).collect();
        let _ = writeln!(
            s,
            "\nSkipped {} file(s) (not run results, or logs whose JSON summary was read): {}",
            f.skipped.len(),
            list(&paths)
        );
    }
    for n in &f.notes {
        let _ = writeln!(s, "Note: {n}");
    }
}
