//! Hostile result trees given to `sqliosim report`: a host name too long to pad, a file name
//! that is not UTF-8. Neither may panic or hide the corruption another host found.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::support::{as_host, put, report_with, runs, summary};

#[test]
fn a_host_name_longer_than_any_column_is_reported() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let long = "h".repeat(70_000);
    put(dir.path(), "long", &as_host(summary(&runs().clean), &long));
    put(
        dir.path(),
        "short",
        &as_host(summary(&runs().clean), "short"),
    );
    let json = dir.path().join("fleet.json");
    let (code, stdout, stderr) = report_with(&[dir.path()], &["--json", json.to_str().unwrap()]);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains(&long), "the long name is printed whole");
    let short = stdout
        .lines()
        .find(|l| l.starts_with("short "))
        .expect("the short host's row");
    assert!(
        short.len() < 400,
        "short rows are not padded to the long name: {short}"
    );
}

#[test]
fn a_file_name_that_is_not_utf8_does_not_hide_corruption() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    put(dir.path(), "bad", &as_host(summary(&runs().faulty), "bad"));
    let odd = dir.path().join("odd");
    std::fs::create_dir_all(&odd).expect("dir");
    let name = std::ffi::OsStr::from_bytes(b"run\xff.json");
    let doc = as_host(summary(&runs().clean), "odd");
    std::fs::write(odd.join(name), serde_json::to_vec(&doc).unwrap()).expect("write");
    let json = dir.path().join("fleet.json");
    let (code, stdout, stderr) = report_with(&[dir.path()], &["--json", json.to_str().unwrap()]);
    assert_eq!(
        code,
        Some(1),
        "corruption found: exit 1\n{stdout}\n{stderr}"
    );
    let text = std::fs::read_to_string(&json).expect("the fleet JSON is written");
    let shown = Path::new("odd").join("run\u{FFFD}.json");
    assert!(
        text.contains(shown.to_str().unwrap()),
        "the odd file is named (U+FFFD for the byte): {text}"
    );
}
