//! Hosts told apart: three hosts that all say `localhost` but have their own machine ids are
//! three rows (issue #23: they were one), a run's `--host-label` keys and names its row, and a
//! row merged from several runs names, on its CORRUPTION line, the run that found the corruption
//! and where that run's dumps and bundle are.

use std::path::Path;

use super::support::*;

#[test]
fn same_hostname_different_machine_ids_are_separate_rows() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let ids = [
        "5f1c0e2a9b8d4c3e8f7a6b5c4d3e2f10",
        "a7d3b2c1e0f94e8d9c7b6a5f4e3d2c11",
        "0b9e8d7c6a5f4e3d2c1b0a9f8e7d6c12",
    ];
    for (i, id) in ids.iter().enumerate() {
        let doc = as_machine(summary(&runs().clean), "localhost", id);
        put(dir.path(), &format!("rack{i}"), &doc);
    }
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("3 run(s) on 3 host(s), 3 host/device row(s)"),
        "{out}"
    );
    for id in ids {
        let r = row(&out, &format!("localhost [machine {}]", &id[..8]));
        assert!(r.contains("CLEAN"), "{r}");
    }
    assert!(
        out.contains("Verdict: CLEAN — 3 host/device(s) clean"),
        "{out}"
    );
    // JUnit keeps them apart too: three classnames.
    let junit = dir.path().join("junit.xml");
    let (code, ..) = report_with(&[dir.path()], &["--junit", junit.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(0));
    let text = std::fs::read_to_string(&junit).expect("junit");
    let doc = roxmltree::Document::parse(&text).expect("JUnit is XML");
    let mut names: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter_map(|n| n.attribute("classname"))
        .collect();
    names.dedup();
    assert_eq!(names.len(), 3, "{text}");
    assert!(
        names.contains(&"sqliosim.localhost_machine_5f1c0e2a"),
        "{text}"
    );
}

#[test]
fn a_host_label_keys_and_names_the_row() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    for (i, label) in ["node1", "node2"].iter().enumerate() {
        // Same hostname and machine id (one image cloned twice): only the label tells them apart.
        let mut doc = as_machine(summary(&runs().clean), "localhost", "deadbeef");
        doc["host"]["label"] = serde_json::json!(label);
        put(dir.path(), &format!("h{i}"), &doc);
    }
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(row(&out, "localhost [node1]").contains("CLEAN"), "{out}");
    assert!(row(&out, "localhost [node2]").contains("CLEAN"), "{out}");
}

/// Copies the directory `from` to `to` (the dumps of a run, as a fetch brings them back).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

#[test]
fn a_merged_rows_corruption_line_names_the_run_its_dumps_and_bundle() {
    let dir = clean_fleet(2);
    // host9 ran twice (two cycles of a burn-in, results side by side): clean, then corrupt.
    put(
        &dir.path().join("host9"),
        "a",
        &as_host(summary(&runs().clean), "host9"),
    );
    let bad = as_host(summary(&runs().faulty), "host9");
    let bad_json = put(&dir.path().join("host9"), "b", &bad);
    let here = bad_json.parent().expect("dir");
    // The results came back with their dumps and bundle, as the Ansible role fetches them.
    let recorded = bad["dump_dir"]
        .as_str()
        .expect("the faulty run recorded its dump dir");
    let dumps_name = Path::new(recorded).file_name().expect("dump dir name");
    copy_dir(Path::new(recorded), &here.join("dumps").join(dumps_name));
    std::fs::copy(
        runs().faulty.join("bundle.tar.gz"),
        here.join("bundle.tar.gz"),
    )
    .expect("the faulty run wrote its bundle");
    let (code, out, err) = report(&[dir.path()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(row(&out, "host9").contains("CORRUPTION"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("CORRUPTION on host9 "))
        .unwrap_or_else(|| panic!("no CORRUPTION line:\n{out}"));
    assert!(
        line.contains(&format!("in {}", bad_json.display())),
        "{line}"
    );
    let dumps = here.join("dumps").join(dumps_name);
    assert!(
        line.contains(&format!("dumps {}", dumps.display())),
        "{line}"
    );
    let bundle = here.join("bundle.tar.gz");
    assert!(
        line.contains(&format!("bundle {}", bundle.display())),
        "{line}"
    );
    assert!(
        !line.contains("/a/summary.json"),
        "the clean run is not named: {line}"
    );
}
