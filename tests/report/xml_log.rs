//! The XML log of a clean run and of a run with a finding of every class, read with a plain
//! XML parser (roxmltree), as scripts that read SQLIOSim logs do.

use std::collections::BTreeSet;

use roxmltree::{Document, Node};
use sqliosim::findings::FindingClass;
use sqliosim::page::PAGE_SIZE;

use super::fixtures;

fn entries<'a>(doc: &'a Document<'a>) -> Vec<Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("ENTRY"))
        .collect()
}

fn child<'a>(n: Node<'a, 'a>, name: &str) -> Node<'a, 'a> {
    n.children()
        .find(|c| c.has_tag_name(name))
        .unwrap_or_else(|| panic!("no {name} in {:?}", n.attributes().collect::<Vec<_>>()))
}

fn check_attributes(e: Node) {
    let date = regex::Regex::new(r"^\d\d/\d\d/\d\d$").unwrap();
    let time = regex::Regex::new(r"^\d\d:\d\d:\d\d$").unwrap();
    assert!(["ERROR", "WARNING", "INFO"].contains(&e.attribute("TYPE").unwrap()));
    assert!(time.is_match(e.attribute("TIME").unwrap()));
    assert!(date.is_match(e.attribute("DATE").unwrap()));
    assert!(e.attribute("TID").unwrap().parse::<u32>().unwrap() > 0);
    for a in ["User", "File", "Func", "HRESULT", "SYSTEXT"] {
        assert!(e.attribute(a).is_some(), "{a} missing");
    }
    assert!(child(e, "EXTENDED_DESCRIPTION")
        .text()
        .is_some_and(|t| !t.is_empty()));
}

#[test]
fn clean_run_log_is_sqliosim_shaped() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &[], 50);
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    assert!(raw.starts_with("<?xml version='1.0' encoding='UTF-8'?>\n<?xml-stylesheet type='text/xsl' href='ErrorLog.xslt'?>\n"));
    // Attribute values in single quotes, as SQLIOSim writes them.
    let first = raw.lines().find(|l| l.starts_with("<ENTRY ")).unwrap();
    assert!(regex::Regex::new(r"^<ENTRY TYPE='INFO' TIME='\d\d:\d\d:\d\d' DATE='\d\d/\d\d/\d\d' TID='\d+' User='System' File='[^']*' Func='CConfig::Echo' HRESULT='' SYSTEXT=''>$").unwrap().is_match(first), "{first}");
    assert!(dir.path().join("ErrorLog.xslt").exists());
    let doc = Document::parse(&raw).expect("well-formed");
    let es = entries(&doc);
    es.iter().for_each(|e| check_attributes(*e));
    assert!(es.iter().all(|e| e.attribute("TYPE") != Some("ERROR")));
    let texts: Vec<&str> = es
        .iter()
        .filter_map(|e| child(*e, "EXTENDED_DESCRIPTION").text())
        .collect();
    assert!(texts.contains(&"********** Final Summary for file /data/sqliosim.mdx **********"));
    assert!(texts.contains(&"Target IO Duration (ms) = 100, Running Average IO Duration (ms) = 1, Number of times IO throttled = 1, IO request blocks = 33"), "{texts:#?}");
    let summary_entry = es
        .iter()
        .find(|e| e.attribute("Func") == Some("CLogicalFile::OutputSummary"))
        .unwrap();
    assert_eq!(summary_entry.attribute("User"), Some("Display Monitor"));
    let outcome = sqliosim::report::main(vec![
        "sqliosim report".into(),
        dir.path().join("sqliosim.log.xml").into(),
    ])
    .unwrap();
    assert_eq!(outcome, sqliosim::exit::Outcome::Clean);
}

