//! `sqliosim selftest` through the binary: every fault class injected in memory is detected
//! with the right verdict, the table says so row by row, and the exit code is 0.

use crate::crash_support::{assert_success, bin};
use assert_cmd::Command;

/// The table rows of a self-test's stdout (lines after the header, before the summary).
fn rows(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("via "))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

#[test]
fn every_fault_in_memory_is_detected_and_the_exit_code_is_0() {
    let out = bin()
        .args(["selftest", "--seed", "11"])
        .output()
        .expect("run selftest");
    let stdout = assert_success(&out);
    let rows = rows(&stdout);
    assert!(
        rows.len() >= 11,
        "a row per fault class and the clean run:\n{stdout}"
    );
    for class in [
        "lost_write",
        "torn_write",
        "misdirected_write",
        "bit_rot",
        "zeroed_sectors",
        "stale_read",
        "read_error",
        "write_error",
        "short_read",
    ] {
        assert!(
            rows.iter().any(|r| r.contains(class)),
            "no row expects {class}:\n{stdout}"
        );
    }
    for r in &rows {
        assert!(
            r.starts_with("memory "),
            "only in-memory rows without --fuse: {r}"
        );
        assert!(r.trim_end().ends_with(" yes"), "not detected: {r}");
    }
    assert!(stdout.contains(&format!(
        "{} of {} scenarios as expected",
        rows.len(),
        rows.len()
    )));
    assert!(stdout.contains("seed 11"), "the seed is printed");
}

#[test]
fn bad_options_are_usage_errors() {
    Command::cargo_bin("sqliosim")
        .expect("binary")
        .args(["selftest", "--seed", "x"])
        .assert()
        .code(2);
    Command::cargo_bin("sqliosim")
        .expect("binary")
        .args(["selftest", "--help"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("--fuse"));
}

#[test]
fn with_fuse_the_faultfs_rows_are_detected_too() {
    if !faultfs::fuse_or_skip("selftest --fuse") {
        return;
    }
    let faultfs = fuse_bin();
    let out = bin()
        .env("FAULTFS_BIN", &faultfs)
        .args(["selftest", "--fuse", "--seed", "5"])
        .output()
        .expect("run selftest --fuse");
    let stdout = assert_success(&out);
    let rows = rows(&stdout);
    let fuse: Vec<&&str> = rows.iter().filter(|r| r.starts_with("faultfs ")).collect();
    assert!(fuse.len() >= 10, "a faultfs row per fault class:\n{stdout}");
    assert!(
        rows.iter().all(|r| r.trim_end().ends_with(" yes")),
        "{stdout}"
    );
}

#[test]
fn with_fuse_but_no_faultfs_binary_it_says_so() {
    let out = bin()
        .env("FAULTFS_BIN", "/nonexistent/faultfs")
        .args(["selftest", "--fuse", "--seed", "3"])
        .output()
        .expect("run selftest --fuse");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("FUSE scenarios not run:"), "{stdout}");
    assert!(rows(&stdout).iter().all(|r| r.starts_with("memory ")));
}

fn fuse_bin() -> std::path::PathBuf {
    crate::fuse_support::faultfs_bin()
}
