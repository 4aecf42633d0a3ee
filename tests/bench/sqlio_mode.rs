//! `sqliosim sqlio`: switch parsing, drive mapping, parameter files, the output block.

use super::*;
use regex::Regex;
use sqliosim::bench::sqlio::{args, output};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn switches_as_written_in_scripts() {
    let a = args::parse(&strings(&[
        "-kW",
        "-t4",
        "-s120",
        "-o8",
        "-b64",
        "-fsequential",
        "-BH",
        "-LS",
        "/tmp/x/testfile.dat",
    ]))
    .expect("parse");
    assert!(a.write && a.sequential && a.latency);
    assert_eq!(
        (a.threads, a.secs, a.outstanding, a.block_kb, a.buffering),
        (4, 120, 8, 64, 'H')
    );
    assert_eq!(
        a.files[0].path,
        std::path::PathBuf::from("/tmp/x/testfile.dat")
    );
    let d = args::parse(&strings(&["-kR"])).expect("defaults");
    assert_eq!(
        (d.threads, d.secs, d.block_kb, d.buffering, d.sequential),
        (1, 30, 2, 'N', false)
    );
    assert_eq!(d.files[0].shown, "testfile.dat");
}

#[test]
fn bad_switches_name_the_switch_and_what_is_allowed() {
    let e = args::parse(&strings(&["-kX"])).expect_err("bad -k");
    assert!(
        e.contains("-k") && e.contains("R (read) or W (write)"),
        "{e}"
    );
    let e = args::parse(&strings(&["-BQ"])).expect_err("bad -B");
    assert!(e.contains("-B") && e.contains("N (none)"), "{e}");
    let e = args::parse(&strings(&["-t0"])).expect_err("bad -t");
    assert!(e.contains("-t"), "{e}");
    let e = args::parse(&strings(&["-Rx"])).expect_err("raw drives");
    assert!(e.contains("-R") && e.contains("/dev/sdb"), "{e}");
}

#[test]
fn drive_letters_map_through_the_documented_rule() {
    let mut m = args::DriveMap::default();
    m.add("e=/mnt/e").expect("map");
    assert_eq!(
        m.resolve(r"E:\sqlio\testfile.dat"),
        Ok("/mnt/e/sqlio/testfile.dat".into())
    );
    let err = m.resolve(r"Q:\testfile.dat").expect_err("unmapped");
    assert!(err.contains("SQLIOSIM_DRIVE_Q"), "{err}");
    let a = args::parse(&strings(&[
        "--drive-map",
        "E=/mnt/e",
        "--drive-map",
        "F=/mnt/f",
        "-dEF",
        "testfile.dat",
    ]))
    .expect("parse");
    let shown: Vec<&str> = a.files.iter().map(|f| f.shown.as_str()).collect();
    assert_eq!(shown, [r"E:\testfile.dat", r"F:\testfile.dat"]);
    assert_eq!(
        a.files[1].path,
        std::path::PathBuf::from("/mnt/f/testfile.dat")
    );
}

#[test]
fn param_file_lines_give_threads_and_sizes() {
    let mut m = args::DriveMap::default();
    m.add("D=/data").expect("map");
    let text = "# comment\nd:\\testfile.dat 4 0x0 100\n\nc2.dat 2\n";
    let f = args::parse_param_text(&m, "param.txt", text).expect("parse");
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].threads, f[0].size_mb), (Some(4), Some(100)));
    assert_eq!(f[0].path, std::path::PathBuf::from("/data/testfile.dat"));
    assert_eq!((f[1].threads, f[1].size_mb), (Some(2), None));
    let e = args::parse_param_text(&m, "param.txt", "x.dat many\n").expect_err("bad line");
    assert!(e.contains("param.txt line 1"), "{e}");
}

fn capture_header() -> output::Header {
    output::Header {
        param_file: Some("param.txt".into()),
        files: vec![(r"d:\testfile.dat".into(), 4, 100, true)],
        write: true,
        secs: 5,
        block_kb: 8,
        sequential: true,
        outstanding: Some(8),
        buffering: Some('H'),
        latency: true,
    }
}

/// The capture in formats.md §1.3, rebuilt from its own figures. That capture was copied
/// from a web page, which dropped SQLIO's tab indents; raw captures (tests/bench/fixtures)
/// show them, so they are expected here.
#[test]
fn block_matches_the_published_capture() {
    let mut histogram = [0u64; 25];
    histogram[1] = 99;
    let f = output::Figures {
        iops: 28807.29,
        mbs: 225.05,
        min_ms: 0,
        avg_ms: 1,
        max_ms: 3,
        histogram,
    };
    let text = output::render(&capture_header(), &f);
    let expected = "sqlio v1.5.SG
using system counter for latency timings, 1000000000 counts per second
parameter file used: param.txt
\tfile d:\\testfile.dat with 4 threads (0-3) using mask 0x0 (0)
4 threads writing for 5 secs to file d:\\testfile.dat
\tusing 8KB sequential IOs
\tenabling multiple I/Os per thread with 8 outstanding
\tbuffering set to use hardware disk cache (but not file cache)
using specified size: 100 MB for file: d:\\testfile.dat
initialization done
CUMULATIVE DATA:
throughput metrics:
IOs/sec: 28807.29
MBs/sec:   225.05
latency metrics:
Min_Latency(ms): 0
Avg_Latency(ms): 1
Max_Latency(ms): 3
histogram:
ms: 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24+
%:  0 99  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0
";
    assert_eq!(text, expected);
}

