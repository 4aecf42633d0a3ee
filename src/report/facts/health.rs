//! The drive's health before and after a run, when the tools are there: `smartctl -j -a
//! /dev/DISK`, and for NVMe `nvme smart-log`, `nvme error-log` and `nvme fw-log` (`-o json`).
//! A missing tool, a device without SMART (loop, virtio) or a tool that fails is recorded as
//! absent with the reason; it never fails the run.

use serde::{Deserialize, Serialize};

/// One tool's answer about one disk at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HealthReport {
    /// `before` or `after` the run.
    pub when: String,
    /// The disk (`sda`, `nvme0n1`).
    pub disk: String,
    /// The command, e.g. `smartctl -j -a /dev/sda`.
    pub command: String,
    /// Its JSON output, when it gave some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<serde_json::Value>,
    /// Why there is none, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
}

impl HealthReport {
    /// The bundle member's name: `health/before-sda-smartctl.json`.
    pub fn member_name(&self) -> String {
        let mut words = self.command.split_whitespace();
        let tool = match (words.next(), words.next()) {
            (Some("nvme"), Some(sub)) => format!("nvme-{sub}"),
            (Some(t), _) => t.to_string(),
            (None, _) => "tool".into(),
        };
        format!("health/{}-{}-{tool}.json", self.when, self.disk)
    }
}

/// What the tools say about each of `disks` (kernel names), `when` before or after the run.
pub fn capture(when: &str, disks: &[String]) -> Vec<HealthReport> {
    let mut out = Vec::new();
    for disk in disks {
        if let Some(why) = no_smart(disk) {
            out.push(HealthReport {
                when: when.into(),
                disk: disk.clone(),
                command: format!("smartctl -j -a /dev/{disk}"),
                json: None,
                absent: Some(why),
            });
            continue;
        }
        let dev = format!("/dev/{disk}");
        out.push(run(when, disk, "smartctl", &["-j", "-a", &dev]));
        if disk.starts_with("nvme") {
            for sub in ["smart-log", "error-log", "fw-log"] {
                out.push(run(when, disk, "nvme", &[sub, &dev, "-o", "json"]));
            }
        }
    }
    out
}

/// Why a disk has no SMART to ask for, when its kind says so.
fn no_smart(disk: &str) -> Option<String> {
    let kinds = [
        ("loop", "a loop device (a file, not a drive)"),
        ("vd", "a virtio disk (the hypervisor's, with no SMART)"),
        ("ram", "a RAM disk"),
        ("zram", "a compressed RAM disk"),
        ("dm-", "a device-mapper device (ask the disks beneath it)"),
        ("md", "an md RAID device (ask the disks beneath it)"),
    ];
    kinds
        .iter()
        .find(|(p, _)| disk.starts_with(p))
        .map(|(_, what)| format!("{disk} is {what}: no SMART"))
}

/// Runs `tool args`, keeping its JSON; smartctl's exit status is a bit mask of drive
/// conditions, so a JSON answer is kept whatever the status.
fn run(when: &str, disk: &str, tool: &str, args: &[&str]) -> HealthReport {
    let mut r = HealthReport {
        when: when.into(),
        disk: disk.into(),
        command: format!("{tool} {}", args.join(" ")),
        ..HealthReport::default()
    };
    match super::tool::run(tool, args) {
        Err(e) => r.absent = Some(e.to_string()),
        Ok(o) => match serde_json::from_slice::<serde_json::Value>(&o.stdout) {
            Ok(v) => r.json = Some(v),
            Err(_) => {
                let err = String::from_utf8_lossy(&o.stderr);
                r.absent = Some(format!(
                    "{tool} gave no JSON ({}): {}",
                    o.status,
                    err.lines().next().unwrap_or("").trim()
                ));
            }
        },
    }
    r
}

/// The few fields a person reads first from a `smartctl -j -a` answer: model, serial,
/// firmware, overall health, power-on hours, temperature.
pub fn smart_summary(v: &serde_json::Value) -> String {
    let s = |p: &str| {
        v.pointer(p)
            .map(|x| x.to_string().trim_matches('"').to_string())
    };
    let passed = v
        .pointer("/smart_status/passed")
        .and_then(serde_json::Value::as_bool)
        .map(|p| if p { "PASSED" } else { "FAILED" });
    format!(
        "model {}, serial {}, firmware {}, SMART health {}, power-on hours {}, temperature {} C",
        s("/model_name").unwrap_or_else(|| "unknown".into()),
        s("/serial_number").unwrap_or_else(|| "unknown".into()),
        s("/firmware_version").unwrap_or_else(|| "unknown".into()),
        passed.unwrap_or("unknown"),
        s("/power_on_time/hours").unwrap_or_else(|| "unknown".into()),
        s("/temperature/current").unwrap_or_else(|| "unknown".into()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_device_is_noted_absent_without_running_a_tool() {
        let r = capture("before", &["loop3".to_string()]);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].json, None);
        assert!(
            r[0].absent.as_deref().unwrap().contains("loop device"),
            "{r:?}"
        );
        assert_eq!(r[0].member_name(), "health/before-loop3-smartctl.json");
    }

    #[test]
    fn a_captured_smartctl_answer_is_summarised() {
        let text = include_str!("../../../tests/report/captures/smartctl-nvme.json");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            smart_summary(&v),
            "model INTEL SSDPEKNW010T8, serial BTNH93710FS91P0B, firmware 002C, SMART health PASSED, power-on hours 2401, temperature 36 C"
        );
        let r = HealthReport {
            when: "after".into(),
            disk: "nvme0n1".into(),
            command: "nvme smart-log /dev/nvme0n1 -o json".into(),
            json: Some(v),
            absent: None,
        };
        assert_eq!(r.member_name(), "health/after-nvme0n1-nvme-smart-log.json");
    }

    #[test]
    fn a_missing_tool_is_noted_absent() {
        let r = run("after", "sda", "sqliosim-no-such-tool", &["-j"]);
        assert_eq!(
            r.absent.as_deref(),
            Some("sqliosim-no-such-tool is not installed")
        );
    }
}
