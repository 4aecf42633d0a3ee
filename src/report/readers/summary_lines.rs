//! Rebuilding per-file statistics from the summary lines of an XML log (ours or SQLIOSim's).

use std::collections::HashMap;

use crate::stats::{FileSummary, Summary};

/// "Key = value, Key2 = value2" pairs; a key's prefix up to ": " is dropped
/// ("Latency (ms): min = 1" gives "min").
fn pairs(line: &str) -> HashMap<String, String> {
    line.split(", ")
        .filter_map(|kv| kv.split_once(" = "))
        .map(|(k, v)| {
            let k = k.rsplit_once(": ").map_or(k, |(_, k)| k);
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect()
}

fn num<T: std::str::FromStr + Default>(m: &HashMap<String, String>, k: &str) -> T {
    m.get(k).and_then(|v| v.parse().ok()).unwrap_or_default()
}

fn apply(f: &mut FileSummary, line: &str) {
    let m = pairs(line);
    if line.starts_with("File Attributes:") {
        f.sparse = m.get("Sparse").is_some_and(|v| v == "Yes");
    } else if line.starts_with("Target IO Duration") {
        f.target_io_duration_ms = num(&m, "Target IO Duration (ms)");
        f.running_avg_io_ms = num(&m, "Running Average IO Duration (ms)");
        f.throttled = num(&m, "Number of times IO throttled");
        f.io_request_blocks = num(&m, "IO request blocks");
    } else if line.starts_with("Reads = ") {
        f.io.reads = num(&m, "Reads");
        f.io.scatter_reads = num(&m, "Scatter Reads");
        f.io.writes = num(&m, "Writes");
        f.io.gather_writes = num(&m, "Gather Writes");
        f.io.total_io_time_ms = num(&m, "Total IO Time (ms)");
    } else if line.starts_with("Syncs = ") {
        f.io.syncs = num(&m, "Syncs");
        f.io.errors = num(&m, "IO errors");
        f.io.iops = num(&m, "IOPS");
        f.io.mb_per_s = num(&m, "MB/s");
        let l = &mut f.io.latency;
        let us = |k: &str| num::<f64>(&m, k) * 1000.0;
        (l.min_us, l.p50_us, l.p90_us) = (us("min"), us("p50"), us("p90"));
        (l.p99_us, l.p999_us, l.max_us) = (us("p99"), us("p99.9"), us("max"));
        f.space = m.get("Allocated (MB)").and_then(|v| {
            let (held, size) = v.split_once(" of ")?;
            let bytes = |t: &str| {
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .map(|mb| (mb * 1048576.0) as u64)
            };
            Some(crate::stats::FileSpace {
                size_bytes: bytes(size)?,
                allocated_bytes: bytes(held)?,
            })
        });
    }
}

/// Per-file statistics out of the Final Summary lines; `None` when there are none.
pub fn summary_from_lines(lines: &[String]) -> Option<Summary> {
    const HEAD: &str = "********** Final Summary for file ";
    let mut s = Summary::default();
    for line in lines {
        if let Some(rest) = line.strip_prefix(HEAD) {
            let path = rest.trim_end_matches('*').trim_end().to_string();
            let index = s.files.len();
            s.files.push(FileSummary {
                index,
                path,
                ..FileSummary::default()
            });
        } else if let Some(f) = s.files.last_mut() {
            apply(f, line);
        }
    }
    for f in &s.files {
        s.total.add_counts(&f.io);
    }
    (!s.files.is_empty()).then_some(s)
}
