//! JUnit XML of the campaign, in the element set of the fleet report's JUnit (the Jenkins
//! xUnit junit-10.xsd): `testsuites` → one `testsuite` per host → one `testcase` per cycle,
//! named "cycle K" (`classname` "sqliosim.campaign.HOST", the host's dots made underscores).
//! A CORRUPT cycle is a `<failure type="corrupt">` naming the finding classes, a MISSING one a
//! `<failure type="missing">`, an ERROR one an `<error type="error">`; the row's figures and
//! notes are its `system-out`. Written with quick-xml, so every value is escaped.

use std::fmt::Write as _;

use quick_xml::events::{BytesDecl, Event};
use quick_xml::Writer;

use crate::report::fleet::junit::{end, start, text_element, Out};

use super::row::{CutVerdict, Row};
use super::table::{acked, cut_time, opt, shutdowns};
use super::Report;

/// "sqliosim.campaign.HOST" with the host's dots as underscores (Jenkins splits a classname
/// at its last dot).
pub fn classname(host: &str) -> String {
    format!("sqliosim.campaign.{}", host.replace('.', "_"))
}

fn count(rows: &[&Row], v: CutVerdict) -> usize {
    rows.iter().filter(|r| r.verdict == v).count()
}

fn failures(rows: &[&Row]) -> usize {
    count(rows, CutVerdict::Corrupt) + count(rows, CutVerdict::Missing)
}

/// The JUnit document.
pub fn render(rep: &Report) -> Vec<u8> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let _ = w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
    let all: Vec<&Row> = rep.rows.iter().collect();
    start(
        &mut w,
        "testsuites",
        &[
            ("name", "sqliosim campaign".into()),
            ("tests", all.len().to_string()),
            ("failures", failures(&all).to_string()),
            ("errors", count(&all, CutVerdict::Error).to_string()),
        ],
    );
    for host in &rep.campaign.hosts {
        let rows: Vec<&Row> = rep.rows.iter().filter(|r| &r.host == host).collect();
        suite(&mut w, host, &rows);
    }
    end(&mut w, "testsuites");
    let mut out = w.into_inner();
    out.push(b'\n');
    out
}

fn suite(w: &mut Out, host: &str, rows: &[&Row]) {
    start(
        w,
        "testsuite",
        &[
            ("name", host.into()),
            ("hostname", host.into()),
            ("tests", rows.len().to_string()),
            ("failures", failures(rows).to_string()),
            ("errors", count(rows, CutVerdict::Error).to_string()),
            ("skipped", "0".into()),
        ],
    );
    for r in rows {
        case(w, r);
    }
    end(w, "testsuite");
}

fn case(w: &mut Out, r: &Row) {
    start(
        w,
        "testcase",
        &[
            ("classname", classname(&r.host)),
            ("name", format!("cycle {}", r.cycle)),
        ],
    );
    let body = r.why.join("\n");
    let first = r.why.first().cloned().unwrap_or_default();
    match r.verdict {
        CutVerdict::Clean => {}
        CutVerdict::Corrupt => {
            let classes: Vec<&str> = r
                .verify
                .iter()
                .flat_map(|v| v.by_class.keys().map(String::as_str))
                .collect();
            let message = match classes.is_empty() {
                true => first,
                false => format!("{} integrity finding(s): {}", r.findings(), r.classes()),
            };
            let attrs = [("message", message), ("type", "corrupt".into())];
            text_element(w, "failure", &attrs, &body);
        }
        CutVerdict::Missing => {
            let attrs = [("message", first), ("type", "missing".into())];
            text_element(w, "failure", &attrs, &body);
        }
        CutVerdict::Error => {
            let attrs = [("message", first), ("type", "error".into())];
            text_element(w, "error", &attrs, &body);
        }
    }
    text_element(w, "system-out", &[], &summary(r));
    end(w, "testcase");
}

/// The figures of a row, for system-out.
fn summary(r: &Row) -> String {
    let mut s = format!(
        "host {} cycle {}: {}; cut {}; verify exit {}; in flight {}, acked-unwitnessed {}, owed {}, lost {}, torn {}, allowed tears {}, other {}; unsafe shutdowns {}\nfindings: {}\nfiles: {}",
        r.host,
        r.cycle,
        r.verdict.word(),
        cut_time(r),
        r.verify_rc.map_or("-".into(), |c| c.to_string()),
        opt(r.in_flight),
        acked(r),
        opt(r.pages_owed),
        r.lost,
        r.torn,
        opt(r.allowed_tears),
        r.other,
        shutdowns(r),
        r.classes(),
        r.dir.display()
    );
    for note in &r.notes {
        let _ = write!(s, "\nnote: {note}");
    }
    s
}
