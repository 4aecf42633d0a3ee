//! SQLIOSim's end-of-run per-file summary, byte-compatible, plus one line of our own.
//!
//! Scripts (XenRT among them) match these lines with regular expressions, so the first four
//! are kept exactly as SQLIOSim prints them; the throughput and latency figures SQLIOSim lacks
//! go on a fifth line that such scripts ignore.

use super::summary::{FileSummary, Latency};

/// The Func attribute SQLIOSim logs the summary lines with.
pub const SQLIOSIM_SUMMARY_FUNC: &str = "CLogicalFile::OutputSummary";

fn yes_no(b: bool) -> &'static str {
    if b {
        "Yes"
    } else {
        "No"
    }
}

/// The summary lines of one file, one log entry each.
pub fn file_summary_lines(f: &FileSummary) -> Vec<String> {
    let io = &f.io;
    let mut lines = vec![
        format!("********** Final Summary for file {} **********", f.path),
        format!(
            "File Attributes: Compression = No, Encryption = No, Sparse = {}",
            yes_no(f.sparse)
        ),
        format!(
            "Target IO Duration (ms) = {}, Running Average IO Duration (ms) = {}, Number of times IO throttled = {}, IO request blocks = {}",
            f.target_io_duration_ms, f.running_avg_io_ms, f.throttled, f.io_request_blocks
        ),
        format!(
            "Reads = {}, Scatter Reads = {}, Writes = {}, Gather Writes = {}, Total IO Time (ms) = {}",
            io.reads, io.scatter_reads, io.writes, io.gather_writes, io.total_io_time_ms
        ),
    ];
    lines.extend(f.drive.as_ref().map_or_else(Vec::new, drive_lines));
    lines.push(throughput_line(f));
    lines
}

/// SQLIOSim's DRIVE LEVEL lines, with what Linux says of the disk: its sector sizes (no
/// geometry: Linux keeps none), its write cache (the read cache is not reported) and its
/// counters since boot, for the whole device as SQLIOSim's are, times in milliseconds.
fn drive_lines(d: &super::DriveLevel) -> Vec<String> {
    let physical = d
        .physical_sector_size
        .map_or(String::new(), |p| format!(", Physical sector size = {p}"));
    let mut lines = vec![format!(
        "DRIVE LEVEL: Sector size = {}{physical}, Device = {}",
        d.sector_size, d.device
    )];
    if let Some(wc) = d.write_cache {
        lines.push(format!("DRIVE LEVEL: Write cache enabled = {}", yes_no(wc)));
    }
    if let Some(c) = &d.counters {
        lines.push(format!(
            "DRIVE LEVEL: Read count = {}, Read time = {}, Write count = {}, Write time = {}, Busy time = {}, Bytes read = {}, Bytes written = {}",
            c.reads, c.read_ms, c.writes, c.write_ms, c.busy_ms, c.bytes_read, c.bytes_written
        ));
    }
    lines
}

/// Our extra line: flushes, errors, IOPS, MB/s and latency percentiles in milliseconds, then
/// the space the filesystem holds for the file when known.
fn throughput_line(f: &FileSummary) -> String {
    let io = &f.io;
    let space = f.space.map_or(String::new(), |s| {
        format!(
            ", Allocated (MB) = {:.1} of {:.1}",
            s.allocated_bytes as f64 / 1048576.0,
            s.size_bytes as f64 / 1048576.0
        )
    });
    format!(
        "Syncs = {}, IO errors = {}, IOPS = {:.1}, MB/s = {:.2}, Latency (ms): {}{space}",
        io.syncs,
        io.errors,
        io.iops,
        io.mb_per_s,
        latency_ms(&io.latency)
    )
}

/// "min = …, p50 = …, p90 = …, p99 = …, p99.9 = …, max = …" in milliseconds.
pub(crate) fn latency_ms(l: &Latency) -> String {
    let ms = |us: f64| us / 1000.0;
    format!(
        "min = {:.3}, p50 = {:.3}, p90 = {:.3}, p99 = {:.3}, p99.9 = {:.3}, max = {:.3}",
        ms(l.min_us),
        ms(l.p50_us),
        ms(l.p90_us),
        ms(l.p99_us),
        ms(l.p999_us),
        ms(l.max_us)
    )
}
