//! The host as a vendor's RMA asks for it: DMI system vendor, model and serial, the kernel
//! command line, the block stack (`lsblk -J -O`, md and dm from sysfs), the PCIe AER counters
//! of the devices under test and their queue settings. Best effort like
//! [`super::sysinfo`]: what cannot be read is absent or `unknown`, and never fails a run.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::facts::{or_unknown, read_opt};

/// The queue settings recorded for each disk (`/sys/block/DISK/queue/NAME`).
const QUEUE: &[&str] = &[
    "scheduler",
    "nr_requests",
    "write_cache",
    "fua",
    "rotational",
    "logical_block_size",
    "physical_block_size",
    "max_sectors_kb",
];

/// The host facts of a run's evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostFacts {
    /// `/sys/class/dmi/id/sys_vendor`.
    pub system_vendor: String,
    /// `/sys/class/dmi/id/product_name`.
    pub system_model: String,
    /// `/sys/class/dmi/id/product_serial` (readable by root only).
    pub system_serial: String,
    /// `/proc/cmdline`.
    pub kernel_command_line: String,
    /// `lsblk -J -O`, when lsblk is there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lsblk: Option<serde_json::Value>,
    /// Why `lsblk` is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lsblk_absent: Option<String>,
    /// Each md or dm device: its kind, name and the devices beneath it.
    pub stacked: Vec<Stacked>,
    /// Per disk under test: its queue settings (`queue/NAME` → value).
    pub queues: BTreeMap<String, BTreeMap<String, String>>,
    /// Per disk under test: the PCIe AER counters of the PCI function above it
    /// (`aer_dev_correctable`, … → their text), absent when it has none.
    pub aer: BTreeMap<String, BTreeMap<String, String>>,
}

/// One md or device-mapper device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stacked {
    /// Kernel name (`dm-0`, `md127`).
    pub device: String,
    /// `dm` or `md`.
    pub kind: String,
    /// dm name (`vg-lv`, a multipath wwid) or md RAID level.
    pub name: String,
    /// dm uuid (`LVM-…`, `mpath-…`, `CRYPT-…`), empty for md.
    pub uuid: String,
    /// The devices beneath (`slaves/`).
    pub beneath: Vec<String>,
}

/// The host facts, with queue and AER details for `disks` (kernel names of the disks under
/// test).
pub fn capture(disks: &[String]) -> HostFacts {
    let dmi = |n: &str| or_unknown(read_opt(format!("/sys/class/dmi/id/{n}")));
    let mut h = HostFacts {
        system_vendor: dmi("sys_vendor"),
        system_model: dmi("product_name"),
        system_serial: dmi("product_serial"),
        kernel_command_line: or_unknown(read_opt("/proc/cmdline")),
        stacked: stacked(Path::new("/sys/block")),
        ..HostFacts::default()
    };
    match super::tool::run("lsblk", &["-J", "-O"]) {
        Ok(o) if o.status.success() => match serde_json::from_slice(&o.stdout) {
            Ok(v) => h.lsblk = Some(v),
            Err(e) => h.lsblk_absent = Some(format!("lsblk -J -O gave no JSON: {e}")),
        },
        Ok(o) => h.lsblk_absent = Some(format!("lsblk -J -O failed ({})", o.status)),
        Err(e) => h.lsblk_absent = Some(e.to_string()),
    }
    for d in disks
        .iter()
        .filter(|d| !d.is_empty() && d.as_str() != "unknown")
    {
        let dir = Path::new("/sys/block").join(d);
        let q: BTreeMap<String, String> = QUEUE
            .iter()
            .filter_map(|n| Some((n.to_string(), read_opt(dir.join("queue").join(n))?)))
            .collect();
        h.queues.insert(d.clone(), q);
        if let Some(aer) = aer(&dir) {
            h.aer.insert(d.clone(), aer);
        }
    }
    h
}

/// The md and dm devices among `block` (`/sys/block`).
fn stacked(block: &Path) -> Vec<Stacked> {
    let Ok(rd) = std::fs::read_dir(block) else {
        return Vec::new();
    };
    let mut v: Vec<Stacked> = rd
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let device = e.file_name().to_string_lossy().into_owned();
            let (kind, name, uuid) = if dir.join("dm").is_dir() {
                let name = read_opt(dir.join("dm/name")).unwrap_or_default();
                (
                    "dm",
                    name,
                    read_opt(dir.join("dm/uuid")).unwrap_or_default(),
                )
            } else if dir.join("md").is_dir() {
                (
                    "md",
                    read_opt(dir.join("md/level")).unwrap_or_default(),
                    String::new(),
                )
            } else {
                return None;
            };
            let mut beneath: Vec<String> = std::fs::read_dir(dir.join("slaves"))
                .map(|rd| {
                    rd.flatten()
                        .map(|s| s.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            beneath.sort();
            Some(Stacked {
                device,
                kind: kind.into(),
                name,
                uuid,
                beneath,
            })
        })
        .collect();
    v.sort_by(|a, b| a.device.cmp(&b.device));
    v
}

/// The AER counters of the nearest PCI function above the disk at `dir` (`/sys/block/DISK`).
fn aer(dir: &Path) -> Option<BTreeMap<String, String>> {
    let real = std::fs::canonicalize(dir).ok()?;
    let func = real
        .ancestors()
        .find(|a| a.join("aer_dev_correctable").exists())?;
    let names = ["aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"];
    let mut m: BTreeMap<String, String> = names
        .iter()
        .filter_map(|n| Some((n.to_string(), read_opt(func.join(n))?)))
        .collect();
    m.insert(
        "pci_function".into(),
        func.file_name()?.to_string_lossy().into_owned(),
    );
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stacked_device_names_its_kind_and_what_lies_beneath() {
        let tmp = tempfile::tempdir().unwrap();
        let dm = tmp.path().join("dm-0");
        std::fs::create_dir_all(dm.join("dm")).unwrap();
        std::fs::create_dir_all(dm.join("slaves/sdb1")).unwrap();
        std::fs::create_dir_all(dm.join("slaves/sda1")).unwrap();
        std::fs::write(dm.join("dm/name"), "vg-data\n").unwrap();
        std::fs::write(dm.join("dm/uuid"), "LVM-abc\n").unwrap();
        std::fs::create_dir_all(tmp.path().join("sda")).unwrap();
        let v = stacked(tmp.path());
        assert_eq!(
            v,
            vec![Stacked {
                device: "dm-0".into(),
                kind: "dm".into(),
                name: "vg-data".into(),
                uuid: "LVM-abc".into(),
                beneath: vec!["sda1".into(), "sdb1".into()],
            }]
        );
    }

    #[test]
    fn the_host_facts_here_have_the_command_line_and_queue_settings_of_a_real_disk() {
        let disk = std::fs::read_dir("/sys/block")
            .ok()
            .and_then(|mut rd| rd.find_map(|e| e.ok()))
            .map(|e| e.file_name().to_string_lossy().into_owned());
        // A container without /sys/block has no disk to describe: nothing to check.
        let Some(disk) = disk else {
            return;
        };
        let h = capture(std::slice::from_ref(&disk));
        assert_ne!(h.kernel_command_line, "unknown");
        let q = &h.queues[&disk];
        assert!(q.contains_key("logical_block_size"), "{q:?}");
        assert!(h.lsblk.is_some() || h.lsblk_absent.is_some());
    }
}
