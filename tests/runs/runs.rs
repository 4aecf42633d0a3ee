//! Whole runs of the real binary on this machine: the quick configuration, the built-in
//! default, and a multi-directory run finish clean, and every actor's I/O is in the statistics.

use std::path::Path;

use crate::crash_support::{assert_exit, assert_success, bin, run_cmd, small_config, verify};

fn actors_with_io(json: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(json).expect("json summary");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    v["stats"]["actors"]
        .as_array()
        .expect("actors")
        .iter()
        .filter(|a| {
            let io = &a["io"];
            ["reads", "scatter_reads", "writes", "gather_writes"]
                .iter()
                .map(|k| io[*k].as_u64().unwrap_or(0))
                .sum::<u64>()
                > 0
        })
        .map(|a| a["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn assert_clean(out: &std::process::Output) {
    let stdout = assert_success(out);
    assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
}

#[test]
fn quick_config_is_clean_and_every_actor_does_io() {
    const ACTORS: [&str; 8] = [
        "Initial Update",
        "Random User",
        "Audit User",
        "Read Ahead User",
        "Bulk Update User",
        "Checkpoint",
        "Lazy Writer",
        "Log Writer",
    ];
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quick.cfg.ini");
    // The lazy writer works only once the users have put the 8 MB pool under pressure. Beside
    // six spinners and a disk writer, 2 runs of 8 s in 6 ended with no I/O by the lazy writer
    // (without the spinners every actor worked in the first 8 s, 2 of 2): a run in which an
    // actor did nothing goes again, longer. Every run must be clean.
    let mut actors = Vec::new();
    for seconds in ["8", "24", "60"] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let json = dir.path().join("quick.json");
        let out = bin()
            .arg("-cfg")
            .arg(&config)
            .arg("-dir")
            .arg(dir.path())
            .args(["-d", seconds])
            .arg("--json")
            .arg(&json)
            .output()
            .expect("run");
        assert_clean(&out);
        actors = actors_with_io(&json);
        let idle: Vec<_> = ACTORS
            .iter()
            .filter(|a| !actors.iter().any(|x| x == *a))
            .collect();
        if idle.is_empty() {
            break;
        }
        eprintln!("a {seconds} s run: no I/O by {idle:?}, going again");
    }
    for a in ACTORS {
        assert!(actors.iter().any(|x| x == a), "{a} did no I/O: {actors:?}");
    }
}

#[test]
fn built_in_default_is_clean() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let json = dir.path().join("default.json");
    let out = bin()
        .args(["run", "--duration", "5", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run");
    assert_clean(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("built-in default"));
    assert!(actors_with_io(&json).len() >= 6);
    // No --engine: the engine probe ran (on an unnamed file written for it, the data file not
    // being there yet) and the header says why the engine runs (issue #24 §3).
    assert!(
        stdout.contains("; the default engine (8 KiB O_DIRECT reads at queue depth 1 on an unnamed file written for the probe in")
            || stdout.contains("; chosen by measurement instead of the default io_uring"),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid");
    assert!(
        matches!(
            v["io_engine"]["chosen"].as_str(),
            Some("default" | "measured")
        ),
        "{}",
        v["io_engine"]
    );
    // The journal in its default place (beside the data) is said in the log, not warned about
    // at every run (issue #38: the default run warned about itself).
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("WARNING: journal"), "{all}");
    let log = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).expect("log");
    assert!(
        log.contains("journal on the device under test, beside the data (the default)"),
        "{log}"
    );
}

#[test]
fn two_directories_get_a_data_and_log_file_each() {
    let a = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let b = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let out = bin()
        .arg("-dir")
        .arg(a.path())
        .arg("-dir")
        .arg(b.path())
        .args(["-size", "16", "-d", "3"])
        .output()
        .expect("run");
    assert_clean(&out);
    for d in [a.path(), b.path()] {
        for f in ["sqliosim.mdx", "sqliosim.ldx"] {
            let len = std::fs::metadata(d.join(f)).expect("file exists").len();
            assert!(len >= 8 * 1024 * 1024, "{}/{f}: {len} bytes", d.display());
        }
    }
    assert_exit(&verify(a.path()), 0);
}

#[test]
fn a_capacity_run_beside_the_simulation_reports_both() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quick.cfg.ini");
    let bench = format!(
        "--file {} --size 16M --block-size 8K --pattern random --rw read --duration 2",
        dir.path().join("bench.dat").display()
    );
    let out = bin()
        .arg("-cfg")
        .arg(&config)
        .arg("-dir")
        .arg(dir.path())
        .args(["-d", "3", "--bench", &bench])
        .output()
        .expect("run");
    assert_clean(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Capacity run beside the simulation"),
        "{stdout}"
    );
    assert!(stdout.contains("IOPS"), "{stdout}");
    // Bad bench options are a usage error before anything runs.
    let out = bin()
        .arg("-cfg")
        .arg(&config)
        .arg("-dir")
        .arg(dir.path())
        .args(["-d", "3", "--bench", "--bogus"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn each_io_service_kind_carries_a_clean_run_and_the_run_reports_it() {
    for kind in ["uring", "psync", "libaio", "sync"] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let config = small_config(dir.path(), 1, 2, false);
        let text = std::fs::read_to_string(&config).expect("config");
        let text = text.replace("[CONFIG]\n", "[CONFIG]\nMaxOutstandingIO=3\n");
        std::fs::write(&config, text).expect("config");
        let json = dir.path().join("summary.json");
        let out = run_cmd(&config, dir.path())
            .args(["--engine", kind, "--json"])
            .arg(&json)
            .output()
            .expect("run");
        let stdout = assert_success(&out);
        assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
        assert!(
            stdout.contains(&format!("I/O engine = {kind}")),
            "{kind}: {stdout}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid");
        assert_eq!(v["findings_total"], 0, "{kind}");
        assert_eq!(v["io_engine"]["requested"], kind);
        assert_eq!(v["io_engine"]["used"], kind, "{kind} is available here");
        assert_eq!(v["io_engine"]["max_outstanding_io"], 3);
        // Named, so kept; only a named io_uring is probed (issue #24 §3).
        assert_eq!(v["io_engine"]["chosen"], "named", "{kind}");
        assert_eq!(
            v["io_engine"]["probe"].is_string(),
            kind == "uring",
            "{kind}"
        );
        assert!(stdout.contains("; named by --engine"), "{kind}: {stdout}");
        let depth = if kind == "sync" {
            serde_json::Value::Null
        } else {
            3.into()
        };
        assert_eq!(v["io_engine"]["depth"], depth, "{kind}");
        let log_path = dir.path().join("sqliosim.log.xml");
        let log = std::fs::read_to_string(&log_path).expect("log");
        assert!(log.contains(&format!("I/O engine: {kind}")), "{kind}");
        // `sqliosim report` reads it back from the log and from the JSON summary.
        for input in [&log_path, &json] {
            let out = bin().arg("report").arg(input).output().expect("report");
            let text = assert_success(&out);
            assert!(
                text.contains(&format!("I/O engine: {kind}")),
                "{kind}: {text}"
            );
        }
    }
}

/// `Sparse=TRUE` leaves a hole only until the initial update writes every page. The summary keeps
/// the attribute, as SQLIOSim reports NTFS's sparse attribute, which stays set once the file is
/// filled (`Sparse = Yes`), and says on its fifth line what the filesystem holds.
#[test]
fn a_sparse_file_the_run_wrote_whole_keeps_its_sparse_attribute_and_says_its_allocation() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = dir.path().join("sparse.cfg.ini");
    let text = std::fs::read_to_string(crate::kernel_log::config(dir.path()))
        .expect("config")
        .replace("LogFile=FALSE", "LogFile=FALSE\nSparse=TRUE");
    std::fs::write(&config, text).expect("write config");
    let (json, log) = (dir.path().join("s.json"), dir.path().join("s.xml"));
    let data = dir.path().join("d");
    std::fs::create_dir(&data).expect("dir");
    let out = run_cmd(&config, &data)
        .arg("--json")
        .arg(&json)
        .arg("--log")
        .arg(&log)
        .output()
        .expect("run");
    assert_clean(&out);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    let mdx = v["stats"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| {
            f["path"]
                .as_str()
                .is_some_and(|p| p.ends_with("sqliosim.mdx"))
        })
        .expect("the data file's summary")
        .clone();
    let (size, held) = (
        mdx["space"]["size_bytes"].as_u64().expect("size"),
        mdx["space"]["allocated_bytes"].as_u64().expect("allocated"),
    );
    assert_eq!(size, 2 << 20, "{mdx:#}");
    assert!(
        held >= size,
        "every page was written, so every block is held: {mdx:#}"
    );
    assert_eq!(mdx["sparse"], true, "{mdx:#}");
    let xml = std::fs::read_to_string(&log).expect("log");
    let at = xml
        .find("Final Summary for file ")
        .and_then(|i| xml[i..].find("sqliosim.mdx").map(|j| i + j))
        .expect("the data file's summary in the log");
    let rest = &xml[at..];
    assert!(
        rest.contains("Sparse = Yes"),
        "the log drops the sparse attribute: {rest:.600}"
    );
    assert!(
        rest.contains("Allocated (MB) = 2.0 of 2.0"),
        "the log does not say what the filesystem holds: {rest:.600}"
    );
}

/// A key the run adjusts (here `BuffersRAMax` beyond the read-ahead cap, which is split) is
/// said on stderr, and also kept as evidence: a WARNING entry of the XML log and the JSON's
/// `config_warnings`, so a vendor reading the log sees what the run did with the file.
#[test]
fn the_configurations_warnings_are_in_the_log_and_the_json() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = dir.path().join("adjusted.cfg.ini");
    let text = std::fs::read_to_string(crate::kernel_log::config(dir.path()))
        .expect("config")
        .replace(
            "[ReadAheadUser]\nUserCount=0\n",
            "[ReadAheadUser]\nUserCount=0\nBuffersRAMax=65\n",
        );
    assert!(text.contains("BuffersRAMax=65"));
    std::fs::write(&config, text).expect("write config");
    let (json, log) = (dir.path().join("a.json"), dir.path().join("a.xml"));
    let data = dir.path().join("d");
    std::fs::create_dir(&data).expect("dir");
    let out = run_cmd(&config, &data)
        .arg("--json")
        .arg(&json)
        .arg("--log")
        .arg(&log)
        .output()
        .expect("run");
    assert_clean(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("BuffersRAMax=65 is more than"), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    let said = v["config_warnings"].as_array().expect("config_warnings");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].as_str().is_some_and(
            |w| w.contains("adjusted.cfg.ini:") && w.contains("BuffersRAMax=65 is more than")
        ),
        "{said:?}"
    );
    let xml = std::fs::read_to_string(&log).expect("log");
    let doc = roxmltree::Document::parse(&xml).expect("the log parses");
    let entry = doc
        .descendants()
        .filter(|n| n.has_tag_name("ENTRY"))
        .find(|n| n.attribute("Func") == Some("Config::Adjusted"))
        .expect("a log entry for the adjusted key");
    assert_eq!(entry.attribute("TYPE"), Some("WARNING"), "{xml:.2000}");
    let text: String = entry.descendants().filter_map(|n| n.text()).collect();
    assert!(text.contains("BuffersRAMax=65"), "{text}");
}

