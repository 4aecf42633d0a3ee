//! `sqliosim diskspd`: switch parsing, text and XML layouts, real runs.

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
        "-c1G", "-w30", "-Su", "-L", "-Z", "-g100i", "-t2", "-C3", "-Rxml", "-z7", "-D", "t.dat",
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
    let r = args::parse(&strings(&["-c1G", "-B4M", "-f512M", "-fr", "t.dat"])).expect("parse");
    assert_eq!((r.base_offset, r.max_offset), (4 << 20, Some(512 << 20)));
    assert_eq!(r.ignored, ["-fr"]);
    let job = job_of(&r).expect("job");
    assert_eq!(job.region(1 << 30), (4 << 20, 512 << 20));
    let low = args::parse(&strings(&["-c1G", "-B4K", "t.dat"])).expect("parse");
    assert_eq!(job_of(&low).expect("job").region(1 << 30).0, 1 << 20);
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
    // DiskSpd has no JSON results (its 2.1 notes list -Rp<text|xml>; its writers are text and
    // XML): the refusal says where JSON is found here.
    assert!(e.contains("bench --json"), "{e}");
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
        "-D",
        "testfile.dat",
    ]))
    .expect("parse");
    let rep = Report {
        result: super::support::result(),
        host: "testhost".into(),
        start_time: "2026-01-01 00:00:00 UTC".into(),
        topology: synthetic_topology(),
    };
    (a, rep)
}

/// Two CPUs on one socket, one core each: a fixed topology so the snapshot does not depend on
/// the machine that runs the tests.
pub fn synthetic_topology() -> sqliosim::bench::diskspd::topology::Topology {
    use sqliosim::bench::diskspd::topology::{CpuPlace, Topology};
    Topology {
        cpus: (0..2)
            .map(|id| CpuPlace {
                id,
                socket: 0,
                node: 0,
                core: id,
            })
            .collect(),
    }
}

#[test]
fn text_layout_snapshot() {
    let (a, rep) = report();
    let t = text::render(&a, &rep);
    assert!(t.contains("  %-ile |  Read (ms) | Write (ms) | Total (ms)"));
    assert!(t.contains("thread |       bytes     |     I/Os     |    MiB/s   |  I/O per s |  AvgLat  | IopsStdDev | LatStdDev |  file"));
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
            n.has_tag_name("TimeSpan") && n.children().any(|c| c.has_tag_name("TestTimeSeconds"))
        })
        .expect("timespan");
    let buckets_in = |parent: &str| {
        let p = ts
            .children()
            .find(|n| n.has_tag_name(parent))
            .expect(parent);
        p.children().filter(|n| n.has_tag_name("Bucket")).count()
    };
    assert_eq!(
        buckets_in("Latency"),
        108,
        "0, 1..99, 99.9..99.9999999, 100 as DiskSpd"
    );
    assert_eq!(buckets_in("Iops"), 10, "one bucket per measured second");
    assert_eq!(
        ts.descendants()
            .filter(|n| n.has_tag_name("Thread"))
            .count(),
        2
    );
    insta::assert_snapshot!("diskspd_xml_synthetic", x);
}

#[test]
fn real_runs_text_and_xml_with_both_ring_kinds() {
    let dir = tmp();
    let f = dir.path().join("ds.dat");
    let f = f.to_str().expect("utf-8");
    for (kind, fmt) in [("uring", "-Rtext"), ("psync", "-Rxml")] {
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
            kind,
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
                if kind == "uring" { "io_uring" } else { "psync" }
            )));
        }
    }
}

