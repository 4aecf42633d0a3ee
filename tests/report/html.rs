//! The HTML report: self-contained, charts present, and rendered by headless Chromium without
//! script errors. Set SQLIOSIM_REQUIRE_CHROMIUM=1 (CI) to fail instead of skipping when
//! Chromium is missing, and SQLIOSIM_UPDATE_SCREENSHOT=1 to refresh docs/report-screenshot.png.

use std::path::{Path, PathBuf};

use super::chromium_support::{chromium_or_skip, run_chromium};
use super::fixtures;

fn report(dir: &Path) -> PathBuf {
    fixtures::run(dir, &fixtures::every_class(), 50);
    let html = dir.join("report.html");
    let args = [
        "sqliosim report".into(),
        dir.join("summary.json").into_os_string(),
        "--html".into(),
        html.clone().into_os_string(),
    ];
    sqliosim::report::main(args.to_vec()).unwrap();
    html
}

#[test]
fn html_is_self_contained_with_charts() {
    let dir = tempfile::tempdir().unwrap();
    let page = std::fs::read_to_string(report(dir.path())).unwrap();
    // IOPS, MB/s, requests in flight, latency per file and per actor, findings over time.
    assert_eq!(page.matches("<svg").count(), 6, "charts");
    assert!(page.contains("Requests in flight over time"));
    assert!(page.contains("<td class='l'>initial update</td><td>64</td><td>40.50</td>"));
    // No scripts and nothing loaded from elsewhere (the SVG namespace URI is not a resource).
    assert!(!page.contains("<script") && !page.contains(" src=") && !page.contains("<link"));
    assert!(page.contains("FAILED: 14 integrity error(s)"));
    assert!(page.contains("id='findings'") && page.contains("sqliosim.mdx.10.1.txt</a>"));
    // From an XML log: no timeline, but the findings and per-file latency.
    let html = dir.path().join("from-log.html");
    let args = [
        "sqliosim report".into(),
        dir.path().join("sqliosim.log.xml").into_os_string(),
        "--html".into(),
        html.clone().into_os_string(),
    ];
    sqliosim::report::main(args.to_vec()).unwrap();
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("No timeline in this file"));
    assert_eq!(page.matches("<svg").count(), 3);
}

/// The `href` values of a page (single-quoted, as the report writes them), unescaped.
pub fn hrefs(page: &str) -> Vec<String> {
    page.split("href='")
        .skip(1)
        .filter_map(|rest| rest.split('\'').next())
        .map(|h| h.replace("&amp;", "&").replace("%20", " "))
        .collect()
}

#[test]
fn dump_links_are_relative_to_the_html_and_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let html = report(dir.path());
    // And a second page written one directory down: its links climb out of it.
    let sub = dir.path().join("pages");
    std::fs::create_dir(&sub).unwrap();
    let args = [
        "sqliosim report".into(),
        dir.path().join("summary.json").into_os_string(),
        "--html".into(),
        sub.join("report.html").into_os_string(),
    ];
    sqliosim::report::main(args.to_vec()).unwrap();
    for page in [html, sub.join("report.html")] {
        let text = std::fs::read_to_string(&page).unwrap();
        let links = hrefs(&text);
        assert!(
            links.len() >= 10,
            "dump links in {}: {links:?}",
            page.display()
        );
        for h in &links {
            assert!(!h.starts_with('/'), "absolute link {h}");
            let target = page.parent().unwrap().join(h);
            assert!(
                target.is_file(),
                "{h} does not resolve from {}",
                page.display()
            );
            assert!(h.ends_with(".txt"), "{h}");
        }
    }
}

#[test]
fn html_renders_in_headless_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path());
    let profile = dir.path().join("profile");
    let (dom, err) = run_chromium(&bin, &page, &profile, &["--dump-dom".into()]);
    assert!(!err.contains("Uncaught"), "script errors: {err}");
    assert_eq!(dom.matches("<svg").count(), 6, "charts in the rendered DOM");
    assert!(dom.contains("id=\"verdict\""), "verdict in the DOM");
    let png = dir.path().join("shot.png");
    let shot = [
        format!("--screenshot={}", png.display()),
        "--window-size=1280,2000".into(),
    ];
    let (_, err) = run_chromium(&bin, &page, &profile, &shot);
    assert!(!err.contains("Uncaught"), "script errors: {err}");
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "screenshot of {} bytes",
        bytes.len()
    );
    if std::env::var("SQLIOSIM_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report-screenshot.png");
        std::fs::write(docs, bytes).unwrap();
    }
}

#[test]
fn log_stylesheet_renders_a_table_in_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class()[10..11], 50);
    let log = dir.path().join("sqliosim.log.xml");
    let profile = dir.path().join("profile");
    // Browsers load a file:// stylesheet only when allowed to.
    let args = ["--allow-file-access-from-files".into(), "--dump-dom".into()];
    let (dom, _) = run_chromium(&bin, &log, &profile, &args);
    assert!(
        dom.contains("<th>Date</th>") && dom.contains("<th>Description</th>"),
        "{dom}"
    );
    assert!(dom.contains("<tr class=\"ERROR\">"), "{dom}");
    assert!(
        dom.contains("Error: 0x8007045D Error Text: The request could not be performed because of an I/O device error. Description: Read failed on /data/sqliosim.mdx Page: 21"),
        "{dom}"
    );
}

/// The run writes `sqliosim.log.html` beside its XML log: SQLIOSim's table (the columns of
/// `ErrorLog.xslt`), which Chromium shows from `file://` with no flag (it refuses the
/// stylesheet itself without `--allow-file-access-from-files`), one row per ENTRY of the log.
/// SQLIOSIM_UPDATE_SCREENSHOT=1 refreshes docs/log-view.png.
#[test]
fn the_logs_html_view_opens_from_disk_with_every_entry() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class()[..6], 50);
    let xml = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    let entries = xml.matches("<ENTRY ").count();
    assert!(entries > 8, "{xml}");
    let view = dir.path().join("sqliosim.log.html");
    let profile = dir.path().join("profile");
    let (dom, err) = run_chromium(&bin, &view, &profile, &["--dump-dom".into()]);
    assert!(!err.contains("Uncaught"), "script errors: {err}");
    assert!(
        dom.contains("<th>Date</th><th>Time</th><th>TID</th><th>User</th><th>Description</th>"),
        "{dom}"
    );
    let rows = dom.matches("<tr class=").count();
    assert_eq!(rows, entries, "one row per ENTRY: {dom}");
    assert_eq!(
        dom.matches("<tr class=\"ERROR\">").count(),
        xml.matches("TYPE='ERROR'").count()
    );
    assert!(
        dom.contains(&format!("{} entries.", entries)),
        "the count line: {dom}"
    );
    assert!(
        dom.contains("Error: 0x"),
        "an error row as SQLIOSim's: {dom}"
    );
    let png = dir.path().join("log.png");
    let shot = [
        format!("--screenshot={}", png.display()),
        "--window-size=1280,900".into(),
    ];
    run_chromium(&bin, &view, &profile, &shot);
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    if std::env::var("SQLIOSIM_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/log-view.png");
        std::fs::write(docs, bytes).unwrap();
    }
    // `report LOG.xml --html` shows the same table at the end of its page.
    let html = dir.path().join("from-log.html");
    let args = [
        "sqliosim report".into(),
        dir.path().join("sqliosim.log.xml").into_os_string(),
        "--html".into(),
        html.clone().into_os_string(),
    ];
    sqliosim::report::main(args.to_vec()).unwrap();
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("<h2>Error log</h2>"));
    assert_eq!(page.matches("<tr class='").count(), entries);
}
