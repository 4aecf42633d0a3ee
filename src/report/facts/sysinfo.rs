//! System information for escalation: kernel, CPU, memory, and the device under each file.
//!
//! Everything is best effort: a field that cannot be read is "unknown" (or null in JSON), never
//! an error, so a container or an odd file system cannot stop a run.

use std::path::{Path, PathBuf};

use super::{or_unknown, UNKNOWN};
use crate::report::facts::blockdev::{self, DeviceInfo};

pub use crate::events::facts::{FileDevice, SystemInfo};

/// Captures the system information for `files` (which need not exist yet).
pub fn capture(files: &[PathBuf]) -> SystemInfo {
    let u = rustix::system::uname();
    let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
    SystemInfo {
        hostname: s(u.nodename()),
        kernel: format!(
            "{} {} {} {}",
            s(u.sysname()),
            s(u.release()),
            s(u.version()),
            s(u.machine())
        ),
        cpu_model: or_unknown(cpu_model()),
        cpu_count: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_bytes: mem_total(),
        files: files.iter().map(|p| file_device(p)).collect(),
    }
}

fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The nearest existing ancestor of `path` (the file itself when it exists).
fn existing(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut p = abs.as_path();
    loop {
        if p.exists() {
            return p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => return abs,
        }
    }
}

/// The device and file system under one file.
pub fn file_device(path: &Path) -> FileDevice {
    let at = existing(path);
    let mut fd = FileDevice {
        path: path.to_path_buf(),
        ..FileDevice::default()
    };
    let dev = rustix::fs::stat(&at)
        .ok()
        .map(|st| (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev)));
    // btrfs files carry anonymous device numbers: the device is the one it is mounted from.
    let block = dev.and_then(|(ma, mi)| crate::io::sysfs::block_device(ma, mi, &at));
    fd.device = block
        .or(dev)
        .map_or_else(DeviceInfo::unknown, |(ma, mi)| blockdev::device(ma, mi));
    let mount = blockdev::mount_of(&at, dev);
    fd.fs_type = or_unknown(mount.as_ref().map(|m| m.fs_type.clone()));
    fd.mount_point = or_unknown(mount.as_ref().map(|m| m.mount_point.clone()));
    fd.mount_options = or_unknown(mount.as_ref().map(|m| m.options.clone()));
    fd.mount_source = or_unknown(mount.map(|m| m.source));
    if let Ok(v) = rustix::fs::statvfs(&at) {
        fd.free_bytes = Some(v.f_bavail.saturating_mul(v.f_frsize));
        fd.total_bytes = Some(v.f_blocks.saturating_mul(v.f_frsize));
    }
    fd
}

/// Human-readable lines, one log entry each.
pub fn describe(info: &SystemInfo) -> Vec<String> {
    let opt = |v: Option<u64>| v.map_or_else(|| UNKNOWN.to_string(), |v| v.to_string());
    let mut out = vec![format!(
        "System: host {}, kernel {}, CPU {} x {}, memory {} bytes",
        info.hostname,
        info.kernel,
        info.cpu_count,
        info.cpu_model,
        opt(info.memory_bytes)
    )];
    for f in &info.files {
        let d = &f.device;
        out.push(format!(
            "Storage for {}: device {} (disk {}, {}), model {}, serial {}, firmware {}, logical/physical block size {}/{}, rotational {}, write cache {}, scheduler {}; file system {} on {} mounted at {} ({}), free {} of {} bytes",
            f.path.display(), d.name, d.disk, d.major_minor, d.model, d.serial, d.firmware,
            opt(d.logical_block_size), opt(d.physical_block_size), d.rotational, d.write_cache,
            d.scheduler, f.fs_type, f.mount_source, f.mount_point, f.mount_options,
            opt(f.free_bytes), opt(f.total_bytes)
        ));
    }
    out
}

/// The console header's line for each file (issue #23 §5: guard against burning in the wrong
/// disk): `Device under /data/sqliosim.mdx: sdb1 on disk sdb, model X, serial Y; ext4 mounted
/// at /data`.
pub fn console_lines(info: &SystemInfo) -> Vec<String> {
    info.files
        .iter()
        .map(|f| {
            let d = &f.device;
            let dev = if d.name == d.disk || d.disk == UNKNOWN {
                d.name.clone()
            } else {
                format!("{} on disk {}", d.name, d.disk)
            };
            format!(
                "Device under {}: {dev}, model {}, serial {}; {} mounted at {}",
                f.path.display(),
                d.model,
                d.serial,
                f.fs_type,
                f.mount_point
            )
        })
        .collect()
}