/// The end of a run logs SQLIOSim's "Closing file" line for every file, and each file's
/// summary carries SQLIOSim's DRIVE LEVEL lines where a block device is under it, with the
/// sector size sysfs gives that device (the JSON's `drive` likewise); none where there is no
/// block device.
#[test]
fn the_summary_names_the_drive_under_each_file_and_the_files_are_closed() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = crate::kernel_log::config(dir.path());
    let (json, log) = (dir.path().join("d.json"), dir.path().join("d.xml"));
    let data = dir.path().join("d");
    std::fs::create_dir(&data).expect("dir");
    let out = run_cmd(&config, &data)
        .arg("--json")
        .arg(&json)
        .arg("--log")
        .arg(&log)
        .output()
        .expect("run");
    assert_clean(&out);
    let xml = std::fs::read_to_string(&log).expect("log");
    for name in ["sqliosim.mdx", "sqliosim.ldx"] {
        let closing = format!("Closing file {}", data.join(name).display());
        assert!(xml.contains(&closing), "no '{closing}' in {xml:.3000}");
    }
    let dev = std::fs::metadata(&data).expect("stat").dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = std::path::PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if major == 0 {
        eprintln!("the data directory has an anonymous device number (btrfs, overlay): DRIVE LEVEL not compared");
        return;
    }
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    let drive = &v["stats"]["files"][0]["drive"];
    let Ok(real) = std::fs::canonicalize(&sys) else {
        assert!(drive.is_null(), "a drive where sysfs has none: {drive}");
        assert!(!xml.contains("DRIVE LEVEL:"), "{xml:.3000}");
        return;
    };
    let queue = match real.join("queue").is_dir() {
        true => real.clone(),
        false => real.parent().expect("disk").to_path_buf(),
    };
    let sector: u64 = std::fs::read_to_string(queue.join("queue/logical_block_size"))
        .expect("logical_block_size")
        .trim()
        .parse()
        .expect("number");
    assert_eq!(drive["sector_size"].as_u64(), Some(sector), "{drive}");
    let name = real
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert_eq!(drive["device"].as_str(), Some(name.as_str()), "{drive}");
    let line = format!("DRIVE LEVEL: Sector size = {sector}");
    assert!(xml.contains(&line), "no '{line}' in {xml:.4000}");
    assert!(xml.contains(&format!(", Device = {name}")), "{xml:.4000}");
}
