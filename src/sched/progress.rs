//! The text of the live progress line (pure; the app decides where it goes).

use std::time::Duration;

use crate::stats::LiveSnapshot;

/// "main 00:12/01:00  IOPS 12345  MB/s 96.4  lat 0.42 ms  p99 < 1.02 ms  throttled 0  errors 0"
/// from two snapshots taken
/// `secs` apart.
pub fn line(
    before: &LiveSnapshot,
    now: &LiveSnapshot,
    secs: f64,
    elapsed: Duration,
    length: Duration,
    findings: u64,
) -> String {
    let d = *now - *before;
    format!(
        "main {}/{}  IOPS {:>8.0}  MB/s {:>8.1}  lat {:>6.2} ms  p99 <{:>6.2} ms  throttled {}  errors {}",
        mmss(elapsed),
        mmss(length),
        d.iops(secs),
        d.mb_per_s(secs),
        d.mean_latency_ms(),
        d.p99_ms_bound(),
        now.throttles,
        findings
    )
}

fn mmss(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_rates_over_the_interval() {
        let a = LiveSnapshot::default();
        let b = LiveSnapshot {
            reads: 100,
            writes: 100,
            bytes_read: 1 << 20,
            latency_ns: 200_000_000,
            ..a
        };
        let l = line(
            &a,
            &b,
            2.0,
            Duration::from_secs(65),
            Duration::from_secs(120),
            3,
        );
        assert!(l.starts_with("main 01:05/02:00"), "{l}");
        assert!(l.contains("IOPS      100"), "{l}");
        assert!(l.contains("MB/s      0.5"), "{l}");
        assert!(l.contains("lat   1.00 ms"), "{l}");
        assert!(l.ends_with("errors 3"), "{l}");
    }
}
