//! JUnit XML of the fleet, for CI systems and burn-in pipelines.
//!
//! The element and attribute set is the one of the Jenkins xUnit plugin's junit-10.xsd (which
//! the Jenkins JUnit plugin and GitLab's parser also read): `testsuites` → one `testsuite` per
//! host (`name` and `hostname` = the host) → one `testcase` per device (`classname`
//! "sqliosim.HOST" with the host's dots made underscores, since Jenkins splits a classname at
//! its last dot into package and class; `name` = the device). Integrity findings are a
//! `<failure>` (type = the finding classes); a run that did not finish is an `<error
//! type="unfinished">`; each unreadable input is a test case of the "unreadable" suite with an
//! `<error type="unreadable">`; each host of `--expect-hosts` that sent nothing is a test case
//! of the "missing" suite with a `<failure type="missing">`. Written with quick-xml, so every
//! value is escaped.

use std::fmt::Write as _;

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use super::merge::Fleet;
use super::row::Row;

/// The document being written (also the campaign report's JUnit).
pub(crate) type Out = Writer<Vec<u8>>;

/// Characters XML 1.0 cannot carry are replaced (a device string could hold any byte).
pub(crate) fn clean(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// Writes a start tag with `attrs` (values made XML-safe).
pub(crate) fn start(w: &mut Out, name: &str, attrs: &[(&str, String)]) {
    let mut e = BytesStart::new(name);
    for (k, v) in attrs {
        e.push_attribute((*k, clean(v).as_str()));
    }
    let _ = w.write_event(Event::Start(e));
}

/// Writes an end tag.
pub(crate) fn end(w: &mut Out, name: &str) {
    let _ = w.write_event(Event::End(BytesEnd::new(name)));
}

/// Writes an element holding `text` (made XML-safe).
pub(crate) fn text_element(w: &mut Out, name: &str, attrs: &[(&str, String)], text: &str) {
    start(w, name, attrs);
    let _ = w.write_event(Event::Text(BytesText::new(&clean(text))));
    end(w, name);
}

/// "sqliosim.HOST" with the host's dots as underscores.
pub fn classname(host: &str) -> String {
    format!("sqliosim.{}", host.replace('.', "_"))
}

fn secs(s: f64) -> String {
    format!("{:.3}", s.max(0.0))
}

/// Hosts (by shown name) in the order their first row appears (corruption first).
fn hosts(f: &Fleet) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for r in &f.rows {
        if !v.contains(&r.name.as_str()) {
            v.push(&r.name);
        }
    }
    v
}

/// The classname of a row: "sqliosim.HOST", and where another host has the same hostname,
/// "sqliosim.HOST_QUALIFIER" (its label or machine id), so Jenkins keeps them apart.
fn row_classname(f: &Fleet, r: &Row) -> String {
    let shared = f.rows.iter().any(|o| o.host == r.host && o.key != r.key);
    let qualifier = r.name.strip_prefix(r.host.as_str()).unwrap_or("").trim();
    let qualifier = qualifier.trim_matches(['[', ']']).replace(' ', "_");
    match shared && !qualifier.is_empty() {
        true => classname(&format!("{}_{qualifier}", r.host)),
        false => classname(&r.host),
    }
}

fn failures(rows: &[&Row]) -> usize {
    rows.iter().filter(|r| r.findings() > 0).count()
}

fn errors(rows: &[&Row]) -> usize {
    rows.iter().filter(|r| !r.unfinished.is_empty()).count()
}

/// The JUnit document.
pub fn render(f: &Fleet) -> Vec<u8> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let _ = w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)));
    let all: Vec<&Row> = f.rows.iter().collect();
    let time: f64 = f.rows.iter().map(|r| r.elapsed_s).sum();
    start(
        &mut w,
        "testsuites",
        &[
            ("name", "sqliosim fleet".into()),
            (
                "tests",
                (all.len() + f.unreadable.len() + f.missing.len()).to_string(),
            ),
            ("failures", (failures(&all) + f.missing.len()).to_string()),
            ("errors", (errors(&all) + f.unreadable.len()).to_string()),
            ("time", secs(time)),
        ],
    );
    for host in hosts(f) {
        let rows: Vec<&Row> = f.rows.iter().filter(|r| r.name == host).collect();
        suite(&mut w, f, host, &rows);
    }
    if !f.unreadable.is_empty() {
        unreadable_suite(&mut w, f);
    }
    if !f.missing.is_empty() {
        missing_suite(&mut w, f);
    }
    end(&mut w, "testsuites");
    let mut out = w.into_inner();
    out.push(b'\n');
    out
}

