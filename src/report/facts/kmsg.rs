//! The kernel's messages for a run's window: read from `/dev/kmsg` (non-blocking: every
//! record in the ring, then EAGAIN) or, when it cannot be read, from `journalctl -k`. Only the
//! lines that name a device under test, or speak of an I/O error, a reset or a timeout, are
//! kept; each carries its wall-clock time, so a finding can be put beside the nearest ones.
//!
//! kmsg records are `PRIO,SEQ,MONOTONIC_US,FLAGS;text` (Documentation/ABI/testing/dev-kmsg);
//! the monotonic time is turned into wall time with the pair of clocks read at the run's start.

use std::io::Read;

use serde::{Deserialize, Serialize};

/// Most kernel lines kept: a dying disk can fill the ring with resets.
const MAX_LINES: usize = 2000;

/// Words that make a kernel line evidence whatever device it names.
const WORDS: &[&str] = &[
    "i/o error",
    "reset",
    "timeout",
    "timed out",
    "medium error",
    "critical target error",
    "blk_update_request",
    "abort",
    "offline",
];

/// The kernel lines of a run's window, and where they came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelLog {
    /// `/dev/kmsg`, `journalctl -k`, or empty when neither could be read.
    pub source: String,
    /// Why there are no lines from the kernel, or what limits them, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The devices whose names select lines.
    pub devices: Vec<String>,
    /// The lines kept, oldest first.
    pub lines: Vec<KernelLine>,
}

/// One kernel message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelLine {
    /// Wall-clock time, µs since the epoch.
    pub time_us: u64,
    /// Syslog priority (0 emergency … 7 debug).
    pub priority: u8,
    /// The message.
    pub text: String,
}

/// The pair of clocks at one moment: monotonic and wall, µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clocks {
    /// CLOCK_MONOTONIC, µs (the clock of kmsg records).
    pub mono_us: u64,
    /// Wall clock, µs since the epoch.
    pub wall_us: u64,
}

impl Clocks {
    /// Now.
    pub fn now() -> Clocks {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        Clocks {
            mono_us: t.tv_sec as u64 * 1_000_000 + t.tv_nsec as u64 / 1000,
            wall_us: crate::report::sinks::clock::now_us(),
        }
    }
}

/// Parses one kmsg record into (priority, monotonic µs, text); continuation lines (` KEY=…`)
/// are left out.
pub fn parse_record(rec: &str) -> Option<(u8, u64, String)> {
    let (head, text) = rec.split_once(';')?;
    let mut f = head.split(',');
    let prio: u32 = f.next()?.parse().ok()?;
    let _seq = f.next()?;
    let us: u64 = f.next()?.parse().ok()?;
    let text = text.lines().next().unwrap_or("").to_string();
    Some(((prio & 7) as u8, us, text))
}

