//! Capacity runs through the library entry points (`bench::cmd::run_with`,
//! `bench::sqlio::run_with`, `bench::diskspd::run_with`): real short runs on a file in the
//! build's temporary directory with both engines, switch parsing, and output layouts.

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
fn short_run_with_each_engine_reports_the_facts() {
    let dir = tmp();
    let file = dir.path().join("b.dat");
    let f = file.to_str().expect("utf-8 path");
    for engine in ["uring", "psync"] {
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
            engine,
            "--verify",
        ]);
        println!("{text}");
        assert_eq!(outcome, Outcome::Clean, "{text}");
        assert!(
            text.contains("8 KiB random mix50, 1 thread(s) x 4 outstanding (queue depth 4)"),
            "{text}"
        );
        assert!(text.contains(&format!("engine {engine}")), "{text}");
        assert!(text.contains("direct I/O honoured"), "{text}");
        assert!(text.contains("9-nines"), "{text}");
    }
}

mod support {
    //! Synthetic results with known latencies, for deterministic layout snapshots.
    use sqliosim::bench::cpu::{CpuRow, CpuUsage};
    use sqliosim::bench::engine::{EngineKind, OpKind};
    use sqliosim::bench::honest::DirectIo;
    use sqliosim::bench::job::Job;
    use sqliosim::bench::latency::ThreadStats;
    use sqliosim::bench::run::{RunResult, TargetInfo};

    /// Two threads on one 64 MiB file, 70 % reads, latencies 100 µs .. 2 ms, 10 s measured.
    pub fn result() -> RunResult {
        let mut job = Job::with_defaults("testfile.dat".into(), 64 << 20);
        job.threads_per_target = 2;
        job.depth = 8;
        job.read_pct = 70;
        let mut threads = Vec::new();
        for t in 0..2u64 {
            let mut st = ThreadStats::default();
            for i in 0..10_000u64 {
                let kind = if i % 10 < 7 {
                    OpKind::Read
                } else {
                    OpKind::Write
                };
                let lat = 100_000 + (i * 7919 + t * 13) % 1_900_000;
                st.record(kind, lat, 8192, (i / 1000) as usize);
            }
            threads.push(st);
        }
        let mut total = ThreadStats::default();
        threads.iter().for_each(|t| total.merge(t));
        let direct_io = DirectIo {
            requested: true,
            honoured: true,
            filesystem: "ext4 (0xef53)".into(),
            dio_mem_align: 512,
            dio_offset_align: 512,
        };
        RunResult {
            job,
            engine: EngineKind::Uring,
            targets: vec![TargetInfo {
                path: "testfile.dat".into(),
                size: 64 << 20,
                direct_io,
            }],
            warnings: vec![],
            measured_s: 10.0,
            interrupted: false,
            cpu: CpuUsage {
                process_user_s: 0.5,
                process_sys_s: 2.0,
                per_cpu: vec![
                    CpuRow {
                        usage: 30.0,
                        user: 5.0,
                        kernel: 25.0,
                        idle: 70.0,
                    },
                    CpuRow {
                        usage: 10.0,
                        user: 2.5,
                        kernel: 7.5,
                        idle: 90.0,
                    },
                ],
            },
            threads,
            total,
        }
    }
}

mod sqlio_mode {
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
        assert!(e.contains("not supported"), "{e}");
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
            outstanding: 8,
            buffering: 'H',
            latency: true,
        }
    }

    /// The capture in formats.md §1.3, rebuilt from its own figures.
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
file d:\\testfile.dat with 4 threads (0-3) using mask 0x0 (0)
4 threads writing for 5 secs to file d:\\testfile.dat
using 8KB sequential IOs
enabling multiple I/Os per thread with 8 outstanding
buffering set to use hardware disk cache (but not file cache)
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
        std::fs::write(dir.path().join("param.txt"), "d:\\testfile.dat 2 0x0 8\n")
            .expect("param.txt");
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
}

mod diskspd_mode {
    use super::*;
    use sqliosim::bench::diskspd::{args, job_of, text, xml, Report};
    use sqliosim::bench::job::{DataMode, Pattern};

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn wiki_example_parses() {
        let a = args::parse(&strings(&[
            "-c2G",
            "-b4K",
            "-F8",
            "-r",
            "-o32",
            "-W60",
            "-d60",
            "-Sh",
            "testfile.dat",
        ]))
        .expect("parse");
        assert_eq!(a.create, Some(2 << 30));
        assert_eq!(
            (
                a.block,
                a.total_threads,
                a.outstanding,
                a.warmup,
                a.duration
            ),
            (4096, Some(8), 32, 60.0, 60.0)
        );
        assert!(a.random == Some(0) && a.no_cache && a.write_through);
        let job = job_of(&a).expect("job");
        assert_eq!(
            (job.threads_per_target, job.depth, job.block_size),
            (8, 32, 4096)
        );
        assert!(job.direct && job.write_through && job.pattern == Pattern::Random);
    }

