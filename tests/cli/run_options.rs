//! `run` options as people write them (issue #23 §5, §6): sizes and durations with units, a
//! Windows `-dir 'D:\'` mapped through SQLIOSIM_DRIVE_D, `--json -` on stdout with the console
//! on stderr, and the header's warning for a `--dir` that had to be created.

use super::{scratch, sqliosim, SMALL};
use predicates::str::contains;

#[test]
fn sizes_and_durations_take_units_and_bad_ones_name_the_option() {
    let dir = scratch();
    std::fs::write(dir.path().join("s.ini"), SMALL).unwrap();
    let out = sqliosim(dir.path())
        .args([
            "run",
            "--config",
            "s.ini",
            "--dry-run",
            "--size",
            "1G",
            "--duration",
            "1h30m",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("5400"), "1h30m is 5400 s:\n{text}");
    assert!(text.contains("1024"), "1G is 1024 MB:\n{text}");
    sqliosim(dir.path())
        .args(["run", "--config", "s.ini", "--dry-run", "--duration", "2d"])
        .assert()
        .success();
    sqliosim(dir.path())
        .args([
            "run",
            "--config",
            "s.ini",
            "--dry-run",
            "--duration",
            "90 minutes",
        ])
        .assert()
        .code(2)
        .stderr(contains("--duration").and(contains("1h30m")));
    sqliosim(dir.path())
        .args(["run", "--config", "s.ini", "--dry-run", "--size", "10X"])
        .assert()
        .code(2)
        .stderr(contains("--size").and(contains("10G")));
}

use predicates::prelude::*;

#[test]
fn a_windows_drive_dir_is_mapped_through_sqliosim_drive_or_refused() {
    let dir = scratch();
    std::fs::write(dir.path().join("s.ini"), SMALL).unwrap();
    let d = dir.path().join("d-drive");
    std::fs::create_dir(&d).unwrap();
    let out = sqliosim(dir.path())
        .args(["-cfg", "s.ini", "-dir", r"D:\", "--dry-run"])
        .env("SQLIOSIM_DRIVE_D", &d)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&d.join("d.mdx").display().to_string()),
        "{text}"
    );
    assert!(!text.contains(r"D:\"), "{text}");
    sqliosim(dir.path())
        .args(["-cfg", "s.ini", "-dir", r"D:\", "--dry-run"])
        .env_remove("SQLIOSIM_DRIVE_D")
        .assert()
        .code(2)
        .stderr(contains("SQLIOSIM_DRIVE_D"));
    assert!(!dir.path().join(r"D:\").exists());
}

#[test]
fn json_dash_is_stdout_and_a_created_dir_is_warned_about() {
    let dir = scratch();
    std::fs::write(dir.path().join("s.ini"), SMALL).unwrap();
    let typo = dir.path().join("mnt/nvme0-typo");
    let out = sqliosim(dir.path())
        .args([
            "run",
            "--config",
            "s.ini",
            "--duration",
            "1",
            "--seed",
            "7",
            "--json",
            "-",
        ])
        .arg("--dir")
        .arg(&typo)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is the JSON summary alone ({e}):\n{stdout}"));
    assert_eq!(doc["schema"], "sqliosim-summary/2");
    assert_eq!(doc["complete"], true);
    assert!(!dir.path().join("-").exists(), "no file named -");
    assert!(
        stderr.contains("I/O engine"),
        "the console went to stderr:\n{stderr}"
    );
    let warned = format!("{} did not exist and is created now", typo.display());
    assert!(stderr.contains(&warned), "{stderr}");
    let log = std::fs::read_to_string(typo.join("sqliosim.log.xml")).expect("the XML log");
    assert!(
        log.contains("did not exist and is created now"),
        "the log says so too"
    );
}
