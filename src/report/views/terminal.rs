//! The terminal summary of `sqliosim report`: the verdict (with the last status of a run not
//! finished), the findings, the other errors and warnings, and the files' figures.

use std::fmt::Write;

use crate::report::readers::load::{InputKind, RunEvidence};

/// The verdict line: CLEAN, FAILED, RUNNING or UNFINISHED and why (see [`crate::report::readers::runstate`]).
pub fn verdict(l: &RunEvidence) -> String {
    let state = crate::report::readers::runstate::of(l, crate::report::sinks::clock::now_us());
    crate::report::readers::runstate::verdict_line(l, &state)
}

/// The whole terminal summary.
pub fn render(l: &RunEvidence) -> String {
    let mut s = String::new();
    let kind = match l.kind {
        InputKind::XmlLog => "XML log",
        InputKind::Json => "JSON summary",
    };
    let _ = writeln!(s, "sqliosim report: {} ({kind})", l.path.display());
    let state = crate::report::readers::runstate::of(l, crate::report::sinks::clock::now_us());
    let _ = writeln!(
        s,
        "{}",
        crate::report::readers::runstate::verdict_line(l, &state)
    );
    let status = l.json.as_ref().and_then(|j| j.status.as_ref());
    if let (Some(st), false) = (
        status,
        state == crate::report::readers::runstate::RunState::Finished,
    ) {
        let _ = writeln!(s, "Last status: {}", st.describe());
    }
    if let Some(j) = &l.json {
        let seed = j.seed.map_or_else(|| "unknown".into(), |v| format!("{v}"));
        let _ = writeln!(s, "Tool {} {}, seed {seed}", j.tool.name, j.tool.version);
    }
    if let Some(e) = &l.io_service {
        let _ = writeln!(s, "I/O engine: {e}");
    }
    if !l.by_class.is_empty() {
        s.push_str("\nIntegrity errors by class:\n");
        for (class, n) in &l.by_class {
            let _ = writeln!(s, "  {class:<20} {n}");
        }
    }
    let kernel = l.json.as_ref().and_then(|j| j.kernel_log.as_ref());
    if kernel.is_some_and(|k| !k.lines.is_empty()) && !l.findings.is_empty() {
        let _ = writeln!(
            s,
            "  (under each finding, the kernel lines {})",
            crate::report::views::forensics::WINDOW_WORDS
        );
    }
    for f in l.findings.iter().take(20) {
        let _ = writeln!(
            s,
            "  #{:<4} {} page {} offset 0x{:X}: {}",
            f.seq,
            f.path.display(),
            f.page_id,
            f.offset,
            crate::report::sinks::finding_xml::what(f)
        );
        for line in kernel.map_or_else(Vec::new, |k| crate::report::views::forensics::beside(k, f))
        {
            let _ = writeln!(s, "         kernel {line}");
        }
    }
    if l.findings.len() > 20 {
        let _ = writeln!(s, "  … and {} more", l.findings.len() - 20);
    }
    let _ = writeln!(
        s,
        "\nOther errors: {}, warnings: {}",
        l.other_error_count(),
        l.warning_count()
    );
    for e in l.other_errors.iter().take(10) {
        let _ = writeln!(s, "  {e}");
    }
    files_table(&mut s, l);
    if let Some(b) = l.json.as_ref().and_then(|j| j.bench.as_ref()) {
        let _ = writeln!(
            s,
            "\nCapacity run beside the simulation (sqliosim bench {}): {}",
            b.args,
            b.describe()
        );
    }
    s
}

fn files_table(s: &mut String, l: &RunEvidence) {
    let Some(sum) = &l.summary else {
        s.push_str("\nNo statistics in this file.\n");
        return;
    };
    const OTHER: &str = "other files (streams, copies, tempdb, snapshots)";
    let mut rows: Vec<(&str, &crate::stats::OpTotals)> =
        sum.files.iter().map(|f| (f.path.as_str(), &f.io)).collect();
    if let Some(o) = &sum.other {
        rows.push((OTHER, o));
    }
    // The first column as wide as the longest name, so long paths keep the columns aligned.
    let w = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(40);
    let _ = writeln!(
        s,
        "\n{:<w$} {:>10} {:>10} {:>9} {:>8} {:>9} {:>9} {:>9}",
        "File", "Reads", "Writes", "IOPS", "MB/s", "p50 ms", "p99 ms", "max ms"
    );
    for (name, io) in rows {
        let _ = writeln!(
            s,
            "{:<w$} {:>10} {:>10} {:>9.1} {:>8.2} {:>9.3} {:>9.3} {:>9.3}",
            name,
            io.reads + io.scatter_reads,
            io.writes + io.gather_writes,
            io.iops,
            io.mb_per_s,
            io.latency.p50_us / 1000.0,
            io.latency.p99_us / 1000.0,
            io.latency.max_us / 1000.0
        );
    }
}
