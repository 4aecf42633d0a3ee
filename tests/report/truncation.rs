//! A log cut at arbitrary byte positions (a run killed mid-write) is still read.

use sqliosim::report::readers::load::load;

use super::fixtures;

#[test]
fn log_cut_anywhere_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let full = std::fs::read(dir.path().join("sqliosim.log.xml")).unwrap();
    let whole = load(&dir.path().join("sqliosim.log.xml")).unwrap();
    assert!(!whole.truncated);
    let cut_path = dir.path().join("cut.xml");
    // Deterministic pseudo-random cut points (an LCG), plus both ends.
    let mut x: u64 = 12345;
    let mut cuts = vec![1, full.len() - 2];
    for _ in 0..300 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        cuts.push(1 + (x >> 33) as usize % (full.len() - 2));
    }
    for cut in cuts {
        std::fs::write(&cut_path, &full[..cut]).unwrap();
        let l = load(&cut_path).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(l.truncated, "cut at {cut} not seen as truncated");
        assert!(l.findings.len() <= whole.findings.len());
        // Every finding read is one of the complete run's, in order.
        assert_eq!(
            &whole.findings[..l.findings.len()],
            &l.findings[..],
            "cut at {cut}"
        );
    }
}

#[test]
fn log_is_well_formed_after_every_entry() {
    // The writer re-closes the root element after each entry: what a killed run leaves
    // between two entries parses as a complete document.
    let dir = tempfile::tempdir().unwrap();
    let ev =
        sqliosim::report::Evidence::create(fixtures::options(dir.path(), 50), fixtures::run_info())
            .unwrap();
    fixtures::startup(&ev);
    for f in fixtures::every_class().into_iter().take(3) {
        use sqliosim::events::EventSink;
        ev.emit(sqliosim::events::Event::Finding(Box::new(f)));
        let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
        roxmltree::Document::parse(&raw).expect("well-formed mid-run");
    }
    let l = load(&dir.path().join("sqliosim.log.xml")).unwrap();
    assert!(!l.complete && !l.truncated);
    assert_eq!(l.integrity_errors(), 3);
    let j = load(&dir.path().join("summary.json")).unwrap();
    assert_eq!(j.json.as_ref().unwrap().outcome, "running");
    assert_eq!(j.findings.len(), 3);
}
