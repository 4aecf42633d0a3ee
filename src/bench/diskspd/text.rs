//! DiskSpd's text result layout (`-Rtext`), following its ResultParser: the input
//! parameters, "Results for timespan 1", the CPU table, the Total / Read / Write IO tables
//! per thread, and with `-L` the latency percentile table from min through 9-nines to max.

use super::args::DiskspdArgs;
use super::Report;
use crate::bench::latency::{BenchStats, PERCENTILES};
use hdrhistogram::Histogram;
use std::fmt::Write;

/// Which operations a table counts.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    Total,
    Read,
    Write,
}

fn file_size(n: u64) -> String {
    if n > 10 << 30 {
        format!("{}GiB", n >> 30)
    } else if n > 10 << 20 {
        format!("{}MiB", n >> 20)
    } else if n > 10 << 10 {
        format!("{}KiB", n >> 10)
    } else {
        format!("{n}B")
    }
}

fn params(o: &mut String, a: &DiskspdArgs, rep: &Report) {
    let _ = write!(
        o,
        "\nCommand Line: {}\n\nInput parameters:\n\n",
        a.command_line
    );
    let _ = write!(o, "\ttimespan:   1\n\t-------------\n");
    let _ = writeln!(
        o,
        "\tduration: {}s\n\twarm up time: {}s\n\tcool down time: {}s",
        a.duration, a.warmup, a.cooldown
    );
    if a.latency {
        o.push_str("\tmeasuring latency\n");
    }
    if let Some(ms) = a.iops_interval_ms {
        let _ = writeln!(o, "\tgathering IOPS at intervals of {ms}ms");
    }
    let _ = writeln!(o, "\trandom seed: {}", a.seed);
    for (i, t) in rep.result.targets.iter().enumerate() {
        target_params(o, a, a.shown(i, &t.path), rep);
    }
    let _ = write!(
        o,
        "\nSystem information:\n\n\tcomputer name: {}\n\tstart time: {}\n",
        rep.host, rep.start_time
    );
}

/// Cache and write-through lines, worded as DiskSpd words them.
fn cache_lines(a: &DiskspdArgs) -> [&'static str; 2] {
    let sw = if a.no_cache {
        "\t\tsoftware cache disabled\n"
    } else {
        "\t\tusing software cache\n"
    };
    let hw = match (a.write_through, a.no_cache) {
        (true, true) => "\t\thardware write cache disabled, writethrough on\n",
        (true, false) => "\t\thardware and software write caches disabled, writethrough on\n",
        _ => "\t\tusing hardware write cache, writethrough off\n",
    };
    [sw, hw]
}

fn target_params(o: &mut String, a: &DiskspdArgs, path: &str, rep: &Report) {
    let _ = writeln!(
        o,
        "\tpath: '{path}'\n\t\tthink time: 0ms\n\t\tburst size: 0"
    );
    cache_lines(a).iter().for_each(|l| o.push_str(l));
    if a.zeros {
        o.push_str("\t\tzeroing write buffers\n");
    }
    let _ = match a.write_pct {
        0 => writeln!(o, "\t\tperforming read test"),
        100 => writeln!(o, "\t\tperforming write test"),
        w => writeln!(
            o,
            "\t\tperforming mix test (read/write ratio: {}/{w})",
            100 - w
        ),
    };
    let _ = writeln!(o, "\t\tblock size: {}", a.block);
    let job = &rep.result.job;
    let _ = writeln!(o, "\t\tbase file offset: {}", job.base_offset);
    if let Some(max) = job.max_offset {
        let _ = writeln!(o, "\t\tmax file size: {max}");
    }
    let align = a.random.filter(|r| *r > 0).unwrap_or(a.block);
    let kind = match a.random {
        Some(_) => "using random I/O (alignment: ",
        None => "using sequential I/O (stride: ",
    };
    let _ = writeln!(o, "\t\t{kind}{align})");
    let _ = writeln!(
        o,
        "\t\tnumber of outstanding I/O operations: {}",
        a.outstanding
    );
    let threads = rep.result.job.threads_per_target;
    let _ = writeln!(
        o,
        "\t\tthread stride size: 0\n\t\tthreads per file: {threads}"
    );
    let _ = writeln!(o, "\t\tusing {}\n\t\tIO priority: normal", rep.ring_line());
}

fn cpu_table(o: &mut String, rep: &Report) {
    o.push_str(
        "\nCPU |  Usage |  User  |  Kernel |  Idle\n-------------------------------------------\n",
    );
    let rows = &rep.result.cpu.per_cpu;
    for (i, c) in rows.iter().enumerate() {
        let _ = writeln!(
            o,
            "{i:4}| {:6.2}%| {:6.2}%|  {:6.2}%| {:6.2}%",
            c.usage, c.user, c.kernel, c.idle
        );
    }
    let n = rows.len().max(1) as f64;
    let avg = |f: fn(&crate::bench::cpu::CpuRow) -> f64| rows.iter().map(f).sum::<f64>() / n;
    o.push_str("-------------------------------------------\n");
    let _ = writeln!(
        o,
        "avg.| {:6.2}%| {:6.2}%|  {:6.2}%| {:6.2}%",
        avg(|c| c.usage),
        avg(|c| c.user),
        avg(|c| c.kernel),
        avg(|c| c.idle)
    );
}

