//! The HTML report's header (host, devices, times, seed, version, command line).

use std::path::Path;

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
    while let Some(z) = out.find('Z').filter(|&z| z >= 26 && out.as_bytes()[z - 16] == b'T') {
        out.replace_range(z - 26..=z, "<TIME>");
    }
    out
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
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
        ("Device", "nvme0n1: model ACME X1, serial S123, firmware 1.2".into()),
        ("Device", "sdb: model unknown, serial unknown, firmware unknown".into()),
        ("Start", "<TIME>".into()),
        ("End", "<TIME>".into()),
        ("Duration", "40.0 s".into()),
        ("Seed", "0x000000000000002A (42)".into()),
        ("Version", format!("sqliosim {version} (page format 1)")),
        ("Command line", "sqliosim run".into()),
    ];
    let got = header(&page);
    let want: Vec<(String, String)> = want.iter().map(|(l, v)| (l.to_string(), v.clone())).collect();
    assert_eq!(got, want);
    // A log alone (no summary beside it) says what it does not know.
    let page = html_of(&dir.path().join("sqliosim.log.xml"), &dir.path().join("l.html"));
    let got = header(&page);
    assert_eq!(got.len(), 8, "{got:?}");
    assert!(got.iter().all(|(_, v)| v == "unknown"), "{got:?}");
}
