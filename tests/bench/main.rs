//! Capacity runs through the library entry points (`bench::cmd::run_with`,
//! `bench::sqlio::run_with`, `bench::diskspd::run_with`): real short runs on a file in the
//! build's temporary directory with both ring kinds, switch parsing, and output layouts.

use sqliosim::bench;
use sqliosim::exit::Outcome;
use std::ffi::OsString;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

fn bench_out(args: &[&str]) -> (Outcome, String) {
    let mut out = Vec::new();
    let outcome = bench::cmd::run_with(&os(args), &mut out).expect("bench runs");
    (outcome, String::from_utf8(out).expect("utf-8"))
}

#[test]
fn short_run_with_each_ring_kind_reports_the_facts() {
    let dir = tmp();
    let file = dir.path().join("b.dat");
    let f = file.to_str().expect("utf-8 path");
    for kind in ["uring", "psync", "libaio"] {
        let (outcome, text) = bench_out(&[
            "sqliosim bench",
            "--file",
            f,
            "--size",
            "8M",
            "--rw",
            "mix",
            "--read-pct",
            "50",
            "--outstanding",
            "4",
            "--duration",
            "0.3",
            "--warmup",
            "0.1",
            "--engine",
            kind,
            "--verify",
        ]);
        println!("{text}");
        assert_eq!(outcome, Outcome::Clean, "{text}");
        assert!(
            text.contains("8 KiB random mix50, 1 thread(s) x 4 outstanding (queue depth 4)"),
            "{text}"
        );
        assert!(text.contains(&format!("engine {kind}")), "{text}");
        assert!(text.contains("direct I/O honoured"), "{text}");
        assert!(text.contains("9-nines"), "{text}");
    }
}

mod support;

mod sqlio_mode;

mod diskspd_mode;

mod bench_mode;

mod sqlio_captures;

mod diskspd_xml_tree;