#[test]
fn every_class_is_logged_with_structured_fields() {
    let dir = tempfile::tempdir().unwrap();
    let findings = fixtures::every_class();
    fixtures::run(dir.path(), &findings, 50);
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    let doc = Document::parse(&raw).expect("well-formed");
    let es = entries(&doc);
    es.iter().for_each(|e| check_attributes(*e));
    let with_finding: Vec<Node> = es
        .iter()
        .copied()
        .filter(|e| e.children().any(|c| c.has_tag_name("FINDING")))
        .collect();
    let classes: BTreeSet<&str> = with_finding
        .iter()
        .map(|e| child(*e, "FINDING").attribute("CLASS").unwrap())
        .collect();
    assert_eq!(classes.len(), 14, "{classes:?}");
    for e in &with_finding {
        assert_eq!(e.attribute("TYPE"), Some("ERROR"));
        assert_eq!(e.attribute("Func"), Some("CBUF::ValidateBuffer"));
        let f = child(*e, "FINDING");
        let text = child(*e, "EXTENDED_DESCRIPTION").text().unwrap();
        let page: u64 = child(f, "PAGE_ID")
            .attribute("EXPECTED")
            .unwrap()
            .parse()
            .unwrap();
        let head = text.split(" /data").next().unwrap();
        assert!(
            [
                "Buffer validation failed on",
                "Read failed on",
                "Write failed on"
            ]
            .contains(&head),
            "{head}"
        );
        assert!(
            text.starts_with(&format!(
                "{head} /data/sqliosim.mdx Page: {page}, offset 0x{:X}",
                page * PAGE_SIZE as u64
            )),
            "{text}"
        );
        assert_eq!(child(f, "PATH").text(), Some("/data/sqliosim.mdx"));
        assert_eq!(
            child(f, "OFFSET").text().unwrap().parse::<u64>().unwrap(),
            page * PAGE_SIZE as u64
        );
        assert_eq!(
            child(f, "RUN_ID").attribute("EXPECTED"),
            Some("0x5EED000000000001")
        );
        assert!(child(f, "VERDICT").attribute("KIND").is_some());
        assert_eq!(
            child(f, "HISTORY")
                .children()
                .filter(|c| c.has_tag_name("EVENT"))
                .count(),
            2
        );
        let retries = child(f, "RETRIES");
        assert_eq!(
            retries
                .children()
                .filter(|c| c.has_tag_name("RETRY"))
                .count(),
            retries
                .attribute("COUNT")
                .unwrap()
                .parse::<usize>()
                .unwrap()
        );
    }
    let by_class = |c: FindingClass| {
        let e = *with_finding
            .iter()
            .find(|e| child(**e, "FINDING").attribute("CLASS") == Some(c.as_str()))
            .unwrap();
        (e, child(e, "FINDING"))
    };
    let (_, torn) = by_class(FindingClass::TornWrite);
    assert_eq!(
        child(torn, "SECTOR_MAP").text(),
        Some("[g5 g5 g5 g5 g5 g5 g5 g5 g4 g4 g4 g4 g4 g4 g4 g4]")
    );
    assert_eq!(
        child(torn, "GENERATION").attribute("EXPECTED"),
        Some("4..5")
    );
    let (_, rot) = by_class(FindingClass::BitRot);
    let bd = child(rot, "BIT_DIFF");
    assert_eq!(
        (
            bd.attribute("BITS"),
            bd.attribute("FIRST"),
            bd.attribute("SECTORS")
        ),
        (Some("1"), Some("0x3E8"), Some("1"))
    );
    let ck = child(rot, "CHECKSUM");
    assert!(
        ck.attribute("EXPECTED").is_some() && ck.attribute("RECEIVED") == ck.attribute("EXPECTED")
    );
    assert_ne!(ck.attribute("CALCULATED"), ck.attribute("RECEIVED"));
    let (_, mis) = by_class(FindingClass::MisdirectedWrite);
    assert_eq!(
        (
            child(mis, "PAGE_ID").attribute("EXPECTED"),
            child(mis, "PAGE_ID").attribute("RECEIVED")
        ),
        (Some("13"), Some("14"))
    );
    let (_, lost) = by_class(FindingClass::LostWrite);
    assert_eq!(
        (
            child(lost, "GENERATION").attribute("EXPECTED"),
            child(lost, "GENERATION").attribute("RECEIVED")
        ),
        (Some("5"), Some("4"))
    );
    let (rd, _) = by_class(FindingClass::ReadError);
    assert_eq!(
        (rd.attribute("HRESULT"), rd.attribute("SYSTEXT")),
        (
            Some("0x8007045D"),
            Some("The request could not be performed because of an I/O device error.")
        )
    );
    let (stale, _) = by_class(FindingClass::StaleRead);
    assert!(child(stale, "EXTENDED_DESCRIPTION")
        .text()
        .unwrap()
        .ends_with("Re-read 2 of 2 returned the right page."));
    check_dumps(dir.path(), &with_finding, &es);
}

