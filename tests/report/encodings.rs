//! `sqliosim report` over an XML log saved as UTF-16, as Windows SQLIOSim writes its
//! logs: with a byte-order mark (little- or big-endian) it reads the same as the UTF-8 file;
//! without one it is refused with exit 2 naming the file.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::str::contains;

use super::fixtures;

/// `text` as UTF-16 with a byte-order mark (`bom`), little- or big-endian.
fn utf16(text: &str, big_endian: bool, bom: bool) -> Vec<u8> {
    let mut out = match (bom, big_endian) {
        (false, _) => Vec::new(),
        (true, true) => vec![0xFE, 0xFF],
        (true, false) => vec![0xFF, 0xFE],
    };
    for unit in text.encode_utf16() {
        let b = if big_endian {
            unit.to_be_bytes()
        } else {
            unit.to_le_bytes()
        };
        out.extend_from_slice(&b);
    }
    out
}

/// `bytes` saved as sqliosim.log.xml in a directory of its own under `root` (no JSON
/// summary beside it, so the log alone decides).
fn saved(root: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sqliosim.log.xml");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Exit code and stdout of `sqliosim report PATH`, the path masked.
fn report(path: &Path) -> (Option<i32>, String) {
    let out = Command::cargo_bin("sqliosim")
        .unwrap()
        .arg("report")
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace(&*path.to_string_lossy(), "LOG");
    (out.status.code(), text)
}

#[test]
fn a_utf16_log_with_a_bom_reads_as_the_utf8_one() {
    let run = tempfile::tempdir().unwrap();
    fixtures::run(run.path(), &fixtures::every_class(), 50);
    let raw = std::fs::read_to_string(run.path().join("sqliosim.log.xml")).unwrap();
    // Windows tools declare what they wrote.
    let declared = raw.replacen("encoding='UTF-8'", "encoding='UTF-16'", 1);
    let root = tempfile::tempdir().unwrap();
    let (code, want) = report(&saved(root.path(), "utf8", raw.as_bytes()));
    assert_eq!(code, Some(1), "{want}");
    assert!(
        want.contains("Verdict: FAILED: 14 integrity error(s)"),
        "{want}"
    );
    for (name, big_endian) in [("le", false), ("be", true)] {
        let path = saved(root.path(), name, &utf16(&declared, big_endian, true));
        assert_eq!(report(&path), (code, want.clone()), "UTF-16{name}");
    }
}

#[test]
fn a_utf16_log_without_a_bom_is_refused_naming_the_file() {
    let run = tempfile::tempdir().unwrap();
    fixtures::run(run.path(), &[], 50);
    let raw = std::fs::read_to_string(run.path().join("sqliosim.log.xml")).unwrap();
    let root = tempfile::tempdir().unwrap();
    for (name, big_endian) in [("le", false), ("be", true)] {
        let path = saved(root.path(), name, &utf16(&raw, big_endian, false));
        Command::cargo_bin("sqliosim")
            .unwrap()
            .arg("report")
            .arg(&path)
            .assert()
            .code(2)
            .stderr(contains(path.to_string_lossy().as_ref()))
            .stderr(contains("byte-order mark"));
    }
}
