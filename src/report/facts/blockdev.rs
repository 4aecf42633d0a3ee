//! The block device under a file (sysfs) and the mount it belongs to (/proc/self/mountinfo).

use std::path::{Path, PathBuf};

use crate::report::facts::{or_unknown, read_opt, UNKNOWN};

pub use crate::events::facts::DeviceInfo;

impl DeviceInfo {
    /// Nothing known.
    pub fn unknown() -> DeviceInfo {
        let u = || UNKNOWN.to_string();
        DeviceInfo {
            major_minor: u(),
            name: u(),
            disk: u(),
            model: u(),
            serial: u(),
            firmware: u(),
            logical_block_size: None,
            physical_block_size: None,
            rotational: u(),
            write_cache: u(),
            fua: u(),
            scheduler: u(),
        }
    }
}

/// The device `major:minor`, with its parent disk when it is a partition.
pub fn device(major: u32, minor: u32) -> DeviceInfo {
    let mut d = DeviceInfo::unknown();
    d.major_minor = format!("{major}:{minor}");
    let Ok(dir) = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")) else {
        return d;
    };
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    d.name = or_unknown(name(&dir));
    let disk: PathBuf = match dir.join("partition").exists() {
        true => dir.parent().map_or(dir.clone(), Path::to_path_buf),
        false => dir.clone(),
    };
    d.disk = or_unknown(name(&disk));
    let first = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| read_opt(disk.join(n)).filter(|s| !s.is_empty()))
    };
    d.model = or_unknown(first(&["device/model", "device/name"]));
    d.serial = or_unknown(first(&["device/serial", "serial", "device/wwid", "wwid"]));
    d.firmware = or_unknown(first(&[
        "device/firmware_rev",
        "device/rev",
        "device/fw_rev",
    ]));
    let num = |n: &str| read_opt(disk.join(n)).and_then(|s| s.parse().ok());
    d.logical_block_size = num("queue/logical_block_size");
    d.physical_block_size = num("queue/physical_block_size");
    d.rotational = match read_opt(disk.join("queue/rotational")).as_deref() {
        Some("1") => "yes".into(),
        Some("0") => "no".into(),
        _ => UNKNOWN.into(),
    };
    d.write_cache = or_unknown(read_opt(disk.join("queue/write_cache")));
    d.fua = match read_opt(disk.join("queue/fua")).as_deref() {
        Some("1") => "yes".into(),
        Some("0") => "no".into(),
        _ => UNKNOWN.into(),
    };
    d.scheduler = or_unknown(read_opt(disk.join("queue/scheduler")).map(|s| active_scheduler(&s)));
    d
}

/// "mq-deadline" out of "[mq-deadline] kyber none".
fn active_scheduler(s: &str) -> String {
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if a < b => s[a + 1..b].to_string(),
        _ => s.to_string(),
    }
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// major:minor of the mounted file system.
    pub major_minor: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Per-mount options, then super-block options.
    pub options: String,
    /// File system type.
    pub fs_type: String,
    /// Mount source.
    pub source: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok());
        match (b[i], oct) {
            (b'\\', Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line.
pub fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    Some(Mount {
        major_minor: l.get(2)?.to_string(),
        mount_point: unescape(l.get(4)?),
        options: format!("{},{}", l.get(5)?, r.get(2).unwrap_or(&""))
            .trim_end_matches(',')
            .to_string(),
        fs_type: r.first()?.to_string(),
        source: unescape(r.get(1).unwrap_or(&UNKNOWN)),
    })
}

/// The mount holding `path`: the longest mount point that is a prefix of it (the last one mounted), then one
/// whose device matches `dev`.
pub fn mount_of(path: &Path, dev: Option<(u32, u32)>) -> Option<Mount> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = dev.map(|(a, b)| format!("{a}:{b}"));
    text.lines()
        .filter_map(parse_mountinfo_line)
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| (m.mount_point.len(), Some(&m.major_minor) == want.as_ref()))
}
