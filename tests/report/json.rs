//! The JSON summary: written atomically, read back whole, and read back when cut short.

use sqliosim::report::sinks::json::{parse, JsonReport, SCHEMA};

use super::fixtures;

#[test]
fn round_trip_keeps_every_finding_and_the_stats() {
    let dir = tempfile::tempdir().unwrap();
    let findings = fixtures::every_class();
    let ev = fixtures::run(dir.path(), &findings, 50);
    let text = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    let doc: JsonReport = serde_json::from_str(&text).unwrap();
    assert_eq!(doc.schema, SCHEMA);
    assert!(doc.complete);
    assert_eq!(doc.outcome, "findings");
    assert_eq!((doc.seed, doc.run_id), (Some(42), Some(fixtures::RUN)));
    assert_eq!(doc.config["CONFIG"]["TestCycles"], 1);
    let stats = doc.stats.as_ref().unwrap();
    assert_eq!(stats.files.len(), 2);
    assert_eq!(stats.timeline.len(), 3);
    assert_eq!(doc.findings.len(), 14);
    for (got, want) in doc.findings.iter().zip(&findings) {
        let mut want = want.clone();
        want.received = None;
        want.expected_image = None;
        want.dump = got.dump.clone();
        // The evidence adds where the page lies on the device; these files do not exist.
        let loc = got
            .location
            .as_ref()
            .expect("a location, or why there is none");
        assert_eq!(loc.lba(), None, "{loc:?}");
        want.location = got.location.clone();
        assert_eq!(got, &want);
    }
    assert_eq!(ev.findings().len(), 14);
    // Re-serialising what was read gives the same document.
    assert_eq!(
        serde_json::to_value(&doc).unwrap(),
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    );
}

#[test]
fn truncated_json_is_read_as_far_as_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let text = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    let mut last = 0;
    for cut in (1..text.len()).step_by(97) {
        let (doc, truncated) = parse(&text[..cut]).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(truncated);
        assert!(doc.findings.len() >= last.min(doc.findings.len()));
        last = doc.findings.len();
    }
    assert_eq!(last, 14);
}

#[test]
fn no_temporary_file_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &[], 50);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

/// Removes every key named `key`, at any depth.
fn strip(v: &mut serde_json::Value, key: &str) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove(key);
            m.values_mut().for_each(|c| strip(c, key));
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|c| strip(c, key)),
        _ => {}
    }
}

#[test]
fn schema_2_adds_host_hash_end_and_stop_and_report_still_reads_schema_1() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class()[..3], 50);
    let text = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], "sqliosim-summary/2");
    assert!(v["host"]["hostname"].is_string() && v["ended_us"].is_u64());
    assert!(v["config_hash"].as_str().unwrap().starts_with("sha256:"));
    // A /1 document, as sqliosim 0.1 wrote it: none of the /2 fields.
    v["schema"] = "sqliosim-summary/1".into();
    for key in ["host", "config_hash", "ended_us", "stop", "latency_hdr"] {
        strip(&mut v, key);
    }
    let old = dir.path().join("v1.json");
    std::fs::write(&old, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let l = sqliosim::report::readers::load::load(&old).expect("a /1 document loads");
    let doc = l.json.as_ref().unwrap();
    assert_eq!(doc.schema, "sqliosim-summary/1");
    assert!(doc.host.is_none() && doc.config_hash.is_none() && doc.stop.is_none());
    assert!(l.complete && l.stopped_by.is_none());
    assert_eq!(l.integrity_errors(), 3);
    assert_eq!(l.summary.as_ref().unwrap().files.len(), 2);
    let args = ["sqliosim report".into(), old.into_os_string()];
    let outcome = sqliosim::report::main(args.to_vec()).expect("report reads /1");
    assert_eq!(outcome, sqliosim::exit::Outcome::Findings);
}
