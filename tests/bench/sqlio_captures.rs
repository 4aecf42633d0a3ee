//! Our SQLIO block against real SQLIO v1.5 captures (tests/bench/fixtures/sqlio-*.txt, each
//! with its source): rebuilt from a capture's own figures it must be the capture, byte for
//! byte; from a real run, its structure (indentation, line order, labels, singular/plural
//! words; numbers and paths masked) must be the capture's; and the regular expressions of a
//! published parser must read it.

use super::*;
use regex::Regex;
use sqliosim::bench::sqlio::output::{self, Figures, Header};

/// The capture in a fixture: everything after its `---` line.
fn capture(name: &str) -> String {
    let path = format!("{}/tests/bench/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture");
    let (_, body) = text
        .split_once("\n---\n")
        .expect("fixture header ends with ---");
    body.to_string()
}

/// SQLIO prints its timer frequency; ours is the nanosecond clock.
fn mask_counter(text: &str) -> String {
    Regex::new(r"timings, \d+ counts")
        .expect("regex")
        .replace_all(text, "timings, # counts")
        .into_owned()
}

/// A line's structure: its leading whitespace exactly, then the words with numbers as `#`,
/// file names as `<file>` and runs of blanks as one space (column widths vary with values).
fn shape(text: &str) -> Vec<String> {
    let path = Regex::new(r"\S+\.(dat|txt)\b").expect("regex");
    let num = Regex::new(r"\d+(\.\d+)?").expect("regex");
    let blanks = Regex::new(r"[ ]+").expect("regex");
    text.lines()
        .map(|l| {
            let body = l.trim_start();
            let indent = &l[..l.len() - body.len()];
            let body = path.replace_all(body, "<file>");
            let body = num.replace_all(&body, "#");
            format!("{indent}{}", blanks.replace_all(&body, " "))
        })
        .collect()
}

fn figures(iops: f64, mbs: f64, lat: (u64, u64, u64), pct: [u64; 25]) -> Figures {
    Figures {
        iops,
        mbs,
        min_ms: lat.0,
        avg_ms: lat.1,
        max_ms: lat.2,
        histogram: pct,
    }
}

fn header(file: &str, threads: u32, write: bool, secs: u64, kb: u32, seq: bool) -> Header {
    Header {
        param_file: Some(r"G:\param.txt".into()),
        files: vec![(file.into(), threads, 50000, true)],
        write,
        secs,
        block_kb: kb,
        sequential: seq,
        outstanding: None,
        buffering: None,
        latency: true,
    }
}

#[test]
fn rebuilt_from_their_figures_our_block_is_each_capture() {
    let mut a = header(r"G:\testfile.dat", 64, false, 15, 8, false);
    a.outstanding = Some(2);
    let fa = figures(
        29250.08,
        228.51,
        (0, 3, 158),
        [
            12, 21, 9, 6, 12, 18, 11, 4, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
    );
    let b = header(r"G:\testfile.dat", 64, true, 15, 64, true);
    let fb = figures(
        12255.66,
        765.97,
        (0, 4, 92),
        [
            25, 18, 3, 5, 8, 8, 7, 5, 4, 3, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 2,
        ],
    );
    let mut c = header("testfile.dat", 4, true, 30, 8, false);
    c.param_file = Some("param.txt".into());
    c.files = vec![("testfile.dat".into(), 4, 2000, true)];
    c.outstanding = Some(1);
    c.buffering = Some('H');
    let fc = figures(
        421.88,
        3.29,
        (0, 9, 1586),
        [
            78, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4,
        ],
    );
    for (name, hd, f) in [
        ("sqlio-random-read-o2.txt", a, fa),
        ("sqlio-sequential-write-no-o.txt", b, fb),
        ("sqlio-param-BH-o1.txt", c, fc),
    ] {
        let ours = mask_counter(&output::render(&hd, &f));
        assert_eq!(ours, mask_counter(&capture(name)), "{name}");
    }
}

/// Runs `sqliosim sqlio` for 1 s on a 2-thread parameter file with `switches`.
fn real_run(switches: &[&str]) -> String {
    let dir = tmp();
    std::fs::write(dir.path().join("param.txt"), "d:\\testfile.dat 2 0x0 8\n").expect("param");
    let map = format!("D={}", dir.path().display());
    let mut argv = vec!["sqliosim sqlio", "--drive-map", &map, "-s1", "-LS"];
    argv.extend(switches);
    argv.push(r"-Fd:\param.txt");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let outcome = bench::sqlio::run_with(&os(&argv), &mut out, &mut err).expect("sqlio runs");
    assert_eq!(outcome, Outcome::Clean);
    String::from_utf8(out).expect("utf-8")
}

#[test]
fn a_real_run_has_the_structure_of_each_capture() {
    let cases: [(&str, &[&str]); 3] = [
        (
            "sqlio-random-read-o2.txt",
            &["-kR", "-o2", "-b8", "-frandom"],
        ),
        (
            "sqlio-sequential-write-no-o.txt",
            &["-kW", "-b64", "-fsequential"],
        ),
        (
            "sqlio-param-BH-o1.txt",
            &["-kW", "-o1", "-b8", "-frandom", "-BH"],
        ),
    ];
    for (name, switches) in cases {
        let ours = real_run(switches);
        let theirs = capture(name);
        assert_eq!(shape(&ours), shape(&theirs), "{name}:\n{ours}");
        let masked = shape(&ours).join("\n");
        insta::assert_snapshot!(
            format!("sqlio_structure_{}", name.trim_end_matches(".txt")),
            masked
        );
    }
}

/// The regular expressions of dataElisabeth/SQLIO_ProcessResults' SQLIO_ResultsToExcel.ps1
/// (credited there to Jonathan Kehayias), which read the fixtures above, read our block too.
#[test]
fn a_published_parser_reads_a_real_run() {
    let text = real_run(&["-kR", "-o2", "-b8", "-frandom"]);
    let grab = |re: &str| {
        Regex::new(re)
            .expect("regex")
            .captures(&text)
            .and_then(|c| c.get(1).map(|m| m.as_str().to_string()))
    };
    assert_eq!(
        grab(r"(\d+)?\sthreads\s(reading|writing)").as_deref(),
        Some("2")
    );
    assert_eq!(grab(r"for\s(\d+)?\ssecs").as_deref(), Some("1"));
    assert_eq!(
        grab(r"\tusing\s(\d+)?KB\s(sequential|random)").as_deref(),
        Some("8")
    );
    assert_eq!(grab(r"with\s(\d+)?\soutstanding").as_deref(), Some("2"));
    assert_eq!(grab(r"\s(\d+)?\sMB\sfor\sfile").as_deref(), Some("8"));
    assert!(grab(r"IOs/sec:\s+(\d+\.\d+)?").is_some(), "{text}");
    assert!(grab(r"MBs/sec:\s+(\d+\.\d+)?").is_some(), "{text}");
    for label in ["Min", "Avg", "Max"] {
        let re = format!(r"{label}.{{0,}}?:\s(\d+)?");
        assert!(grab(&re).is_some(), "{label}: {text}");
    }
    // The script splits a file of many runs on the banner.
    assert_eq!(
        text.split("sqlio v1.5.SG")
            .filter(|s| !s.is_empty())
            .count(),
        1
    );
}