fn check_dumps(dir: &std::path::Path, with_finding: &[Node], es: &[Node]) {
    let dumps: Vec<&str> = with_finding
        .iter()
        .filter_map(|e| {
            child(*e, "FINDING")
                .children()
                .find(|c| c.has_tag_name("DUMP"))
                .and_then(|d| d.text())
        })
        .collect();
    // Persistent findings with page bytes: all but the stale read, which a retry cured.
    assert_eq!(dumps.len(), 13, "{dumps:?}");
    let notices = es
        .iter()
        .filter(|e| e.attribute("Func") == Some("ErrorDumpHandler"))
        .count();
    assert_eq!(notices, 13);
    let lost = dir.join("dumps/sqliosim.mdx.10.1");
    let rec = std::fs::read(lost.with_extension("1.received")).unwrap();
    let exp = std::fs::read(lost.with_extension("1.expected")).unwrap();
    assert_eq!((rec.len(), exp.len()), (PAGE_SIZE, PAGE_SIZE));
    assert_ne!(rec, exp);
    let txt = std::fs::read_to_string(lost.with_extension("1.txt")).unwrap();
    assert!(
        txt.contains("WRITE (EXPECTED) IMAGE") && txt.contains("READ (RECEIVED) IMAGE"),
        "{txt}"
    );
    assert!(txt.contains("DIFFERENCES: "), "{txt}");
    let rot = std::fs::read_to_string(dir.join("dumps/sqliosim.mdx.15.1.txt")).unwrap();
    assert!(
        rot.contains("DIFFERENCES: 1 byte(s) differ in 1 range(s)"),
        "{rot}"
    );
    assert!(rot.contains("Range 0x03E8..0x03E9"), "{rot}");
}

#[test]
fn findings_make_the_report_fail() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let log = dir.path().join("sqliosim.log.xml");
    let l = sqliosim::report::readers::load::load(&log).unwrap();
    assert_eq!(l.integrity_errors(), 14);
    assert_eq!(l.findings.len(), 14);
    assert!(l.complete && !l.truncated);
    assert_eq!(l.summary.as_ref().unwrap().files[0].io.reads, 300);
    let outcome = sqliosim::report::main(vec!["sqliosim report".into(), log.into()]).unwrap();
    assert_eq!(outcome, sqliosim::exit::Outcome::Findings);
}

#[test]
fn unreadable_input_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.txt");
    std::fs::write(&p, "hello").unwrap();
    assert!(sqliosim::report::main(vec!["sqliosim report".into(), p.into()]).is_err());
    assert!(sqliosim::report::main(vec![
        "sqliosim report".into(),
        dir.path().join("missing").into()
    ])
    .is_err());
}

#[test]
fn summary_lines_sent_by_the_run_are_not_repeated() {
    use sqliosim::events::{Event, EventSink};
    use sqliosim::findings::{Message, Severity};
    let dir = tempfile::tempdir().unwrap();
    let ev =
        sqliosim::report::Evidence::create(fixtures::options(dir.path(), 50), fixtures::run_info())
            .unwrap();
    let summary = fixtures::summary();
    for f in &summary.files {
        for line in sqliosim::stats::file_summary_lines(f) {
            ev.emit(Event::Message(Message::new(
                Severity::Info,
                "Display Monitor",
                sqliosim::stats::SQLIOSIM_SUMMARY_FUNC,
                line,
            )));
        }
    }
    ev.emit(Event::Summary(Box::new(summary)));
    ev.finish().unwrap();
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    assert_eq!(
        raw.matches("Final Summary for file /data/sqliosim.mdx")
            .count(),
        1
    );
    let l = sqliosim::report::readers::load::load(&dir.path().join("summary.json")).unwrap();
    assert_eq!(l.summary.unwrap().files.len(), 2);
}

#[test]
fn findings_without_a_page_verdict_show_their_detail() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixtures::every_class().pop().unwrap();
    assert_eq!(f.class, FindingClass::WalViolation);
    fixtures::run(dir.path(), &[f], 50);
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    let doc = Document::parse(&raw).unwrap();
    let e = entries(&doc)
        .into_iter()
        .find(|e| e.attribute("TYPE") == Some("ERROR"))
        .unwrap();
    let text = child(e, "EXTENDED_DESCRIPTION").text().unwrap();
    assert!(text.starts_with("Buffer validation failed on /data/sqliosim.mdx Page: 24, offset 0x30000: page LSN 300 is beyond the durable log (LSN 250)."), "{text}");
    assert_eq!(
        child(child(e, "FINDING"), "DETAIL").text(),
        Some("page LSN 300 is beyond the durable log (LSN 250)")
    );
    assert_eq!(child(e, "FINDING").attribute("PAGES"), Some("1"));
}