    #[test]
    fn defaults_and_the_remaining_switches() {
        let a = args::parse(&strings(&["-c64M", "t.dat"])).expect("parse");
        assert_eq!(
            (
                a.duration,
                a.warmup,
                a.cooldown,
                a.block,
                a.outstanding,
                a.threads
            ),
            (10.0, 5.0, 0.0, 65536, 2, 1)
        );
        assert!(a.random.is_none() && !a.no_cache && !a.latency && a.format == args::Format::Text);
        let a = args::parse(&strings(&[
            "-c1G", "-w30", "-Su", "-L", "-Z", "-g100i", "-t2", "-C3", "-Rxml", "-z7", "-D",
            "t.dat",
        ]))
        .expect("parse");
        assert!(
            a.no_cache && !a.write_through && a.latency && a.zeros && a.format == args::Format::Xml
        );
        assert_eq!(
            (
                a.write_pct,
                a.throughput,
                a.cooldown,
                a.seed,
                a.iops_interval_ms
            ),
            (30, Some((100.0, true)), 3.0, 7, Some(1000))
        );
        let job = job_of(&a).expect("job");
        assert_eq!(
            (job.read_pct, job.data, job.rate_iops),
            (70, DataMode::Zeros, Some(200.0))
        );
        let g = args::parse(&strings(&["-c1G", "-b8K", "-g8192", "t.dat"])).expect("parse");
        assert_eq!(job_of(&g).expect("job").rate_iops, Some(1000.0));
    }

    #[test]
    fn bad_switches_are_named() {
        let e = args::parse(&strings(&["-w150", "t.dat"]))
            .expect_err("bad -w")
            .to_string();
        assert!(e.contains("-w") && e.contains("0 to 100"), "{e}");
        let e = args::parse(&strings(&["-Sm", "t.dat"]))
            .expect_err("bad -S")
            .to_string();
        assert!(e.contains("-S"), "{e}");
        let e = args::parse(&strings(&["-Rjson", "t.dat"]))
            .expect_err("bad -R")
            .to_string();
        assert!(e.contains("text or xml"), "{e}");
        let e = args::parse(&strings(&["-c1G"]))
            .expect_err("no target")
            .to_string();
        assert!(e.contains("target"), "{e}");
        let e = args::parse(&strings(&["-Q", "t.dat"]))
            .expect_err("unknown")
            .to_string();
        assert!(e.contains("-Q"), "{e}");
    }

    fn report() -> (args::DiskspdArgs, Report) {
        let a = args::parse(&strings(&[
            "-c64M",
            "-b8K",
            "-r",
            "-w30",
            "-t2",
            "-o8",
            "-Sh",
            "-L",
            "testfile.dat",
        ]))
        .expect("parse");
        let rep = Report {
            result: super::support::result(),
            host: "testhost".into(),
            start_time: "2026-01-01 00:00:00 UTC".into(),
        };
        (a, rep)
    }

    #[test]
    fn text_layout_snapshot() {
        let (a, rep) = report();
        let t = text::render(&a, &rep);
        assert!(t.contains("  %-ile |  Read (ms) | Write (ms) | Total (ms)"));
        assert!(t.contains("thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | LatStdDev |  file"));
        insta::assert_snapshot!("diskspd_text_synthetic", t);
    }

    #[test]
    fn xml_layout_snapshot_parses() {
        let (a, rep) = report();
        let x = xml::render(&a, &rep).expect("xml");
        let doc = roxmltree::Document::parse(&x).expect("well-formed XML");
        let ts = doc
            .descendants()
            .find(|n| {
                n.has_tag_name("TimeSpan")
                    && n.children().any(|c| c.has_tag_name("TestTimeSeconds"))
            })
            .expect("timespan");
        let buckets = ts
            .descendants()
            .filter(|n| n.has_tag_name("Bucket"))
            .count();
        assert_eq!(buckets, 15, "min, 13 percentiles, max");
        assert_eq!(
            ts.descendants()
                .filter(|n| n.has_tag_name("Thread"))
                .count(),
            2
        );
        insta::assert_snapshot!("diskspd_xml_synthetic", x);
    }

    #[test]
    fn real_runs_text_and_xml_with_both_engines() {
        let dir = tmp();
        let f = dir.path().join("ds.dat");
        let f = f.to_str().expect("utf-8");
        for (engine, fmt) in [("uring", "-Rtext"), ("psync", "-Rxml")] {
            let argv = [
                "sqliosim diskspd",
                "-c8M",
                "-d1",
                "-W0",
                "-b8K",
                "-r",
                "-w25",
                "-t2",
                "-o4",
                "-Sh",
                "-L",
                fmt,
                "--engine",
                engine,
                f,
            ];
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let outcome =
                bench::diskspd::run_with(&os(&argv), &mut out, &mut err).expect("diskspd runs");
            assert_eq!(outcome, Outcome::Clean);
            let text = String::from_utf8(out).expect("utf-8");
            if fmt == "-Rxml" {
                let doc = roxmltree::Document::parse(&text).expect("well-formed");
                let ios: u64 = doc
                    .descendants()
                    .filter(|n| n.has_tag_name("IOCount"))
                    .filter_map(|n| n.text()?.parse::<u64>().ok())
                    .sum();
                assert!(ios > 0, "{text}");
            } else {
                assert!(
                    text.contains("Results for timespan 1:") && text.contains("9-nines"),
                    "{text}"
                );
                assert!(text.contains(&format!(
                    "using {}",
                    if engine == "uring" {
                        "io_uring"
                    } else {
                        "psync"
                    }
                )));
            }
        }
    }
}