fn suite(w: &mut Out, f: &Fleet, name: &str, rows: &[&Row]) {
    let time: f64 = rows.iter().map(|r| r.elapsed_s).sum();
    let hostname = rows.first().map_or(name, |r| r.host.as_str());
    start(
        w,
        "testsuite",
        &[
            ("name", name.into()),
            ("hostname", hostname.into()),
            ("tests", rows.len().to_string()),
            ("failures", failures(rows).to_string()),
            ("errors", errors(rows).to_string()),
            ("skipped", "0".into()),
            ("time", secs(time)),
        ],
    );
    if let Some(id) = rows.iter().find_map(|r| r.machine_id.clone()) {
        start(w, "properties", &[]);
        let mut e = BytesStart::new("property");
        e.push_attribute(("name", "machine_id"));
        e.push_attribute(("value", clean(&id).as_str()));
        let _ = w.write_event(Event::Empty(e));
        end(w, "properties");
    }
    for r in rows {
        case(w, f, r);
    }
    end(w, "testsuite");
}

fn case(w: &mut Out, f: &Fleet, r: &Row) {
    start(
        w,
        "testcase",
        &[
            ("classname", row_classname(f, r)),
            ("name", r.device.name.clone()),
            ("time", secs(r.elapsed_s)),
        ],
    );
    if r.findings() > 0 {
        let classes: Vec<&str> = r.by_class.keys().map(String::as_str).collect();
        let mut body = super::table::corruption_line(r);
        for p in &r.runs {
            let _ = write!(
                body,
                "\nrun: {} (details: sqliosim report {})",
                p.display(),
                p.display()
            );
        }
        let message = format!("{} integrity finding(s): {}", r.findings(), r.classes());
        text_element(
            w,
            "failure",
            &[("message", message), ("type", classes.join(","))],
            &body,
        );
    }
    if !r.unfinished.is_empty() {
        let message = format!("{} run(s) did not finish", r.unfinished.len());
        let body = r.unfinished.join("\n");
        text_element(
            w,
            "error",
            &[("message", message), ("type", "unfinished".into())],
            &body,
        );
    }
    text_element(w, "system-out", &[], &summary(r));
    end(w, "testcase");
}

/// The figures of a row, for system-out.
fn summary(r: &Row) -> String {
    let l = &r.latency;
    let d = &r.device;
    let mut s = format!(
        "host {} device {} (model {}, serial {}, firmware {})\nverdict {}; IOPS {:.1}, MB/s {:.2}, p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms ({:?}); throttled {}, long I/Os {}",
        r.name, d.name, d.model, d.serial, d.firmware, r.verdict().word(), r.iops, r.mb_per_s,
        l.p50_us / 1000.0, l.p99_us / 1000.0, l.p999_us / 1000.0, r.latency_source,
        r.throttled, r.long_ios.map_or_else(|| "unknown".into(), |n| n.to_string())
    );
    if !r.outlier.is_empty() {
        let _ = write!(s, "\noutlier on: {}", r.outlier.join(", "));
    }
    for p in &r.runs {
        let _ = write!(s, "\nrun: {}", p.display());
    }
    s
}

/// Each expected host that sent nothing: a failing test case, so CI cannot show green.
fn missing_suite(w: &mut Out, f: &Fleet) {
    let n = f.missing.len().to_string();
    start(
        w,
        "testsuite",
        &[
            ("name", "missing".into()),
            ("tests", n.clone()),
            ("failures", n),
            ("errors", "0".into()),
            ("skipped", "0".into()),
            ("time", "0.000".into()),
        ],
    );
    for name in &f.missing {
        start(
            w,
            "testcase",
            &[
                ("classname", "sqliosim.missing".into()),
                ("name", name.clone()),
                ("time", "0.000".into()),
            ],
        );
        let why = super::expect::MISSING_WHY;
        let message = format!("no result from expected host {name}");
        text_element(
            w,
            "failure",
            &[("message", message), ("type", "missing".into())],
            &format!("{name}: {why}"),
        );
        end(w, "testcase");
    }
    end(w, "testsuite");
}

fn unreadable_suite(w: &mut Out, f: &Fleet) {
    let n = f.unreadable.len().to_string();
    start(
        w,
        "testsuite",
        &[
            ("name", "unreadable".into()),
            ("tests", n.clone()),
            ("failures", "0".into()),
            ("errors", n),
            ("skipped", "0".into()),
            ("time", "0.000".into()),
        ],
    );
    for p in &f.unreadable {
        let path = p.path.display().to_string();
        start(
            w,
            "testcase",
            &[("classname", "sqliosim.unreadable".into()), ("name", path)],
        );
        text_element(
            w,
            "error",
            &[("message", p.reason.clone()), ("type", "unreadable".into())],
            &p.reason,
        );
        end(w, "testcase");
    }
    end(w, "testsuite");
}
