//! The JSON summary: written atomically, read back whole, and read back when cut short.

use sqliosim::report::json::{parse, JsonReport, SCHEMA};

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
