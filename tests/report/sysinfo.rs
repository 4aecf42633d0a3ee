//! System information: best effort, never failing, with "unknown" for what cannot be read.

use sqliosim::report::facts::blockdev::parse_mountinfo_line;
use sqliosim::report::facts::sysinfo::{capture, describe};
use sqliosim::report::facts::UNKNOWN;

#[test]
fn captures_machine_and_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-yet-created.mdx");
    let info = capture(std::slice::from_ref(&file));
    assert!(info.kernel.starts_with("Linux "), "{}", info.kernel);
    assert!(info.cpu_count >= 1);
    assert!(info.memory_bytes.unwrap_or(0) > 0);
    let f = &info.files[0];
    assert_eq!(f.path, file);
    assert_ne!(f.fs_type, UNKNOWN);
    assert!(f.free_bytes.is_some() && f.total_bytes.is_some());
    assert!(!f.device.major_minor.is_empty());
    assert!(describe(&info)[1].contains("not-yet-created.mdx"));
}

#[test]
fn mountinfo_lines_are_parsed_with_escapes() {
    let line =
        "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext3 /dev/root rw,errors=continue";
    let m = parse_mountinfo_line(line).unwrap();
    assert_eq!(m.mount_point, "/mnt/my disk");
    assert_eq!(m.major_minor, "98:0");
    assert_eq!(m.fs_type, "ext3");
    assert_eq!(m.source, "/dev/root");
    assert_eq!(m.options, "rw,noatime,rw,errors=continue");
    assert!(parse_mountinfo_line("garbage").is_none());
}

#[test]
fn missing_device_is_unknown_not_an_error() {
    let d = sqliosim::report::facts::blockdev::device(4095, 1_048_575);
    assert_eq!(d.major_minor, "4095:1048575");
    assert_eq!((d.model.as_str(), d.serial.as_str()), (UNKNOWN, UNKNOWN));
}
