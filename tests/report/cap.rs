//! The error cap under a flood of findings: counted, not logged in full nor dumped.

use super::fixtures;

#[test]
fn flood_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixtures::every_class();
    let flood: Vec<_> = (0..1000u64)
        .map(|i| {
            let mut f = base[4].clone(); // bit rot, persistent
            f.seq = i + 1;
            f.page_id = 100 + i;
            f
        })
        .collect();
    fixtures::run(dir.path(), &flood, 5);
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    let doc = roxmltree::Document::parse(&raw).unwrap();
    let findings = doc
        .descendants()
        .filter(|n| n.has_tag_name("FINDING"))
        .count();
    assert_eq!(findings, 5);
    let dumps = std::fs::read_dir(dir.path().join("dumps")).unwrap().count();
    assert_eq!(dumps, 5 * 3);
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("EXTENDED_DESCRIPTION"))
        .filter_map(|n| n.text())
        .collect();
    assert!(texts
        .iter()
        .any(|t| t.starts_with("Error cap of 5 reached")));
    assert!(
        texts.contains(
            &"995 further errors were suppressed after the error cap of 5 (bit_rot 995)."
        ),
        "{texts:#?}"
    );
    let l = sqliosim::report::readers::load::load(&dir.path().join("sqliosim.log.xml")).unwrap();
    assert_eq!(l.integrity_errors(), 1000);
    let j = sqliosim::report::readers::load::load(&dir.path().join("summary.json")).unwrap();
    assert_eq!(j.integrity_errors(), 1000);
    let doc = j.json.unwrap();
    assert_eq!(
        (
            doc.findings.len(),
            doc.findings_total,
            doc.suppressed["bit_rot"]
        ),
        (5, 1000, 995)
    );
}
