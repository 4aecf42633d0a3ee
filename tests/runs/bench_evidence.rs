//! `run --bench` figures in the evidence (issue #23 §3): a real run with a capacity run beside
//! it keeps the bench's figures in its JSON summary (`bench`), `sqliosim report` and the
//! bundle's HTML report show them, and the fleet report's row of the host carries them.

use std::io::Read;
use std::path::Path;

use crate::crash_support::{assert_success, bin, run_cmd, small_config};

/// The members of a `.tar.gz` whose name ends with `suffix`, as text.
fn member(bundle: &Path, suffix: &str) -> Option<String> {
    let f = std::fs::File::open(bundle).expect("bundle");
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(f));
    for e in a.entries().expect("entries") {
        let mut e = e.expect("entry");
        let name = e.path().expect("name").display().to_string();
        if name.ends_with(suffix) {
            let mut text = String::new();
            e.read_to_string(&mut text).expect("read");
            return Some(text);
        }
    }
    None
}

#[test]
fn bench_figures_reach_the_json_the_report_the_bundle_and_the_fleet_row() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 3, false);
    let spec = format!(
        "--file {} --size 8M --block-size 8K --pattern random --rw read --duration 1",
        dir.path().join("bench.dat").display()
    );
    let bundle = dir.path().join("evidence.tar.gz");
    let out = run_cmd(&config, dir.path())
        .args(["--bench", &spec, "--bundle"])
        .arg(&bundle)
        .output()
        .expect("run");
    let stdout = assert_success(&out);
    assert!(
        stdout.contains("Capacity run beside the simulation"),
        "{stdout}"
    );
    let json = dir.path().join("sqliosim.log.json");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    let b = &j["bench"];
    assert_eq!(b["args"], spec.as_str(), "{b}");
    assert_eq!(b["outcome"], "clean", "{b}");
    assert_eq!(b["combinations"], 1, "{b}");
    let iops = b["iops"].as_f64().expect("iops");
    assert!(iops > 0.0, "{b}");
    let (p99, max) = (
        b["p99_us"].as_f64().expect("p99"),
        b["max_us"].as_f64().expect("max"),
    );
    assert!(p99 > 0.0 && p99 <= max, "{b}");
    assert_eq!(b["document"]["tool"], "sqliosim bench", "{b}");
    assert_eq!(b["document"]["results"][0]["iops"].as_f64(), Some(iops));
    assert!(
        b["combination"]
            .as_str()
            .expect("combination")
            .starts_with("8192 B random 100 % read"),
        "{b}"
    );

    let r = bin().arg("report").arg(&json).output().expect("report");
    let text = assert_success(&r);
    assert!(
        text.contains(&format!(
            "Capacity run beside the simulation (sqliosim bench {spec}): {iops:.0} IOPS"
        )),
        "{text}"
    );
    let bundled = member(&bundle, "/bench.json").expect("bench.json in the bundle");
    let bundled: serde_json::Value = serde_json::from_str(&bundled).expect("bench.json parses");
    assert_eq!(&bundled, b);
    let html = dir.path().join("report.html");
    let r = bin()
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .expect("report --html");
    assert_success(&r);
    let page = std::fs::read_to_string(&html).expect("report.html");
    assert!(
        page.contains("<h2 id='bench'>Capacity run beside the simulation</h2>"),
        "{page}"
    );
    assert!(
        page.contains(&format!("<td class='l'>{iops:.0}</td>")),
        "{page}"
    );

    let fleet_dir = dir.path().join("fleet");
    std::fs::create_dir(&fleet_dir).expect("mkdir");
    std::fs::copy(&json, fleet_dir.join("host-a.json")).expect("copy");
    let fleet_json = dir.path().join("fleet.json");
    let fleet_html = dir.path().join("fleet.html");
    let f = bin()
        .arg("report")
        .arg(&fleet_dir)
        .arg("--json")
        .arg(&fleet_json)
        .arg("--html")
        .arg(&fleet_html)
        .output()
        .expect("fleet report");
    let ftext = assert_success(&f);
    assert!(
        ftext.contains("Capacity runs beside the simulation (run --bench):"),
        "{ftext}"
    );
    assert!(ftext.contains(&format!(": {iops:.0} IOPS, ")), "{ftext}");
    let fj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fleet_json).expect("fleet json"))
            .expect("parse");
    assert_eq!(
        fj["rows"][0]["bench"][0]["iops"].as_f64(),
        Some(iops),
        "{fj}"
    );
    let fh = std::fs::read_to_string(&fleet_html).expect("fleet html");
    assert!(
        fh.contains("<th class='l'>Bench (run --bench)</th>"),
        "{fh}"
    );
    assert!(fh.contains(&format!("{iops:.0} IOPS, ")), "{fh}");
}