/// True when `text` names one of `devices` (as a whole word) or speaks of an I/O problem.
pub fn relevant(text: &str, devices: &[String]) -> bool {
    let lower = text.to_ascii_lowercase();
    if WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    devices.iter().filter(|d| !d.is_empty()).any(|d| {
        lower.match_indices(&d.to_ascii_lowercase()).any(|(i, m)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + m.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric())
                && !after.is_some_and(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// `/dev/kmsg` opened at the run's start, positioned after its last record (SEEK_END), so
/// that reading it at the end gives the records of the run's window by sequence, whatever the
/// drift between the kernel's printk clock and CLOCK_MONOTONIC; `None` when it cannot be
/// opened.
pub fn open_at_end() -> Option<std::fs::File> {
    use std::io::Seek;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open("/dev/kmsg")
        .ok()?;
    f.seek(std::io::SeekFrom::End(0)).ok()?;
    Some(f)
}

/// The kernel's relevant lines since `start` (the run's start), about `devices`, read from
/// `kmsg` ([`open_at_end`]) when it was opened, else from the journal.
pub fn capture(start: Clocks, devices: Vec<String>, kmsg: Option<std::fs::File>) -> KernelLog {
    let mut log = KernelLog {
        devices,
        ..KernelLog::default()
    };
    match read_kmsg(start, &log.devices, kmsg) {
        Ok(lines) => {
            log.source = "/dev/kmsg".into();
            log.lines = lines;
        }
        Err(why) => match journal(start, &log.devices) {
            Ok(lines) => {
                log.source = "journalctl -k".into();
                log.note = Some(format!("/dev/kmsg: {why}"));
                log.lines = lines;
            }
            Err(j) => log.note = Some(format!("/dev/kmsg: {why}; journalctl -k: {j}")),
        },
    }
    if log.lines.len() > MAX_LINES {
        let cut = log.lines.len() - MAX_LINES;
        log.lines.drain(..cut);
        log.note = Some(format!(
            "the first {cut} lines were left out (at most {MAX_LINES} kept)"
        ));
    }
    log
}

fn read_kmsg(
    start: Clocks,
    devices: &[String],
    kmsg: Option<std::fs::File>,
) -> Result<Vec<KernelLine>, String> {
    let mut f = kmsg.ok_or("cannot be opened")?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let rec = String::from_utf8_lossy(&buf[..n]);
                let Some((priority, us, text)) = parse_record(&rec) else {
                    continue;
                };
                // The window is by sequence (the file was positioned at the start); the
                // time is the printk clock's, turned into wall time as well as it goes.
                if relevant(&text, devices) {
                    out.push(KernelLine {
                        time_us: (start.wall_us + us).saturating_sub(start.mono_us),
                        priority,
                        text,
                    });
                }
            }
            // EPIPE: the ring overwrote the record being read; the next read goes on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(out)
}

/// `journalctl -k` since the start, `short-unix` lines: `SECONDS.MICROS host kernel: text`.
fn journal(start: Clocks, devices: &[String]) -> Result<Vec<KernelLine>, String> {
    let since = format!("@{}", start.wall_us / 1_000_000);
    let out = super::tool::run(
        "journalctl",
        &[
            "-k",
            "-q",
            "--no-pager",
            "-o",
            "short-unix",
            "--since",
            &since,
        ],
    )
    .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| {
            let (t, rest) = l.split_once(' ')?;
            let secs: f64 = t.parse().ok()?;
            let msg = rest.split_once(": ").map_or(rest, |(_, m)| m);
            relevant(msg, devices).then(|| KernelLine {
                time_us: (secs * 1e6) as u64,
                priority: 6,
                text: msg.to_string(),
            })
        })
        .collect())
}

/// The kernel lines nearest to `time_us`: up to `n` on each side within `window_us`.
pub fn nearest(log: &KernelLog, time_us: u64, n: usize, window_us: u64) -> Vec<&KernelLine> {
    let close = |l: &&KernelLine| l.time_us.abs_diff(time_us) <= window_us;
    let split = log.lines.partition_point(|l| l.time_us < time_us);
    let before = log.lines[..split].iter().rev().filter(close).take(n);
    let after = log.lines[split..].iter().filter(close).take(n);
    let mut v: Vec<&KernelLine> = before.collect();
    v.reverse();
    v.extend(after);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_parses_and_its_continuation_is_left_out() {
        let rec = "3,1234,5000000,-;blk_update_request: I/O error, dev sdb, sector 2048\n SUBSYSTEM=block\n";
        let (p, us, text) = parse_record(rec).unwrap();
        assert_eq!((p, us), (3, 5_000_000));
        assert_eq!(text, "blk_update_request: I/O error, dev sdb, sector 2048");
        // Facility bits above the priority are dropped.
        assert_eq!(parse_record("14,1,2,-;hello").unwrap().0, 6);
        assert_eq!(parse_record("garbage"), None);
    }

    #[test]
    fn lines_are_kept_for_their_device_or_their_words() {
        let devs = vec!["loop7".to_string(), "sda".to_string()];
        assert!(relevant("EXT4-fs (loop7): mounted filesystem", &devs));
        assert!(relevant("sd 0:0:0:0: [sda] tag#3 FAILED", &devs));
        assert!(!relevant("loop70: detected capacity change", &devs));
        assert!(!relevant("sdab: p1", &devs));
        assert!(relevant(
            "nvme nvme0: I/O 12 QID 3 timeout, reset controller",
            &devs
        ));
        assert!(!relevant("audit: type=1400 apparmor", &devs));
    }

    #[test]
    fn the_nearest_lines_are_on_both_sides_within_the_window() {
        let l = |t| KernelLine {
            time_us: t,
            priority: 3,
            text: format!("at {t}"),
        };
        let log = KernelLog {
            lines: vec![l(100), l(200), l(300), l(400), l(10_000)],
            ..KernelLog::default()
        };
        let near: Vec<u64> = nearest(&log, 250, 1, 1000)
            .iter()
            .map(|l| l.time_us)
            .collect();
        assert_eq!(near, vec![200, 300]);
        let near: Vec<u64> = nearest(&log, 250, 5, 1000)
            .iter()
            .map(|l| l.time_us)
            .collect();
        assert_eq!(near, vec![100, 200, 300, 400]);
    }
}
