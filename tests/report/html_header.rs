//! The HTML report's header (host, devices, times, seed, version, command line), the findings
//! chart's axis over the whole run, and the page's width at a 1400 px window in Chromium.

use std::path::Path;

use super::chromium_support::{chromium_or_skip, run_chromium};
use super::fixtures;

/// Writes the HTML report of `input` to `html` through the command.
fn html_of(input: &Path, html: &Path) -> String {
    let args = [
        "sqliosim report".into(),
        input.as_os_str().to_owned(),
        "--html".into(),
        html.as_os_str().to_owned(),
    ];
    sqliosim::report::main(args.to_vec()).unwrap();
    std::fs::read_to_string(html).unwrap()
}

/// The header table's rows, label and value, with timestamps masked.
fn header(page: &str) -> Vec<(String, String)> {
    let table = page
        .split("<table id='run'>")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("a header table");
    table
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("<tr><th class='l'>")?;
            let (label, rest) = l.split_once("</th><td class='l'>")?;
            let value = rest.strip_suffix("</td></tr>")?;
            Some((label.to_string(), mask_times(value)))
        })
        .collect()
}

/// Every `YYYY-MM-DDTHH:MM:SS.ffffffZ` becomes `<TIME>`.
fn mask_times(s: &str) -> String {
    let mut out = s.to_string();
    while let Some(z) = out
        .find('Z')
        .filter(|&z| z >= 26 && out.as_bytes()[z - 16] == b'T')
    {
        out.replace_range(z - 26..=z, "<TIME>");
    }
    out
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut doc);
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

#[test]
fn the_header_names_host_devices_times_seed_version_and_command_line() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class()[..2], 50);
    let json = dir.path().join("summary.json");
    edit_json(&json, |d| {
        d["host"]["hostname"] = "burnin-07".into();
        d["started_us"] = fixtures::T0.into();
        d["ended_us"] = (fixtures::T0 + 40_000_000).into();
        d["system"] = serde_json::json!({"hostname": "burnin-07", "files": [
            {"path": "/data/a.mdx", "device": {"disk": "nvme0n1", "model": "ACME X1",
             "serial": "S123", "firmware": "1.2"}},
            {"path": "/data/b.ldx", "device": {"disk": "sdb", "model": "", "serial": "",
             "firmware": ""}}]});
    });
    let page = html_of(&json, &dir.path().join("r.html"));
    let version = env!("CARGO_PKG_VERSION");
    let want = [
        ("Host", "burnin-07".to_string()),
        (
            "Device",
            "nvme0n1: model ACME X1, serial S123, firmware 1.2".into(),
        ),
        (
            "Device",
            "sdb: model unknown, serial unknown, firmware unknown".into(),
        ),
        ("Start", "<TIME>".into()),
        ("End", "<TIME>".into()),
        ("Duration", "40.0 s".into()),
        ("Seed", "0x000000000000002A (42)".into()),
        ("Version", format!("sqliosim {version} (page format 1)")),
        ("Command line", "sqliosim run".into()),
    ];
    let got = header(&page);
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(l, v)| (l.to_string(), v.clone()))
        .collect();
    assert_eq!(got, want);
    // A log alone (no summary beside it) says what it does not know.
    let page = html_of(
        &dir.path().join("sqliosim.log.xml"),
        &dir.path().join("l.html"),
    );
    let got = header(&page);
    assert_eq!(got.len(), 8, "{got:?}");
    assert!(got.iter().all(|(_, v)| v == "unknown"), "{got:?}");
}

#[test]
fn the_findings_axis_spans_the_run_not_the_last_finding() {
    let dir = tempfile::tempdir().unwrap();
    // Findings at 1..=14 s of a run of 40 s.
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let json = dir.path().join("summary.json");
    edit_json(&json, |d| {
        d["started_us"] = fixtures::T0.into();
        d["ended_us"] = (fixtures::T0 + 40_000_000).into();
    });
    let page = html_of(&json, &dir.path().join("r.html"));
    let chart = page
        .split("Findings over time")
        .nth(1)
        .and_then(|c| c.split("</svg>").next())
        .expect("the findings chart");
    // plotters labels the axis's round values: 40 ends a 0..40 axis (not a 0..15.4 one).
    let labels: Vec<f64> = chart
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>')?.1.split("</text>").next())
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    let max = labels.iter().copied().fold(0.0, f64::max);
    assert_eq!(max, 40.0, "axis labels {labels:?}");
}

#[test]
fn long_cells_wrap_within_1400_px_in_chromium() {
    let Some(bin) = chromium_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let long = format!("/data/{}/sqliosim.mdx", "x".repeat(400));
    let mut findings = fixtures::every_class()[..3].to_vec();
    for f in &mut findings {
        f.path = long.clone().into();
        f.dump = Some(format!("{long}.{}.txt", f.seq).into());
    }
    fixtures::run(dir.path(), &findings, 50);
    let page = html_of(&dir.path().join("summary.json"), &dir.path().join("r.html"));
    assert!(
        page.contains(&"x".repeat(400)),
        "the long path is on the page"
    );
    // A copy with one script that reports the page's width in the title (the report itself
    // has no scripts).
    let width = |page: &str, name: &str| -> u32 {
        let probe = dir.path().join(name);
        let script = "<script>document.title='W='+document.documentElement.scrollWidth</script>";
        std::fs::write(&probe, page.replace("</body>", &format!("{script}</body>"))).unwrap();
        let profile = dir.path().join(format!("profile-{name}"));
        let args = ["--window-size=1400,1000".into(), "--dump-dom".into()];
        let (dom, err) = run_chromium(&bin, &probe, &profile, &args);
        dom.split("<title>W=")
            .nth(1)
            .and_then(|t| t.split('<').next())
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no width in the DOM: {err}"))
    };
    let w = width(&page, "probe.html");
    assert!(w <= 1400, "the page is {w} px wide");
    // The probe can tell: without the wrapping rule the same page overflows.
    let unwrapped = page.replace("overflow-wrap:anywhere", "");
    let w = width(&unwrapped, "unwrapped.html");
    assert!(w > 1400, "without wrapping the page is only {w} px wide");
}