mod bench_mode {
    use super::*;

    #[test]
    fn sweep_writes_csv_json_html_and_finds_saturation() {
        let dir = tmp();
        let p = |n: &str| dir.path().join(n).to_str().expect("utf-8").to_string();
        let (file, csv, json, html) = (p("s.dat"), p("r.csv"), p("r.json"), p("r.html"));
        let (outcome, text) = bench_out(&[
            "sqliosim bench",
            "--file",
            &file,
            "--size",
            "8M",
            "--threads",
            "1,2",
            "--outstanding",
            "1,...,4",
            "--rw",
            "read,write",
            "--duration",
            "0.15",
            "--warmup",
            "0",
            "--csv",
            &csv,
            "--json",
            &json,
            "--html",
            &html,
        ]);
        assert_eq!(outcome, Outcome::Clean, "{text}");
        assert!(
            text.contains("saturation (smallest queue depth within 5% of the best IOPS):"),
            "{text}"
        );
        let csv = std::fs::read_to_string(&csv).expect("csv");
        assert_eq!(csv.lines().count(), 1 + 2 * 2 * 3, "{csv}");
        assert!(csv.starts_with("block_size,pattern,rw,"));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json"))
                .expect("valid JSON");
        assert_eq!(v["results"].as_array().map(Vec::len), Some(12));
        assert_eq!(v["saturation"].as_array().map(Vec::len), Some(2));
        let html = std::fs::read_to_string(&html).expect("html");
        assert!(html.contains("<svg") && html.contains("IOPS against queue depth"));
    }

    #[test]
    fn dir_repeat_and_sequential_write_through() {
        let dir = tmp();
        let d = dir.path().to_str().expect("utf-8");
        let (outcome, text) = bench_out(&[
            "sqliosim bench",
            "--dir",
            d,
            "--size",
            "4M",
            "--rw",
            "write",
            "--pattern",
            "sequential",
            "--block-size",
            "64K",
            "--outstanding",
            "2",
            "--duration",
            "0.2",
            "--warmup",
            "0",
            "--repeat",
            "2",
            "--write-through",
            "--data",
            "zeros",
        ]);
        assert_eq!(outcome, Outcome::Clean, "{text}");
        assert!(dir.path().join("sqliosim-bench.dat").exists());
        assert!(
            text.contains("64 KiB sequential write") && text.contains("write-through"),
            "{text}"
        );
        assert!(text.contains("spread%"), "{text}");
    }

    #[test]
    fn refuses_a_file_it_did_not_create() {
        let dir = tmp();
        let file = dir.path().join("data.mdf");
        std::fs::write(&file, vec![7u8; 4 << 20]).expect("write");
        let f = file.to_str().expect("utf-8");
        let err = bench::cmd::run_with(
            &os(&["sqliosim bench", "--file", f, "--duration", "0.1"]),
            &mut Vec::new(),
        )
        .expect_err("must refuse");
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(std::fs::read(&file).expect("read"), vec![7u8; 4 << 20]);
    }

    #[test]
    fn bad_options_name_the_option() {
        for (opt, val, want) in [
            ("--pattern", "zigzag", "random or sequential"),
            ("--rw", "trim", "read, write or mix"),
            ("--engine", "aio", "uring or psync"),
            ("--outstanding", "0", "positive integers"),
            ("--block-size", "12Q", "a size"),
        ] {
            let err = bench::cmd::run_with(
                &os(&["sqliosim bench", "--file", "x.dat", opt, val]),
                &mut Vec::new(),
            )
            .expect_err("bad value");
            let msg = err.to_string();
            assert!(msg.contains(opt) && msg.contains(want), "{msg}");
        }
        let err = bench::cmd::run_with(
            &os(&[
                "sqliosim bench",
                "--file",
                "x.dat",
                "--verify",
                "--data",
                "zeros",
            ]),
            &mut Vec::new(),
        )
        .expect_err("verify+zeros");
        assert!(err.to_string().contains("--verify"), "{err}");
    }

    #[test]
    fn help_is_not_an_error() {
        let (outcome, text) = bench_out(&["sqliosim bench", "--help"]);
        assert_eq!(outcome, Outcome::Clean);
        assert!(text.contains("--outstanding"));
    }
}
