//! The bundle members a vendor reads first, from the JSON summary: `kernel-log.txt` (the
//! kernel's lines of the run's window, then each finding's time beside its nearest lines),
//! `host-facts.json`, and under `health/` each SMART or NVMe answer as JSON, with
//! `health/summary.txt` giving each answer's gist or why it was not to be had.

use std::fmt::Write;

use crate::findings::Finding;
use crate::report::facts::kmsg::{self, KernelLog};
use crate::report::sinks::clock::iso_utc;
use crate::report::sinks::json::JsonReport;
use crate::report::views::bundle_sources::BundleFile;

/// Kernel lines shown on each side of a finding, and how far from it they may be.
const NEAR: usize = 3;
const WINDOW_US: u64 = 60_000_000;

/// The window around a finding whose kernel lines are shown beside it, in words.
pub const WINDOW_WORDS: &str = "within 60 s, at most 3 before and 3 after";

/// The kernel lines beside `f` (within 60 s of its time, at most 3 on each side), each as
/// "+0.123 s  text" (seconds from the finding): what `kernel-log.txt`, the HTML findings table
/// and `sqliosim report`'s text show.
pub fn beside(k: &KernelLog, f: &Finding) -> Vec<String> {
    kmsg::nearest(k, f.time_us, NEAR, WINDOW_US)
        .into_iter()
        .map(|l| {
            let secs = (l.time_us as f64 - f.time_us as f64) / 1e6;
            format!("{secs:+.3} s  {}", l.text)
        })
        .collect()
}

/// The members for the kernel log, the host facts and the drives' health of `j`.
pub fn members(j: &JsonReport, findings: &[Finding]) -> Vec<BundleFile> {
    let mut v = Vec::new();
    let bytes = |name: &str, data: Vec<u8>| BundleFile::Bytes {
        name: name.into(),
        data,
    };
    let text = match &j.kernel_log {
        Some(k) => kernel_text(k, findings),
        None => "No kernel log: the run that wrote this summary did not record one (an older version, or it did not finish).\n".into(),
    };
    v.push(bytes("kernel-log.txt", text.into_bytes()));
    if let Some(h) = &j.host_facts {
        v.push(bytes("host-facts.json", pretty(h)));
    }
    let mut summary = String::new();
    for r in &j.drive_health {
        let said = match (&r.json, &r.absent) {
            (Some(json), _) => {
                v.push(bytes(&r.member_name(), pretty(json)));
                let first = r.command.split_whitespace().next();
                match first {
                    Some("smartctl") => crate::report::facts::health::smart_summary(json),
                    _ => format!("see {}", r.member_name()),
                }
            }
            (None, why) => format!("absent: {}", why.as_deref().unwrap_or("no answer")),
        };
        let _ = writeln!(summary, "{} {}: `{}`: {said}", r.when, r.disk, r.command);
    }
    if j.drive_health.is_empty() {
        summary.push_str("SMART and NVMe logs: absent: the run knew no disk under its files.\n");
    }
    v.push(bytes("health/summary.txt", summary.into_bytes()));
    v
}

fn pretty<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap_or_default()
}

/// The kernel log as text: where it came from, its lines, and each finding beside the
/// nearest ones.
pub fn kernel_text(k: &KernelLog, findings: &[Finding]) -> String {
    let mut s = String::new();
    let source = if k.source.is_empty() {
        "none"
    } else {
        &k.source
    };
    let _ = writeln!(
        s,
        "Kernel messages of the run's window from {source}, about {} or I/O errors, resets and timeouts",
        if k.devices.is_empty() { "no device known".to_string() } else { k.devices.join(", ") }
    );
    if let Some(n) = &k.note {
        let _ = writeln!(s, "Note: {n}");
    }
    let _ = writeln!(s, "\n{} line(s):", k.lines.len());
    for l in &k.lines {
        let _ = writeln!(s, "{} <{}> {}", iso_utc(l.time_us), l.priority, l.text);
    }
    if findings.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\nEach finding beside the nearest kernel lines (within 60 s):"
    );
    for f in findings {
        let _ = writeln!(
            s,
            "\n{} finding #{} {} on {} page {}",
            iso_utc(f.time_us),
            f.seq,
            f.class.as_str(),
            f.path.display(),
            f.page_id
        );
        let near = beside(k, f);
        if near.is_empty() {
            let _ = writeln!(s, "  no kernel line within 60 s");
        }
        for l in near {
            let _ = writeln!(s, "  {l}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::facts::kmsg::KernelLine;

    #[test]
    fn a_finding_is_shown_beside_the_kernel_lines_near_it() {
        let k = KernelLog {
            source: "/dev/kmsg".into(),
            devices: vec!["loop7".into()],
            lines: vec![
                KernelLine {
                    time_us: 1_000_000_000_000_000,
                    priority: 3,
                    text: "loop7: I/O error".into(),
                },
                KernelLine {
                    time_us: 1_000_000_500_000_000,
                    priority: 3,
                    text: "far away".into(),
                },
            ],
            note: None,
        };
        let mut f = crate::findings::Finding::page(
            1,
            "/d/sqliosim.mdx".into(),
            1,
            7,
            crate::page::layout::ActorKind::RandomUser,
            0,
            crate::page::Verdict::IoError { errno: 5 },
        );
        f.time_us = 1_000_000_002_000_000;
        let t = kernel_text(&k, &[f]);
        assert!(t.contains("from /dev/kmsg, about loop7"), "{t}");
        assert!(t.contains("-2.000 s  loop7: I/O error"), "{t}");
        assert!(!t.contains("s  far away"), "{t}");
    }
}
