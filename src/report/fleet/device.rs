//! A device of the fleet: the key a row is keyed on ([`DeviceKey`]: the kernel device under a
//! run's files and its disk's identity) and one run's figures on it ([`DevicePart`]). The
//! run's record, its parts and the XML log's host facts all speak of it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::facts::blockdev::DeviceInfo;
use crate::report::facts::UNKNOWN;
use crate::stats::{Latency, LatencyHistogram};

/// The device a row is keyed on: the kernel device under the files and its disk's identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct DeviceKey {
    /// `/dev/NAME` of the device the files live on (partition, dm or loop device), or
    /// "unknown".
    pub name: String,
    /// Model of its disk.
    pub model: String,
    /// Serial number of its disk.
    pub serial: String,
    /// Firmware revision of its disk.
    pub firmware: String,
}

impl DeviceKey {
    /// Nothing known about the device.
    pub fn unknown() -> DeviceKey {
        let u = || UNKNOWN.to_string();
        DeviceKey {
            name: u(),
            model: u(),
            serial: u(),
            firmware: u(),
        }
    }

    /// The key of what sysinfo read about a device.
    pub fn from_info(d: &DeviceInfo) -> DeviceKey {
        let known = |s: &str| !s.is_empty() && s != UNKNOWN;
        let name = [&d.name, &d.disk]
            .into_iter()
            .find(|n| known(n))
            .map_or_else(|| UNKNOWN.to_string(), |n| format!("/dev/{n}"));
        DeviceKey {
            name,
            model: d.model.clone(),
            serial: d.serial.clone(),
            firmware: d.firmware.clone(),
        }
    }
}

/// Counters, rates and latency of one run on one device.
#[derive(Debug, Clone)]
pub struct DevicePart {
    /// The device.
    pub device: DeviceKey,
    /// Reads and writes of every kind.
    pub ops: u64,
    /// Seconds the figures cover (weights the rates when runs are merged).
    pub elapsed_s: f64,
    /// Reads and writes per second.
    pub iops: f64,
    /// MB/s (2^20 bytes) read and written.
    pub mb_per_s: f64,
    /// Percentiles as the run recorded them.
    pub recorded: Latency,
    /// The latency histogram (schema /2), when the run carried one for this device.
    pub hist: Option<LatencyHistogram>,
    /// Times I/O was throttled (SQLIOSim's "Number of times IO throttled").
    pub throttled: u64,
    /// Integrity findings by class.
    pub by_class: BTreeMap<String, u64>,
}
