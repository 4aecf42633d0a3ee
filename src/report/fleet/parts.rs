//! The device parts of one run: its statistics split by the device under its files (the run
//! total when every file is on one device, else the files of each device summed, histograms
//! merged), and its findings assigned to them.

use std::collections::BTreeMap;

use crate::report::readers::load::RunEvidence;
use crate::stats::{FileSummary, LatencyHistogram, OpTotals, Summary};

use super::device::{DeviceKey, DevicePart};

/// The device of a test file: by path, else the only device the run reports.
fn device_of(devices: &[(String, DeviceKey)], path: &str) -> DeviceKey {
    if let Some((_, d)) = devices.iter().find(|(p, _)| p == path) {
        return d.clone();
    }
    let mut all: Vec<&DeviceKey> = devices.iter().map(|(_, d)| d).collect();
    all.dedup();
    match all.as_slice() {
        [one] => (*one).clone(),
        _ => DeviceKey::unknown(),
    }
}

fn decode(hdr: Option<&String>, what: &str, notes: &mut Vec<String>) -> Option<LatencyHistogram> {
    let text = hdr?;
    match LatencyHistogram::from_v2_base64(text) {
        Ok(h) => Some(h),
        Err(e) => {
            notes.push(format!("{what}: {e}; its percentiles are not merged"));
            None
        }
    }
}

/// One part per device: the run total when every file is on one device, else the files of
/// each device summed. Findings follow their file's device; those without a file known
/// (suppressed past the error cap) go to the first device.
pub fn parts_of(
    l: &RunEvidence,
    devices: &[(String, DeviceKey)],
    notes: &mut Vec<String>,
) -> Vec<DevicePart> {
    let empty = Summary::default();
    let sum = l.summary.as_ref().unwrap_or(&empty);
    let mut groups: Vec<(DeviceKey, Vec<&FileSummary>)> = Vec::new();
    for f in &sum.files {
        let d = device_of(devices, &f.path);
        match groups.iter_mut().find(|(k, _)| *k == d) {
            Some((_, v)) => v.push(f),
            None => groups.push((d, vec![f])),
        }
    }
    let mut parts: Vec<DevicePart> = match groups.len() {
        0 | 1 => {
            let d = groups
                .pop()
                .map_or_else(|| device_of(devices, ""), |(d, _)| d);
            vec![whole_run(d, sum, notes)]
        }
        _ => groups
            .into_iter()
            .map(|(d, files)| files_part(d, &files, sum.elapsed_s, notes))
            .collect(),
    };
    assign_findings(l, devices, &mut parts);
    parts
}

fn part(
    device: DeviceKey,
    io: &OpTotals,
    elapsed_s: f64,
    hist: Option<LatencyHistogram>,
) -> DevicePart {
    let ops = io.data_ops();
    // XML logs carry no elapsed time: the rate and the count give it back.
    let elapsed_s = if elapsed_s > 0.0 {
        elapsed_s
    } else if io.iops > 0.0 {
        ops as f64 / io.iops
    } else {
        0.0
    };
    DevicePart {
        device,
        ops,
        elapsed_s,
        iops: io.iops,
        mb_per_s: io.mb_per_s,
        recorded: io.latency,
        hist,
        throttled: 0,
        by_class: BTreeMap::new(),
    }
}

fn whole_run(device: DeviceKey, sum: &Summary, notes: &mut Vec<String>) -> DevicePart {
    let hist = decode(
        sum.total.latency_hdr.as_ref(),
        "stats.total.latency_hdr",
        notes,
    );
    let mut p = part(device, &sum.total, sum.elapsed_s, hist);
    p.throttled = sum.files.iter().map(|f| f.throttled).sum();
    p
}

fn files_part(
    device: DeviceKey,
    files: &[&FileSummary],
    elapsed_s: f64,
    notes: &mut Vec<String>,
) -> DevicePart {
    let mut io = OpTotals::default();
    let mut hist = Some(LatencyHistogram::new());
    for f in files {
        io.add_counts(&f.io);
        let what = format!("stats.files[{}].io.latency_hdr", f.index);
        match (
            decode(f.io.latency_hdr.as_ref(), &what, notes),
            hist.as_mut(),
        ) {
            (Some(h), Some(acc)) => acc.add(&h),
            _ => hist = None,
        }
    }
    if let [one] = files {
        io.latency = one.io.latency;
    }
    let mut p = part(device, &io, elapsed_s, hist);
    p.throttled = files.iter().map(|f| f.throttled).sum();
    p
}

fn assign_findings(l: &RunEvidence, devices: &[(String, DeviceKey)], parts: &mut [DevicePart]) {
    let mut left = l.by_class.clone();
    if parts.len() > 1 {
        for f in &l.findings {
            let d = device_of(devices, &f.path.display().to_string());
            let class = f.class.as_str().to_string();
            if let Some(p) = parts.iter_mut().find(|p| p.device == d) {
                *p.by_class.entry(class.clone()).or_default() += 1;
                if let Some(n) = left.get_mut(&class) {
                    *n = n.saturating_sub(1);
                }
            }
        }
    }
    if let Some(first) = parts.first_mut() {
        for (class, n) in left.into_iter().filter(|(_, n)| *n > 0) {
            *first.by_class.entry(class).or_default() += n;
        }
    }
}
