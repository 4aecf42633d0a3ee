//! The evidence bundle holds the log, stylesheet, JSON, dumps, summary and report.

use std::io::Read;

use super::fixtures;

fn members(path: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let f = std::fs::File::open(path).unwrap();
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(f));
    a.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().display().to_string();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (name, data)
        })
        .collect()
}

#[test]
fn bundle_from_json_has_everything() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let out = dir.path().join("evidence.tar.gz");
    let html = dir.path().join("report.html");
    let args = [
        "sqliosim report".into(),
        dir.path().join("summary.json").into_os_string(),
        "--html".into(),
        html.clone().into_os_string(),
        "--bundle".into(),
        out.clone().into_os_string(),
    ];
    let outcome = sqliosim::report::main(args.to_vec()).unwrap();
    assert_eq!(outcome, sqliosim::exit::Outcome::Findings);
    // The top directory names this machine (as the summary recorded it) and the run id.
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let host = doc["host"]["hostname"].as_str().unwrap().replace(
        |c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)),
        "_",
    );
    let top = format!("sqliosim-evidence-{host}-{:016X}", fixtures::RUN);
    let m = members(&out);
    assert!(m.iter().all(|(n, _)| n.starts_with(&format!("{top}/"))));
    let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "summary.json",
        "sqliosim.log.xml",
        "ErrorLog.xslt",
        "config.json",
        "system-info.json",
        "summary.txt",
        "report.html",
        "dumps/sqliosim.mdx.10.1.received",
        "dumps/sqliosim.mdx.10.1.txt",
    ] {
        assert!(
            names.contains(&format!("{top}/{want}").as_str()),
            "{want} missing from {names:?}"
        );
    }
    let (_, received) = m
        .iter()
        .find(|(n, _)| n.ends_with("10.1.received"))
        .unwrap();
    assert_eq!(received.len(), sqliosim::page::PAGE_SIZE);
    // The page inside links to the dumps inside, relative to itself.
    let (_, page) = m
        .iter()
        .find(|(n, _)| *n == format!("{top}/report.html"))
        .unwrap();
    let links = super::html::hrefs(std::str::from_utf8(page).unwrap());
    assert!(links.len() >= 10, "{links:?}");
    for h in links {
        assert!(
            names.contains(&format!("{top}/{h}").as_str()),
            "{h} is not in the bundle: {names:?}"
        );
    }
}
