//! The facts a run states before it starts and as it stops: the machine and the storage under
//! each file, what carries the I/O, each file's direct-I/O unit, and how the run stopped. They
//! travel as [`Event::Facts`](super::Event::Facts) and [`Event::Stop`](super::Event::Stop).
//!
//! The data types are defined here, below `report`, so that an event can carry them; `report`
//! re-exports them where they used to live (`report::sysinfo::SystemInfo`,
//! `report::blockdev::DeviceInfo`, `report::IoServiceInfo`, `report::json::StopInfo`) and keeps
//! the code that captures and describes them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::io::DirectIoInfo;
use crate::page::FileRole;

/// What the run found out about the machine and its I/O before it started.
#[derive(Debug, Clone, PartialEq)]
pub enum Facts {
    /// The machine and the storage under the test files.
    System(SystemInfo),
    /// What carries the run's disk I/O.
    IoService(IoServiceInfo),
    /// One file's direct-I/O unit.
    Unit(FileUnit),
}

/// One file's direct-I/O unit, as the kernel reported it when the file was opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUnit {
    /// The file.
    pub path: PathBuf,
    /// Data or log.
    pub role: FileRole,
    /// What the backend found out about direct I/O where it lives.
    pub info: DirectIoInfo,
    /// The run uses direct I/O (false: buffered, the unit is not enforced).
    pub direct: bool,
    /// `Force4KLogIO`: a log file's unit is at least 4096.
    pub force_4k_log: bool,
}

/// How the run stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    /// How and when (the JSON summary's `stop`).
    pub info: StopInfo,
    /// The environment error that stopped the run, if one did (not a finding).
    pub environment_error: Option<String>,
    /// The log's warning when a signal cut the run short (empty otherwise).
    pub text: String,
}

/// How a run stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StopInfo {
    /// "completed" (ran its planned course), "signal" (SIGINT or SIGTERM cut it short),
    /// "findings" (stopped on an integrity finding, StopOnError), or "environment_error".
    pub reason: String,
    /// "SIGINT" or "SIGTERM" when `reason` is "signal".
    pub signal: Option<String>,
    /// Seconds from the run start to the stop.
    pub after_s: f64,
    /// Seconds the run was planned to last (cycles × duration), null when open-ended.
    pub planned_s: Option<f64>,
}

/// The I/O service a run asked for (`--engine`) and what carried its I/O.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IoServiceInfo {
    /// What `--engine` asked for: `uring`, `psync`, `libaio` or `sync`.
    pub requested: String,
    /// What carried the I/O: `uring`, `psync` (asked for, io_uring refused, or chosen by the
    /// probe), `libaio`, `sync`, or `memory` (the fault-injection backend, which no I/O service
    /// carries).
    pub used: String,
    /// Why that engine: `default`, `named` (by `--engine`) or `measured` (the engine probe
    /// found io_uring adding latency and chose psync; issue #24 §3). Empty in older logs.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub chosen: String,
    /// What the engine probe measured (8 KiB O_DIRECT reads at queue depth 1 through io_uring
    /// and psync), or why it measured nothing; absent when no probe was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<String>,
    /// The engine the probe found faster than the one named by `--engine` (`psync`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recommended: Option<String>,
    /// Most requests in flight (the I/O service's depth); `None` for `sync` and `memory`.
    pub depth: Option<u64>,
    /// MaxOutstandingIO from the configuration (0: no cap).
    pub max_outstanding_io: u64,
    /// The asynchronous actors submit to io_uring rings of their own, not to the shared service
    /// (issue #15 §3); MaxOutstandingIO then holds their requests by a gate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub own_rings: bool,
    /// The synchronous actors' reads and writes are made on their own threads, not through
    /// the service (unless `--engine` named one engine for everything); MaxOutstandingIO then
    /// holds every request by a gate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub own_sync: bool,
}

/// The machine and the storage under the test files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemInfo {
    /// Host name.
    pub hostname: String,
    /// Kernel: `uname -srvm`.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpu_count: usize,
    /// Total memory, bytes.
    pub memory_bytes: Option<u64>,
    /// One entry per test file.
    pub files: Vec<FileDevice>,
}

/// The device and file system under one test file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileDevice {
    /// The test file.
    pub path: PathBuf,
    /// The block device and its disk.
    pub device: DeviceInfo,
    /// File system type (ext4, xfs, tmpfs, …).
    pub fs_type: String,
    /// Mount point.
    pub mount_point: String,
    /// Mount options (per-mount and super-block options).
    pub mount_options: String,
    /// Mount source (the device as mounted).
    pub mount_source: String,
    /// Bytes available to unprivileged users.
    pub free_bytes: Option<u64>,
    /// Size of the file system, bytes.
    pub total_bytes: Option<u64>,
}

/// What sysfs says about a block device and the disk it is part of.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceInfo {
    /// major:minor of the file's st_dev.
    pub major_minor: String,
    /// Kernel name of the device (sda1, nvme0n1p2, dm-0).
    pub name: String,
    /// Kernel name of the whole disk (sda, nvme0n1).
    pub disk: String,
    /// Model.
    pub model: String,
    /// Serial number.
    pub serial: String,
    /// Firmware revision.
    pub firmware: String,
    /// Logical block size, bytes.
    pub logical_block_size: Option<u64>,
    /// Physical block size, bytes.
    pub physical_block_size: Option<u64>,
    /// "yes", "no" or "unknown".
    pub rotational: String,
    /// "write back", "write through" or "unknown".
    pub write_cache: String,
    /// Whether the device advertises FUA writes (`queue/fua`): "yes", "no" or "unknown".
    pub fua: String,
    /// Active I/O scheduler.
    pub scheduler: String,
}
