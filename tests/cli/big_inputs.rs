//! Inputs that used to take time in the square of their size, read through the binary: an XML
//! log entry with 100,000 attributes (`sqliosim report`), and a configuration with 20,000
//! `[FileN]` sections (`run --dry-run`). Each must be read right — the attribute after the
//! 100,000 others is used, every file is planned, a path given twice among them is refused
//! naming both sections. How long they take is measured in docs/performance.md ("Big inputs"),
//! not asserted here.

use std::fmt::Write;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sqliosim"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_entry_with_100k_attributes_is_read_with_the_last_one() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let mut attrs = String::with_capacity(1 << 21);
    for i in 0..100_000 {
        let _ = write!(attrs, "a{i}='v' ");
    }
    // TYPE comes last: the entry counts as an error only if all the others were read past.
    let log = format!(
        "<?xml version='1.0'?>\n<LOG>\n<ENTRY {attrs}TYPE='ERROR'><EXTENDED_DESCRIPTION>disk on fire</EXTENDED_DESCRIPTION></ENTRY>\n\
         <ENTRY TYPE='INFO' TYPE='ERROR'><EXTENDED_DESCRIPTION>twice</EXTENDED_DESCRIPTION></ENTRY>\n</LOG>\n"
    );
    let path = dir.path().join("wide.log.xml");
    std::fs::write(&path, log).expect("write");
    let out = bin().arg("report").arg(&path).output().expect("report");
    let t = text(&out);
    assert!(out.status.code().is_some(), "killed: {t}");
    // A repeated attribute keeps its last value: both entries are errors.
    assert!(t.contains("Other errors: 2"), "{t}");
    assert!(t.contains("disk on fire"), "{t}");
}

/// A configuration with `n` one-megabyte files (the first is the log); `FileName` of file
/// `dup` (when given) repeats file 7's.
fn many_files(n: usize, dup: Option<usize>) -> String {
    let mut s = String::from("[CONFIG]\nTestCycles=1\nTestCycleDuration=1\n");
    for i in 1..=n {
        let name = if Some(i) == dup { 7 } else { i };
        let _ = write!(
            s,
            "[File{i}]\nFileName=f{name}.mdx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile={}\n",
            if i == 1 { "TRUE" } else { "FALSE" }
        );
    }
    s
}

fn dry_run(config: &str) -> Output {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("many.cfg.ini");
    std::fs::write(&path, config).expect("write");
    bin()
        .args(["run", "--dry-run", "--config"])
        .arg(&path)
        .arg("--dir")
        .arg(dir.path().join("files"))
        .output()
        .expect("run")
}

#[test]
fn twenty_thousand_file_sections_are_all_planned() {
    let out = dry_run(&many_files(20_000, None));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("File20000 = "), "{t:.2000}");
    assert_eq!(t.matches(", data, InitialSize = 1 MB").count(), 19_999);
}

#[test]
fn a_path_given_twice_among_twenty_thousand_is_refused_naming_both() {
    let out = dry_run(&many_files(20_000, Some(19_999)));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t:.2000}");
    assert!(
        t.contains("[File7] and [File19999] both resolve to ") && t.contains("f7.mdx"),
        "{t:.2000}"
    );
}