/// The run header's durability line: how write-through writes are made durable
/// (`DurabilityMode`, only with `WriteThrough=TRUE`), and for each disk under the files (once
/// each) whether it advertises FUA (`queue/fua`) and a volatile write cache
/// (`queue/write_cache`), e.g. `Durability: ForcedFlush (files opened …); disk sda: FUA no,
/// write cache write back`.
pub fn durability_line(
    write_through: bool,
    mode: crate::config::DurabilityMode,
    per_write: bool,
    info: &SystemInfo,
) -> String {
    let how = durability_how(write_through, mode, per_write);
    let mut disks: Vec<String> = Vec::new();
    for d in info.files.iter().map(|f| &f.device) {
        let line = match d.disk.as_str() {
            UNKNOWN => "no block device (FUA and write cache unknown)".to_string(),
            disk => format!("disk {disk}: FUA {}, write cache {}", d.fua, d.write_cache),
        };
        if !disks.contains(&line) {
            disks.push(line);
        }
    }
    format!("Durability: {how}; {}", disks.join("; "))
}

/// How write-through writes are made durable, the first part of [`durability_line`];
/// `per_write`: `ForcedFlushPerWrite=TRUE`.
pub fn durability_how(
    write_through: bool,
    mode: crate::config::DurabilityMode,
    per_write: bool,
) -> String {
    if write_through {
        format!("{mode} ({})", mode.describe(per_write))
    } else {
        "WriteThrough=FALSE (no write is write-through: writes count as durable only at the run's sync points)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_durability_line_names_the_mode_and_each_disks_fua_and_write_cache_once() {
        use crate::config::DurabilityMode;
        let mut d = DeviceInfo::unknown();
        (d.name, d.disk, d.fua, d.write_cache) = (
            "sdb1".into(),
            "sdb".into(),
            "no".into(),
            "write back".into(),
        );
        let file = |p: &str, device: &DeviceInfo| FileDevice {
            path: p.into(),
            device: device.clone(),
            ..FileDevice::default()
        };
        let info = SystemInfo {
            files: vec![
                file("/d/a.mdx", &d),
                file("/d/a.ldx", &d),
                file("/t/b.mdx", &DeviceInfo::unknown()),
            ],
            ..SystemInfo::default()
        };
        let line = durability_line(true, DurabilityMode::ForcedFlush, false, &info);
        assert!(
            line.starts_with("Durability: ForcedFlush (files opened O_DIRECT without O_DSYNC"),
            "{line}"
        );
        assert!(line.contains("; disk sdb: FUA no, write cache write back; no block device (FUA and write cache unknown)"), "{line}");
        assert_eq!(line.matches("disk sdb").count(), 1, "{line}");
        assert!(line.contains("one shared by the writes"), "{line}");
        let each = durability_line(true, DurabilityMode::ForcedFlush, true, &info);
        assert!(
            each.contains("an fdatasync of its own (ForcedFlushPerWrite)"),
            "{each}"
        );
        let fua = durability_line(true, DurabilityMode::Fua, false, &info);
        assert!(
            fua.starts_with("Durability: FUA (files opened O_DIRECT|O_DSYNC"),
            "{fua}"
        );
        let off = durability_line(false, DurabilityMode::Fua, false, &info);
        assert!(off.starts_with("Durability: WriteThrough=FALSE"), "{off}");
    }

    #[test]
    fn the_console_names_the_device_model_serial_and_mount_of_each_file() {
        let mut d = DeviceInfo::unknown();
        (d.name, d.disk, d.model, d.serial) = (
            "sdb1".into(),
            "sdb".into(),
            "ACME 9000".into(),
            "S3R14L".into(),
        );
        let info = SystemInfo {
            files: vec![FileDevice {
                path: "/data/sqliosim.mdx".into(),
                device: d,
                fs_type: "ext4".into(),
                mount_point: "/data".into(),
                ..FileDevice::default()
            }],
            ..SystemInfo::default()
        };
        assert_eq!(
            console_lines(&info),
            vec!["Device under /data/sqliosim.mdx: sdb1 on disk sdb, model ACME 9000, serial S3R14L; ext4 mounted at /data"]
        );
    }
}
