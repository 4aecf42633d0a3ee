//! The JUnit output, parsed with roxmltree and held to what the Jenkins xUnit plugin's
//! junit-10.xsd allows (the schema the Jenkins JUnit plugin and GitLab's parser accept):
//! elements and attributes from its set only, the required attributes present, counts that
//! add up, numeric times, one test case per host and device, findings in `<failure>`,
//! unfinished and unreadable results in `<error>`.

use std::collections::HashMap;

use super::support::*;

/// Allowed attributes per element, from junit-10.xsd.
fn allowed() -> HashMap<&'static str, (&'static [&'static str], &'static [&'static str])> {
    // (allowed, required)
    HashMap::from([
        (
            "testsuites",
            (
                &["name", "time", "tests", "failures", "errors"][..],
                &[][..],
            ),
        ),
        (
            "testsuite",
            (
                &[
                    "name",
                    "tests",
                    "failures",
                    "errors",
                    "group",
                    "time",
                    "skipped",
                    "timestamp",
                    "hostname",
                    "id",
                    "package",
                    "file",
                    "log",
                    "url",
                ][..],
                &["name", "tests", "failures", "errors"][..],
            ),
        ),
        (
            "testcase",
            (&["name", "time", "classname", "group"][..], &["name"][..]),
        ),
        ("failure", (&["type", "message"][..], &[][..])),
        ("error", (&["type", "message"][..], &[][..])),
        ("skipped", (&["type", "message"][..], &[][..])),
        ("properties", (&[][..], &[][..])),
        ("property", (&["name", "value"][..], &["name", "value"][..])),
        ("system-out", (&[][..], &[][..])),
        ("system-err", (&[][..], &[][..])),
    ])
}

/// junit-10.xsd's SUREFIRE_TIME: digits (with comma groups) and an optional fraction.
fn surefire_time(t: &str) -> bool {
    regex::Regex::new(r"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$")
        .unwrap()
        .is_match(t)
}

/// Every element and attribute of `doc` is one junit-10.xsd allows, with its required ones.
pub fn check_schema(doc: &roxmltree::Document) {
    let rules = allowed();
    for n in doc.descendants().filter(|n| n.is_element()) {
        let name = n.tag_name().name();
        let (ok, req) = rules
            .get(name)
            .unwrap_or_else(|| panic!("element <{name}> is not in junit-10.xsd"));
        for a in n.attributes() {
            assert!(
                ok.contains(&a.name()),
                "<{name} {}> is not in junit-10.xsd",
                a.name()
            );
        }
        for r in *req {
            assert!(n.attribute(*r).is_some(), "<{name}> lacks required {r}");
        }
        if let Some(t) = n.attribute("time").filter(|_| name != "testcase") {
            assert!(surefire_time(t), "time {t:?}");
        }
    }
}

fn count(n: roxmltree::Node, what: &str) -> usize {
    n.descendants()
        .filter(|c| c.has_tag_name("testcase"))
        .filter(|c| what.is_empty() || c.children().any(|x| x.has_tag_name(what)))
        .count()
}

#[test]
fn junit_has_a_case_per_host_and_device_with_failures_and_errors() {
    let dir = clean_fleet(2);
    put(
        dir.path(),
        "host9.example.com",
        &as_host(summary(&runs().faulty), "host9.example.com"),
    );
    put(
        dir.path(),
        "host5",
        &interrupted(as_host(summary(&runs().clean), "host5")),
    );
    std::fs::write(dir.path().join("bad.json"), "garbage <&>").unwrap();
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let (code, stdout, err) = report_with(&[dir.path()], &["--junit", junit.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}{err}");
    let text = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    check_schema(&doc);
    let root = doc.root_element();
    assert!(root.has_tag_name("testsuites"));
    // 4 host/device cases and 1 unreadable input.
    assert_eq!(root.attribute("tests"), Some("5"));
    assert_eq!(root.attribute("failures"), Some("1"));
    assert_eq!(root.attribute("errors"), Some("2"));
    for s in root.children().filter(|n| n.has_tag_name("testsuite")) {
        let n = |a: &str| s.attribute(a).unwrap().parse::<usize>().unwrap();
        assert_eq!(
            n("tests"),
            count(s, ""),
            "tests of {:?}",
            s.attribute("name")
        );
        assert_eq!(n("failures"), count(s, "failure"));
        assert_eq!(n("errors"), count(s, "error"));
    }
    let case = |host: &str| {
        root.descendants()
            .find(|n| n.has_tag_name("testsuite") && n.attribute("hostname") == Some(host))
            .and_then(|s| s.children().find(|n| n.has_tag_name("testcase")))
            .unwrap_or_else(|| panic!("no suite for {host}:\n{text}"))
    };
    // Jenkins splits classname at its last dot: the host's dots become underscores.
    let bad = case("host9.example.com");
    assert_eq!(
        bad.attribute("classname"),
        Some("sqliosim.host9_example_com")
    );
    assert!(bad.attribute("name").unwrap().starts_with("/dev/"));
    let failure = bad
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("failure");
    assert!(failure.attribute("type").unwrap().contains("lost_write"));
    assert!(failure
        .attribute("message")
        .unwrap()
        .contains("integrity finding"));
    assert!(failure
        .text()
        .unwrap()
        .contains("CORRUPTION on host9.example.com"));
    let stopped = case("host5");
    let error = stopped
        .children()
        .find(|n| n.has_tag_name("error"))
        .expect("error");
    assert_eq!(error.attribute("type"), Some("unfinished"));
    assert!(error.text().unwrap().contains("SIGINT"));
    assert!(!case("host1")
        .children()
        .any(|n| n.has_tag_name("failure") || n.has_tag_name("error")));
    let unreadable = root
        .descendants()
        .find(|n| {
            n.has_tag_name("testcase")
                && n.attribute("name").is_some_and(|a| a.ends_with("bad.json"))
        })
        .expect("unreadable case");
    let e = unreadable
        .children()
        .find(|n| n.has_tag_name("error"))
        .unwrap();
    assert_eq!(e.attribute("type"), Some("unreadable"));
}
