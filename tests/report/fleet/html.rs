//! The fleet page: self-contained, its charts and marks present, and rendered by headless
//! Chromium without script errors. Same rules as tests/report/html.rs: skipped when Chromium
//! is missing, unless SQLIOSIM_REQUIRE_CHROMIUM=1 (CI).

use std::path::{Path, PathBuf};

use super::support::*;
use crate::chromium_support::{chromium_or_skip, run_chromium};

/// A fleet page: four clean hosts, a slow one, and a corrupt one.
fn page(dir: &Path) -> PathBuf {
    let fleet = dir.join("fleet");
    for i in 1..=4 {
        put(
            &fleet,
            &format!("host{i}"),
            &as_host(summary(&runs().clean), &format!("host{i}")),
        );
    }
    put(
        &fleet,
        "slow",
        &scaled_iops(as_host(summary(&runs().clean), "slow"), 0.1),
    );
    put(&fleet, "host9", &as_host(summary(&runs().faulty), "host9"));
    let html = dir.join("fleet.html");
    let (code, out, err) = report_with(&[&fleet], &["--html", html.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    html
}

#[test]
fn fleet_page_is_self_contained_and_marks_corrupt_and_outlier_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(page(dir.path())).unwrap();
    // IOPS bars, p99 bars, latency distributions.
    assert_eq!(text.matches("<svg").count(), 3, "charts");
    assert!(!text.contains("<script") && !text.contains(" src=") && !text.contains("<link"));
    assert!(text.contains("id='verdict'") && text.contains("corruption on host9"));
    assert!(
        text.contains("<tr class='corrupt'><td class='l w'>host9</td>"),
        "corrupt row marked"
    );
    assert!(
        text.contains("<tr class='outlier'><td class='l w'>slow</td>"),
        "outlier row marked"
    );
    assert!(
        text.contains("fleet (merged)"),
        "the fleet's distribution is drawn"
    );
    assert!(
        text.contains("median absolute deviations"),
        "the rule is stated"
    );
    // Bars: red for the corrupt host, orange for the outlier.
    assert!(
        text.contains("#C81E1E") || text.contains("rgb(200,30,30)") || text.contains("#c81e1e"),
        "red bar"
    );
    assert!(
        text.contains("#F08C00") || text.contains("rgb(240,140,0)") || text.contains("#f08c00"),
        "orange bar"
    );
}

#[test]
fn fleet_page_renders_in_headless_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = page(dir.path());
    let (dom, err) = run_chromium(
        &bin,
        &page,
        &dir.path().join("profile"),
        &["--dump-dom".into()],
    );
    assert!(!err.contains("Uncaught"), "script errors: {err}");
    assert_eq!(dom.matches("<svg").count(), 3, "charts in the rendered DOM");
    for id in [
        "verdict",
        "corruption",
        "totals",
        "chart-iops",
        "chart-p99",
        "chart-latency",
        "fleet-table",
        "outlier-rule",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "{id} in the DOM");
    }
    assert!(
        dom.contains("CORRUPTION on host9 (/dev/"),
        "corruption line in the DOM"
    );
    assert_eq!(dom.matches("<tr class=\"corrupt\">").count(), 1);
}

/// Short words of the table (the verdict, the device name) are never broken inside ("CORRUPTI
/// ON", "/dev/vd a" were): their cells do not wrap. The "* not mergeable" footnote comes only
/// with a row that carries the mark (it stood under every table).
#[test]
fn fleet_table_keeps_words_whole_and_footnotes_only_marked_rows() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(page(dir.path())).unwrap();
    assert!(
        text.contains("td.w{overflow-wrap:normal;white-space:nowrap}")
            && text.contains("<td class='l w'>CORRUPT"),
        "verdict cells do not wrap"
    );
    assert!(
        !text.contains("* not mergeable"),
        "every run here has a histogram: no footnote"
    );
    // The page says when its runs ran, and when it was made (it said neither).
    let when = regex::Regex::new(
        r"<p id='when'>Runs from \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ to \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ; this page made \d{4}-",
    )
    .unwrap();
    assert!(when.is_match(&text), "no dates on the page");
    let fleet = dir.path().join("fleet");
    let mut old = as_schema1(as_host(summary(&runs().clean), "old1"));
    old["system"]["hostname"] = serde_json::json!("old1");
    put(&fleet, "old1", &old);
    let html = dir.path().join("fleet2.html");
    let (code, out, err) = report_with(&[&fleet], &["--html", html.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    let text = std::fs::read_to_string(html).unwrap();
    assert!(
        text.contains("* not mergeable"),
        "the marked row's footnote"
    );
}
