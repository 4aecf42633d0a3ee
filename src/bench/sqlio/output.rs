//! SQLIO's output block, byte for byte in the lines community parsers read: the banner,
//! the run description, `CUMULATIVE DATA:`, `IOs/sec:` / `MBs/sec:` with two decimals, whole
//! millisecond `Min/Avg/Max_Latency(ms)`, and the 25-bucket `ms:` / `%:` histogram.
//!
//! The layout follows real SQLIO v1.5 captures (tests/bench/fixtures/sqlio-*.txt): SQLIO
//! indents the per-file thread line, the I/O size, the outstanding-I/O and the buffering lines
//! with one tab, and parsers rely on it (one matches `\tusing\s(\d+)?KB`). The outstanding
//! and buffering lines appear only when `-o` (above 0) and `-B` were given.

use crate::bench::latency::BenchStats;
use crate::bench::run::RunResult;
use hdrhistogram::Histogram;
use std::fmt::Write;

/// What the header lines describe.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// `-F` name, when a parameter file was used.
    pub param_file: Option<String>,
    /// Per file: name as written, threads, size in MB, whether the size was specified.
    pub files: Vec<(String, u32, u64, bool)>,
    /// Writes rather than reads.
    pub write: bool,
    /// Run time in seconds.
    pub secs: u64,
    /// I/O size in KB.
    pub block_kb: u32,
    /// Sequential rather than random.
    pub sequential: bool,
    /// Outstanding I/Os per thread, when `-o` asked for more than 0 (SQLIO prints its
    /// "enabling multiple I/Os" line only then, also for `-o1`).
    pub outstanding: Option<u32>,
    /// `-B` letter, when `-B` was given (SQLIO prints its "buffering set to" line only then).
    pub buffering: Option<char>,
    /// `-LS`/`-LP` given: print latency metrics and the histogram.
    pub latency: bool,
}

/// The figures of the block.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// I/O per second.
    pub iops: f64,
    /// MB (2^20 bytes, as SQLIO) per second.
    pub mbs: f64,
    /// Whole milliseconds, truncated.
    pub min_ms: u64,
    /// Whole milliseconds, truncated.
    pub avg_ms: u64,
    /// Whole milliseconds, truncated.
    pub max_ms: u64,
    /// Whole-number percentages of I/Os in [k, k+1) ms for k in 0..24, then 24 ms and above.
    pub histogram: [u64; 25],
}

fn buffering_line(mode: char) -> &'static str {
    match mode {
        'Y' => "buffering set to use both file and disk caches",
        'H' => "buffering set to use hardware disk cache (but not file cache)",
        'S' => "buffering set to use software cache but not hardware disk cache",
        _ => "buffering set to not use file nor disk caches (as is SQL Server)",
    }
}

/// Whole-number histogram percentages (truncated, as SQLIO: they may not add up to 100).
pub fn histogram(h: &Histogram<u64>) -> [u64; 25] {
    let mut out = [0u64; 25];
    let total = h.len();
    if total == 0 {
        return out;
    }
    let mut counts = [0u64; 25];
    for v in h.iter_recorded() {
        let ms = (h.median_equivalent(v.value_iterated_to()) / 1_000_000) as usize;
        counts[ms.min(24)] += v.count_at_value();
    }
    for (o, c) in out.iter_mut().zip(counts) {
        *o = c * 100 / total;
    }
    out
}

/// Figures from merged statistics over `secs` seconds.
pub fn figures(total: &BenchStats, secs: f64) -> Figures {
    let h = total.total();
    let secs = secs.max(1e-9);
    let ms = |ns: u64| ns / 1_000_000;
    Figures {
        iops: total.ios() as f64 / secs,
        mbs: total.bytes() as f64 / 1048576.0 / secs,
        min_ms: if h.is_empty() { 0 } else { ms(h.min()) },
        avg_ms: (h.mean() / 1e6) as u64,
        max_ms: if h.is_empty() { 0 } else { ms(h.max()) },
        histogram: histogram(&h),
    }
}

/// Renders the whole block.
pub fn render(hd: &Header, f: &Figures) -> String {
    let mut o = describe(hd);
    o.push_str("initialization done\nCUMULATIVE DATA:\nthroughput metrics:\n");
    let _ = writeln!(o, "IOs/sec: {:8.2}\nMBs/sec: {:8.2}", f.iops, f.mbs);
    if hd.latency {
        o.push_str("latency metrics:\n");
        let _ = writeln!(o, "Min_Latency(ms): {}", f.min_ms);
        let _ = writeln!(o, "Avg_Latency(ms): {}", f.avg_ms);
        let _ = writeln!(o, "Max_Latency(ms): {}", f.max_ms);
        o.push_str("histogram:\nms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+\n%:");
        for p in f.histogram {
            let _ = write!(o, " {p:2}");
        }
        o.push('\n');
    }
    o
}

/// The lines before `initialization done`: banner, files, threads, pattern, buffering, sizes.
fn describe(hd: &Header) -> String {
    let mut o = String::from("sqlio v1.5.SG\n");
    if hd.latency {
        o.push_str("using system counter for latency timings, 1000000000 counts per second\n");
    }
    if let Some(p) = &hd.param_file {
        let _ = writeln!(o, "parameter file used: {p}");
        let mut first = 0;
        for (name, t, _, _) in &hd.files {
            let last = first + t - 1;
            let _ = writeln!(
                o,
                "\tfile {name} with {t} threads ({first}-{last}) using mask 0x0 (0)"
            );
            first += t;
        }
    }
    let (verb, prep) = if hd.write {
        ("writing", "to")
    } else {
        ("reading", "from")
    };
    for (name, t, _, _) in &hd.files {
        let _ = writeln!(
            o,
            "{t} threads {verb} for {} secs {prep} file {name}",
            hd.secs
        );
    }
    let pattern = if hd.sequential {
        "sequential"
    } else {
        "random"
    };
    let _ = writeln!(o, "\tusing {}KB {pattern} IOs", hd.block_kb);
    if let Some(n) = hd.outstanding {
        let _ = writeln!(
            o,
            "\tenabling multiple I/Os per thread with {n} outstanding"
        );
    }
    if let Some(mode) = hd.buffering {
        let _ = writeln!(o, "\t{}", buffering_line(mode));
    }
    for (name, _, mb, specified) in &hd.files {
        let how = if *specified { "specified" } else { "current" };
        let _ = writeln!(o, "using {how} size: {mb} MB for file: {name}");
    }
    o
}

/// A SQLIO block describing a `sqliosim bench` run (for `--sqlio-output`).
pub fn block_for_run(r: &RunResult) -> String {
    let j = &r.job;
    let hd = Header {
        param_file: None,
        files: r
            .targets
            .iter()
            .map(|t| (t.path.clone(), j.threads_per_target, t.size >> 20, true))
            .collect(),
        write: j.read_pct < 50,
        secs: j.duration_s.round() as u64,
        block_kb: j.block_size / 1024,
        sequential: j.pattern == crate::bench::job::Pattern::Sequential,
        outstanding: Some(j.depth),
        buffering: Some(match (j.direct, j.write_through) {
            (true, true) => 'N',
            (true, false) => 'H',
            (false, true) => 'S',
            (false, false) => 'Y',
        }),
        latency: true,
    };
    render(&hd, &figures(&r.total, r.measured_s))
}
