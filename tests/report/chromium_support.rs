//! Headless Chromium for the HTML tests (the run report and the fleet page): found on PATH,
//! skipped with a SKIPPED line when missing unless SQLIOSIM_REQUIRE_CHROMIUM=1 (CI), and run
//! with the flags a sandbox-less, network-less machine needs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// Chromium, or `None` after saying the test is skipped; without it the test fails when
/// SQLIOSIM_REQUIRE_CHROMIUM=1.
pub fn chromium_or_skip() -> Option<PathBuf> {
    let bin = chromium();
    if bin.is_none() {
        assert!(
            std::env::var("SQLIOSIM_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "chromium is required but not installed"
        );
        println!("SKIPPED: chromium not installed");
    }
    bin
}

/// Runs headless Chromium on `page` with `extra` arguments (`--dump-dom`, a screenshot…);
/// (stdout, stderr).
pub fn run_chromium(bin: &Path, page: &Path, profile: &Path, extra: &[String]) -> (String, String) {
    let mut cmd = Command::new("timeout");
    cmd.arg("180").arg(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    cmd.args(extra).arg(format!("file://{}", page.display()));
    let out = cmd.output().expect("chromium runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
