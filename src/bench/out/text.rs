//! Console report of `sqliosim bench`: a detailed block per run, a table for sweeps, and the
//! saturation points.

use crate::bench::latency::{LatencySummary, PERCENTILES};
use crate::bench::summary::BenchSummary;
use crate::bench::sweep::{CellResult, Saturation};
use std::fmt::Write;

fn kib(bs: u32) -> String {
    if bs.is_multiple_of(1024) {
        format!("{} KiB", bs / 1024)
    } else {
        format!("{bs} B")
    }
}

fn cell(l: Option<&LatencySummary>, f: &dyn Fn(&LatencySummary) -> f64) -> String {
    l.map(|l| format!("{:>12.1}", f(l)))
        .unwrap_or_else(|| format!("{:>12}", "N/A"))
}

/// The header lines that state what was measured and how honestly.
pub fn describe(s: &BenchSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} {} {}, {} thread(s) x {} outstanding (queue depth {}), engine {}, {}{}",
        kib(s.block_size),
        s.pattern,
        s.rw_name(),
        s.threads,
        s.outstanding,
        s.queue_depth,
        s.engine,
        if s.direct {
            "direct I/O"
        } else {
            "buffered I/O"
        },
        if s.write_through {
            " + write-through"
        } else {
            ""
        },
    );
    if !s.engine_why.is_empty() {
        let _ = writeln!(o, "engine {}: {}", s.engine, s.engine_why);
    }
    for t in &s.targets {
        let d = &t.direct_io;
        let _ = writeln!(
            o,
            "file {}: {} MiB on {}, direct I/O {}{}",
            t.path,
            t.size >> 20,
            d.filesystem,
            if !d.requested {
                "not requested"
            } else if d.honoured {
                "honoured"
            } else {
                "NOT honoured"
            },
            if d.dio_mem_align > 0 {
                format!(
                    " (DIOALIGN mem {} / offset {})",
                    d.dio_mem_align, d.dio_offset_align
                )
            } else {
                String::new()
            }
        );
    }
    o
}

/// The detailed report of one run.
pub fn run_report(s: &BenchSummary) -> String {
    let mut o = describe(s);
    let stopped = if s.interrupted { " (interrupted)" } else { "" };
    let _ = writeln!(o, "measured {:.2} s{stopped}", s.measured_s);
    let _ = writeln!(
        o,
        "\n        IOPS        MB/s       MiB/s   CPU us/IO      errors"
    );
    let _ = writeln!(
        o,
        "{:>12.2}{:>12.2}{:>12.2}{:>12.2}{:>12}",
        s.iops, s.mb_per_s, s.mib_per_s, s.cpu_us_per_io, s.errors
    );
    o.push_str(&latency_table(s));
    let line: Vec<String> = s.timeline.iter().map(u64::to_string).collect();
    let _ = writeln!(o, "\nI/Os per second: {}", line.join(" "));
    if let Some(e) = &s.first_error {
        let _ = writeln!(o, "ERRORS: {} failed I/O(s); first: {e}", s.errors);
    }
    if s.verify_failures > 0 {
        let _ = writeln!(
            o,
            "VERIFY: {} read(s) did not match their stamp",
            s.verify_failures
        );
        for m in &s.verify_samples {
            let _ = writeln!(o, "  {m}");
        }
    }
    for w in &s.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

/// Read / write / total latency from min through the nines to max, in microseconds.
fn latency_table(s: &BenchSummary) -> String {
    let cols = [
        s.read_latency.as_ref(),
        s.write_latency.as_ref(),
        s.latency.as_ref(),
    ];
    let row = |name: &str, f: &dyn Fn(&LatencySummary) -> f64| {
        let cells: String = cols.iter().map(|c| cell(*c, f)).collect();
        format!("{name:<8}{cells}\n")
    };
    let mut o = String::from("\nlatency (us)        read       write       total\n");
    o.push_str(&row("min", &|l| l.min_us));
    o.push_str(&row("avg", &|l| l.avg_us));
    for (i, (_, name)) in PERCENTILES.iter().enumerate() {
        o.push_str(&row(name, &|l| l.percentiles[i].1));
    }
    o.push_str(&row("max", &|l| l.max_us));
    o
}

/// The table of a sweep, one line per combination.
pub fn sweep_table(cells: &[CellResult]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:>7} {:<10} {:<6} {:>4} {:>4} {:>5} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "block",
        "pattern",
        "rw",
        "thr",
        "out",
        "QD",
        "IOPS",
        "MB/s",
        "avg us",
        "p50 us",
        "p99 us",
        "p99.9 us",
        "spread%",
        "CPUus/IO"
    );
    for c in cells {
        let l = c.latency.as_ref();
        let p = |q: f64| l.and_then(|l| l.at(q)).unwrap_or(0.0);
        let _ = writeln!(
            o,
            "{:>7} {:<10} {:<6} {:>4} {:>4} {:>5} {:>11.2} {:>9.2} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8.1} {:>8.2}",
            kib(c.cell.block_size).replace(' ', ""),
            c.cell.pattern.name(),
            c.rw_name(),
            c.cell.threads,
            c.cell.outstanding,
            c.queue_depth,
            c.iops,
            c.mb_per_s,
            l.map(|l| l.avg_us).unwrap_or(0.0),
            p(50.0),
            p(99.0),
            p(99.9),
            c.spread_pct,
            c.cpu_us_per_io
        );
    }
    o
}

/// The saturation lines.
pub fn saturation_report(sat: &[Saturation]) -> String {
    let mut o = String::from("saturation (smallest queue depth within 5% of the best IOPS):\n");
    for s in sat {
        let _ = writeln!(
            o,
            "  {} {} {}: QD {} ({} x {}) {:.0} IOPS, avg {:.1} us, p99 {:.1} us (best {:.0} IOPS at QD {})",
            kib(s.block_size),
            s.pattern,
            s.rw,
            s.queue_depth,
            s.threads,
            s.outstanding,
            s.iops,
            s.avg_us,
            s.p99_us,
            s.best_iops,
            s.best_queue_depth
        );
    }
    o
}