/// Bytes, I/Os, latencies and per-second counts of one section.
fn pick(t: &BenchStats, s: Section) -> (u64, u64, Histogram<u64>, Vec<u64>) {
    match s {
        Section::Total => (t.bytes(), t.ios(), t.total(), t.timeline.clone()),
        Section::Read => (
            t.read_bytes,
            t.read_ios,
            t.read.clone(),
            t.read_timeline.clone(),
        ),
        Section::Write => (
            t.write_bytes,
            t.write_ios,
            t.write.clone(),
            t.write_timeline(),
        ),
    }
}

/// Standard deviation of per-second I/O counts (DiskSpd's IopsStdDev with -D1000).
pub fn iops_stddev(timeline: &[u64]) -> f64 {
    if timeline.is_empty() {
        return 0.0;
    }
    let n = timeline.len() as f64;
    let mean = timeline.iter().sum::<u64>() as f64 / n;
    (timeline
        .iter()
        .map(|&x| (x as f64 - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt()
}

fn row_tail(o: &mut String, a: &DiskspdArgs, h: &Histogram<u64>, timeline: &[u64]) {
    if a.latency {
        let _ = write!(
            o,
            " | {:8.3}",
            if h.is_empty() { 0.0 } else { h.mean() / 1e6 }
        );
    }
    if a.iops_interval_ms.is_some() {
        let _ = write!(o, " | {:10.2}", iops_stddev(timeline));
    }
    if a.latency {
        if h.is_empty() {
            o.push_str(" |       N/A");
        } else {
            let _ = write!(o, " |  {:8.3}", h.stdev() / 1e6);
        }
    }
}

fn section(o: &mut String, a: &DiskspdArgs, rep: &Report, s: Section) {
    let secs = rep.result.measured_s.max(1e-9);
    let lat = |on: bool, t: &'static str| if on { t } else { "" };
    let _ = writeln!(
        o,
        "thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s {}{}{}|  file",
        lat(a.latency, "|  AvgLat  "),
        lat(a.iops_interval_ms.is_some(), "| IopsStdDev "),
        lat(a.latency, "| LatStdDev ")
    );
    let border = format!(
        "------------------------------------------------------------------{}{}{}------------\n",
        lat(a.latency, "-----------"),
        lat(a.iops_interval_ms.is_some(), "-------------"),
        lat(a.latency, "------------")
    );
    o.push_str(&border);
    let mut total = BenchStats::default();
    for (i, t) in rep.result.threads.iter().enumerate() {
        let (bytes, ios, h, timeline) = pick(t, s);
        let _ = write!(
            o,
            "{i:6} | {bytes:15} | {ios:12} | {:10.2} | {:10.2}",
            bytes as f64 / 1048576.0 / secs,
            ios as f64 / secs
        );
        row_tail(o, a, &h, &timeline);
        let at = i / rep.result.job.threads_per_target as usize;
        let tg = &rep.result.targets[at];
        let _ = writeln!(o, " | {} ({})", a.shown(at, &tg.path), file_size(tg.size));
        total.merge(t);
    }
    o.push_str(&border);
    let (bytes, ios, h, timeline) = pick(&total, s);
    let _ = write!(
        o,
        "total:   {bytes:15} | {ios:12} | {:10.2} | {:10.2}",
        bytes as f64 / 1048576.0 / secs,
        ios as f64 / secs
    );
    row_tail(o, a, &h, &timeline);
    o.push('\n');
}

fn ms(h: &Histogram<u64>, f: impl Fn(&Histogram<u64>) -> u64) -> String {
    if h.is_empty() {
        "N/A".into()
    } else {
        format!("{:.3}", f(h) as f64 / 1e6)
    }
}

fn percentiles(o: &mut String, total: &BenchStats) {
    let (r, w, t) = (&total.read, &total.write, total.total());
    o.push_str("\ntotal:\n  %-ile |  Read (ms) | Write (ms) | Total (ms)\n----------------------------------------------\n");
    let _ = writeln!(
        o,
        "    min | {:>10} | {:>10} | {:>10}",
        ms(r, |h| h.min()),
        ms(w, |h| h.min()),
        ms(&t, |h| h.min())
    );
    for (p, name) in PERCENTILES {
        let q = |h: &Histogram<u64>| h.value_at_quantile(p / 100.0);
        let _ = writeln!(
            o,
            "{name:>7} | {:>10} | {:>10} | {:>10}",
            ms(r, q),
            ms(w, q),
            ms(&t, q)
        );
    }
    let _ = writeln!(
        o,
        "    max | {:>10} | {:>10} | {:>10}",
        ms(r, |h| h.max()),
        ms(w, |h| h.max()),
        ms(&t, |h| h.max())
    );
}

/// Renders the whole text report.
pub fn render(a: &DiskspdArgs, rep: &Report) -> String {
    let mut o = String::new();
    params(&mut o, a, rep);
    o.push_str("\n\nResults for timespan 1:\n*******************************************************************************\n");
    let r = &rep.result;
    if r.measured_s < 1e-7 {
        o.push_str(
            "The test was interrupted before the measurements began. No results are displayed.\n",
        );
        return o;
    }
    let _ = write!(
        o,
        "\nactual test time:\t{:.2}s\nthread count:\t\t{}\nproc count:\t\t{}\n",
        r.measured_s,
        r.threads.len(),
        r.cpu.per_cpu.len()
    );
    cpu_table(&mut o, rep);
    for (title, s) in [
        ("Total IO", Section::Total),
        ("Read IO", Section::Read),
        ("Write IO", Section::Write),
    ] {
        let _ = writeln!(o, "\n{title}");
        section(&mut o, a, rep, s);
    }
    if a.latency {
        o.push_str("\n\n");
        percentiles(&mut o, &r.total);
    }
    o
}