#[test]
fn block_layout_snapshot() {
    let r = super::support::result();
    insta::assert_snapshot!(
        "sqlio_block_synthetic",
        output::render(&capture_header(), &output::figures(&r.total, r.measured_s))
    );
}

/// Community parsers' regular expressions read a real run's block.
#[test]
fn real_run_is_read_by_community_regexes() {
    let dir = tmp();
    let mut err = Vec::new();
    std::fs::write(dir.path().join("param.txt"), "d:\\testfile.dat 2 0x0 8\n").expect("param.txt");
    let map = format!("D={}", dir.path().display());
    let args = [
        "--drive-map",
        &map,
        "-kW",
        "-s1",
        "-o4",
        "-b8",
        "-frandom",
        "-BN",
        "-LS",
        r"-Fd:\param.txt",
    ];
    let mut argv = vec!["sqliosim sqlio"];
    argv.extend(args.iter().copied());
    // A shorter run than SQLIO allows (-s is whole seconds): 1 s.
    let mut out = Vec::new();
    let outcome = bench::sqlio::run_with(&os(&argv), &mut out, &mut err).expect("sqlio runs");
    assert_eq!(outcome, Outcome::Clean);
    let text = String::from_utf8(out).expect("utf-8");
    let grab = |re: &str| {
        Regex::new(re)
            .expect("regex")
            .captures(&text)
            .map(|c| c[1].to_string())
    };
    assert!(grab(r"IOs/sec:\s+(\d+\.\d+)").is_some(), "{text}");
    assert!(grab(r"MBs/sec:\s+(\d+\.\d+)").is_some(), "{text}");
    assert_eq!(
        grab(r"(\d+) threads (reading|writing)").as_deref(),
        Some("2")
    );
    assert_eq!(
        grab(r"using (\d+)KB (sequential|random)").as_deref(),
        Some("8")
    );
    assert_eq!(grab(r"with (\d+) outstanding").as_deref(), Some("4"));
    assert!(grab(r"Min_Latency\(ms\): (\d+)").is_some(), "{text}");
    assert!(grab(r"Avg_Latency\(ms\): (\d+)").is_some(), "{text}");
    assert!(grab(r"Max_Latency\(ms\): (\d+)").is_some(), "{text}");
    assert!(text.starts_with("sqlio v1.5.SG\n"));
    let pct = text
        .lines()
        .find(|l| l.starts_with("%: "))
        .expect("histogram row");
    assert_eq!(pct.split_whitespace().count(), 26, "{pct}");
    let masked = Regex::new(r":\s+\d+\.\d\d")
        .expect("regex")
        .replace_all(&text, ": #.##");
    let masked = Regex::new(r"(Latency\(ms\): )\d+")
        .expect("regex")
        .replace_all(&masked, "${1}#");
    let masked = Regex::new(r"(?m)^%:.*$")
        .expect("regex")
        .replace_all(&masked, "%: <masked>");
    insta::assert_snapshot!("sqlio_block_real_run_masked", masked);
}

/// A target whose path is not UTF-8 (a directory named in Latin-1) is refused by sqlio and
/// diskspd with the argument named, its odd byte escaped, before any file is created. It was
/// made text with U+FFFD and the create failed with "No such file or directory" on a
/// directory that exists (or would have written a file of another name).
#[test]
fn a_target_path_that_is_not_utf8_is_refused_by_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tmp();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&odd).expect("mkdir");
    let target = odd.join("t.dat").into_os_string();
    type Front = fn(
        &[OsString],
        &mut dyn std::io::Write,
        &mut dyn std::io::Write,
    ) -> Result<Outcome, sqliosim::bench::error::BenchError>;
    let sqlio: Front = sqliosim::bench::sqlio::run_with;
    let diskspd: Front = sqliosim::bench::diskspd::run_with;
    let runs = [
        ("sqliosim sqlio", sqlio, os(&["-kR", "-s1", "-b8"])),
        ("sqliosim diskspd", diskspd, os(&["-c1M", "-d1", "-b8K"])),
    ];
    for (name, run_with, mut args) in runs {
        args.insert(0, name.into());
        args.push(target.clone());
        let e = run_with(&args, &mut Vec::new(), &mut Vec::new())
            .expect_err("a non-UTF-8 target is refused");
        let text = e.to_string();
        assert!(
            text.contains("caf\\xe9/t.dat") && text.contains("not UTF-8"),
            "{name}: {text}"
        );
        assert_eq!(
            std::fs::read_dir(&odd).expect("ls").count(),
            0,
            "{name} created a file"
        );
    }
}