#[test]
fn slash_switches_are_switches_and_slash_paths_are_targets() {
    let dir = tmp();
    let existing = dir.path().join("d.dat");
    std::fs::write(&existing, b"x").expect("write");
    let existing = existing.to_str().expect("utf-8").to_string();
    let a = args::parse(&strings(&[
        "/b8K",
        "/d3",
        "/o4",
        "/t2",
        "/w30",
        "/Sh",
        "/r",
        "/mnt/x/t.dat",
        "//data.dat",
    ]))
    .expect("parse");
    assert_eq!(
        (a.block, a.duration, a.outstanding, a.threads, a.write_pct),
        (8192, 3.0, 4, 2, 30)
    );
    assert!(a.no_cache && a.write_through && a.random == Some(0));
    assert_eq!(a.targets, ["/mnt/x/t.dat", "//data.dat"]);
    // /tmp starts with a switch letter and holds no other '/', but exists: a target.
    let a = args::parse(&strings(&["/b8K", &existing, "/tmp"])).expect("parse");
    assert_eq!(a.targets, [existing.as_str(), "/tmp"]);
    assert_eq!(a.block, 8192);
    let e = args::parse(&strings(&["/w150", "t.dat"]))
        .expect_err("bad /w")
        .to_string();
    assert!(e.contains("-w") && e.contains("0 to 100"), "{e}");
}

#[test]
fn si_and_xml_profiles_are_refused_with_exit_2() {
    use predicates::prelude::*;
    for (args, says) in [
        (&["-si", "t.dat"][..], "-si (one sequential offset shared"),
        (&["/si", "t.dat"][..], "-si (one sequential offset shared"),
        (&["-s8K", "t.dat"][..], "sequential stride is not supported"),
        (
            &["-Xprofile.xml"][..],
            "XML profiles (-X) are not supported",
        ),
    ] {
        let e = args::parse(&strings(args))
            .expect_err("refused")
            .to_string();
        assert!(e.contains(says), "{args:?}: {e}");
    }
    let dir = tmp();
    assert_cmd::Command::cargo_bin("sqliosim")
        .expect("binary")
        .current_dir(dir.path())
        .args(["diskspd", "-c4M", "-d1", "-si", "t.dat"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-si").and(predicate::str::contains("not supported")));
    assert!(
        !dir.path().join("t.dat").exists(),
        "a refused -si created its target"
    );
    assert_cmd::Command::cargo_bin("sqliosim")
        .expect("binary")
        .current_dir(dir.path())
        .args(["diskspd", "-Xprofile.xml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "XML profiles (-X) are not supported",
        ));
}

/// A target typed the Windows way (`K:\ds.dat`, the drive mapped by `SQLIOSIM_DRIVE_K`) is
/// written where the drive maps, and the report names it as typed, as DiskSpd does: in the
/// text's input parameters and per-thread rows, and in the XML's `Path` leaves (they showed
/// the mapped Linux path).
#[test]
fn a_windows_target_is_reported_as_typed() {
    let dir = tmp();
    // K is this test's own drive letter: no other test sets or reads SQLIOSIM_DRIVE_K.
    std::env::set_var("SQLIOSIM_DRIVE_K", dir.path());
    for fmt in ["-Rtext", "-Rxml"] {
        let argv = [
            "sqliosim diskspd",
            "-c4M",
            "-d1",
            "-W0",
            "-b8K",
            "-r",
            "-t1",
            "-o1",
            fmt,
            r"K:\ds.dat",
        ];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let outcome =
            bench::diskspd::run_with(&os(&argv), &mut out, &mut err).expect("diskspd runs");
        assert_eq!(outcome, Outcome::Clean);
        assert!(
            dir.path().join("ds.dat").is_file(),
            "not written where K: maps"
        );
        let text = String::from_utf8(out).expect("utf-8");
        let mapped = dir.path().join("ds.dat").display().to_string();
        assert!(
            !text.contains(&mapped),
            "{fmt} names the mapped path: {text}"
        );
        if fmt == "-Rxml" {
            let doc = roxmltree::Document::parse(&text).expect("well-formed");
            let paths: Vec<_> = doc
                .descendants()
                .filter(|n| n.has_tag_name("Path"))
                .filter_map(|n| n.text())
                .collect();
            assert!(
                !paths.is_empty() && paths.iter().all(|p| *p == r"K:\ds.dat"),
                "{paths:?}"
            );
        } else {
            assert!(text.contains(r"path: 'K:\ds.dat'"), "{text}");
            assert!(text.contains(r" | K:\ds.dat ("), "{text}");
        }
    }
}
