//! Command-line tests: help, SQLIOSim.com's legacy switches, the modern `run` options,
//! command-line overrides, bad values (exit 2 naming key and line). Every run uses `--dry-run`
//! so nothing is simulated. One test binary with the command line's other topics as modules:
//! the INI parser and its rules (`config`), shell completions, large and hostile inputs, and
//! the readers fuzzed with a corpus.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use std::path::Path;

mod big_inputs;
mod cgroup_memory;
mod cli_completions;
mod config;
mod fuzz_readers;
mod run_options;

const SAMPLES: &str = "/work/shared/reference/microsoft-sample-configs";

fn sqliosim(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sqliosim").expect("binary");
    cmd.current_dir(cwd);
    cmd
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

const SMALL: &str = "[CONFIG]\nTestCycleDuration=300\n[File1]\nFileName=d.mdx\nInitialSize=16\n\
                     [File2]\nFileName=l.ldx\nInitialSize=8\nLogFile=TRUE\n";

#[test]
fn help_lists_commands_and_legacy_switches() {
    let dir = scratch();
    sqliosim(dir.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(
            contains("run")
                .and(contains("bench"))
                .and(contains("-cfg FILE -save FILE -log FILE")),
        );
    sqliosim(dir.path())
        .arg("-?")
        .assert()
        .success()
        .stdout(contains("Usage: sqliosim <COMMAND>"));
    sqliosim(dir.path())
        .arg("--version")
        .assert()
        .success()
        .stdout(contains("sqliosim"));
}

#[test]
fn help_run_explains_every_option_with_its_default() {
    let dir = scratch();
    let out = sqliosim(dir.path())
        .args(["help", "run"])
        .assert()
        .success();
    let options = [
        "--config",
        "--dir",
        "--duration",
        "--size",
        "--log",
        "--seed",
        "--json",
        "--no-json",
        "--save",
        "--cycles",
        "--stop-on-error",
        "--force",
        "--resume",
        "--bundle",
        "--bench",
        "--engine",
        "--dry-run",
    ];
    let mut out = out;
    for opt in options {
        out = out.stdout(contains(opt));
    }
    out.stdout(contains("default: TestCycleDuration").and(contains("--fault-injection").not()));
}

#[test]
fn no_arguments_is_a_usage_error() {
    let dir = scratch();
    sqliosim(dir.path())
        .assert()
        .code(2)
        .stderr(contains("a command is needed"));
    sqliosim(dir.path())
        .arg("--bogus")
        .assert()
        .code(2)
        .stderr(contains("unexpected argument '--bogus'"));
}

#[test]
fn legacy_switches_run_and_save() {
    let dir = scratch();
    let cfg = format!("{SAMPLES}/sqliosim.hwcache.cfg.ini");
    sqliosim(dir.path())
        .args([
            "-cfg",
            &cfg,
            "-dir",
            "d1",
            "-dir",
            "d2",
            "-d",
            "45",
            "-size",
            "20",
            "-log",
            "x.xml",
            "-save",
            "s.ini",
            "--dry-run",
        ])
        .assert()
        .success()
        .stdout(
            contains("TestCycleDuration = 45 s")
                .and(contains("CacheHitRatio = 100.00%"))
                .and(contains(
                    "d1/sqliosim.mdx, data, InitialSize = 20 MB, MaxSize = 40 MB",
                ))
                .and(contains("d2/sqliosim.ldx, log, InitialSize = 10 MB"))
                .and(contains(format!(
                    "Error log = {}",
                    dir.path().join("x.xml").display()
                )))
                .and(contains("Configuration saved to")),
        );
    let saved = std::fs::read_to_string(dir.path().join("s.ini")).expect("saved file");
    assert!(
        saved.contains("TestCycleDuration=45\n") && saved.contains("[File4]\n"),
        "{saved}"
    );
    sqliosim(dir.path())
        .args(["-cfg", "s.ini", "--dry-run"])
        .assert()
        .success()
        .stdout(contains("File4 = ").and(contains("TestCycleDuration = 45 s")));
}

#[test]
fn modern_options_and_overrides() {
    let dir = scratch();
    std::fs::write(dir.path().join("t.ini"), SMALL).expect("write");
    sqliosim(dir.path())
        .args([
            "run",
            "--config",
            "t.ini",
            "--duration",
            "2m",
            "--seed",
            "5",
            "--cycles",
            "3",
            "--dry-run",
        ])
        .assert()
        .success()
        .stdout(
            contains("TestCycles = 3, TestCycleDuration = 120 s")
                .and(contains("Seed = 5"))
                .and(contains(format!(
                    "File1 = {}, data, InitialSize = 16 MB",
                    dir.path().join("d.mdx").display()
                ))),
        );
    sqliosim(dir.path())
        .args([
            "run",
            "--config",
            "t.ini",
            "--no-stop-on-error",
            "--size",
            "30",
            "--dry-run",
        ])
        .assert()
        .success()
        .stdout(contains("StopOnError = No").and(contains("InitialSize = 30 MB, MaxSize = 60 MB")));
}

#[test]
fn embedded_default_and_working_dir_file() {
    let dir = scratch();
    sqliosim(dir.path())
        .args(["run", "--dry-run"])
        .assert()
        .success()
        .stdout(
            contains("sqliosim-data/sqliosim.mdx")
                .and(contains("built-in default"))
                .and(contains("TestCycleDuration = 60 s")),
        );
    std::fs::write(dir.path().join("sqliosim.cfg.ini"), SMALL).expect("write");
    sqliosim(dir.path())
        .args(["--dry-run", "--seed", "3"])
        .assert()
        .success()
        .stdout(contains("Seed = 3").and(contains("TestCycleDuration = 300 s")));
    sqliosim(dir.path())
        .args(["-d", "9", "--dry-run"])
        .assert()
        .success()
        .stdout(contains("TestCycleDuration = 9 s").and(contains("sqliosim.cfg.ini")));
}

#[test]
fn bad_values_exit_2_naming_file_line_and_key() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("t.ini"),
        format!("{SMALL}[CONFIG]\nCacheHitRatio=lots\n"),
    )
    .expect("write");
    sqliosim(dir.path())
        .args(["run", "--config", "t.ini", "--dry-run"])
        .assert()
        .code(2)
        .stderr(contains(
            "sqliosim: error: t.ini:11: [CONFIG] CacheHitRatio=lots: expected a whole number from 0 to 10000",
        ));
    sqliosim(dir.path())
        .args(["run", "--config", "t.ini", "--duration", "0"])
        .assert()
        .code(2)
        .stderr(contains("the duration must be at least 1 second"));
    sqliosim(dir.path())
        .args(["-cfg", "missing.ini"])
        .assert()
        .code(2)
        .stderr(contains("cannot read the configuration file"));
    sqliosim(dir.path())
        .args(["run", "--engine", "posixaio", "--dry-run"])
        .assert()
        .code(2)
        .stderr(contains(
            "\"posixaio\": expected one of uring, psync, libaio, sync",
        ));
}

#[test]
fn windows_paths_without_dir_are_refused() {
    let dir = scratch();
    let cfg = format!("{SAMPLES}/sqliosim.hwcache.cfg.ini");
    sqliosim(dir.path())
        .args(["-cfg", &cfg, "--dry-run"])
        .assert()
        .code(2)
        .stderr(contains("sqliosim.hwcache.cfg.ini:64: [File1] FileName=f:\\sqliosim.mdx is a Windows path; pass -dir DIR"));
}

#[test]
fn warnings_go_to_stderr() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("t.ini"),
        format!("{SMALL}[CONFIG]\nStopOnErorr=TRUE\n"),
    )
    .expect("write");
    sqliosim(dir.path())
        .args(["run", "--config", "t.ini", "--dry-run"])
        .assert()
        .success()
        .stderr(contains("sqliosim: warning: t.ini:11: unknown key StopOnErorr in [CONFIG] is ignored; did you mean StopOnError?"));
}

#[test]
fn other_subcommands_receive_their_arguments_raw() {
    let dir = scratch();
    // `--help` must reach the subcommand, not be answered by sqliosim's own parser.
    for sub in [
        "bench", "sqlio", "diskspd", "report", "verify", "restore", "selftest",
    ] {
        sqliosim(dir.path())
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(contains(format!("Usage: sqliosim {sub} ")))
            .stdout(contains("passed through as given").not());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Mutated configuration files either resolve (exit 0 with --dry-run) or stop with a
    /// message and exit 2; never a panic (exit 101) or an internal failure.
    #[test]
    fn mutated_files_exit_0_or_2(cut in 0usize..1300, junk in "[\\[\\]=;A-Za-z0-9\\n:\\\\-]{0,80}") {
        let dir = scratch();
        let mut text = std::fs::read_to_string(format!("{SAMPLES}/sqliosim.sparse.cfg.ini")).unwrap_or_default();
        text.truncate(cut.min(text.len()));
        text.push_str(&junk);
        std::fs::write(dir.path().join("t.ini"), &text).expect("write");
        let out = sqliosim(dir.path()).args(["-cfg", "t.ini", "--dry-run"]).output().expect("run");
        let code = out.status.code();
        proptest::prop_assert!(code == Some(0) || code == Some(2), "exit {:?} for {:?}", code, text);
        if code == Some(2) {
            proptest::prop_assert!(String::from_utf8_lossy(&out.stderr).contains("sqliosim: error: "));
        }
    }
}

/// `text` as Windows saves it: CRLF line endings, in `encoding` (utf-8, utf-8-bom, utf-16le,
/// utf-16be; the UTF-16 forms with their byte-order mark, as Notepad's "Unicode").
fn windows_bytes(text: &str, encoding: &str) -> Vec<u8> {
    let crlf = text.replace("\r\n", "\n").replace('\n', "\r\n");
    let utf16 = |bom: [u8; 2], unit: fn(u16) -> [u8; 2]| {
        let mut out = bom.to_vec();
        crlf.encode_utf16()
            .for_each(|u| out.extend_from_slice(&unit(u)));
        out
    };
    match encoding {
        "utf-8" => crlf.into_bytes(),
        "utf-8-bom" => [&[0xEF, 0xBB, 0xBF][..], crlf.as_bytes()].concat(),
        "utf-16le" => utf16([0xFF, 0xFE], u16::to_le_bytes),
        "utf-16be" => utf16([0xFE, 0xFF], u16::to_be_bytes),
        other => panic!("no such encoding {other}"),
    }
}

/// Resolves t.ini (written as `bytes`) the way a user would, with the samples' Windows paths
/// replaced by -dir; returns (exit code, stdout, stderr).
fn dry_run(dir: &Path, bytes: &[u8]) -> (Option<i32>, String, String) {
    std::fs::write(dir.join("t.ini"), bytes).expect("write t.ini");
    let out = sqliosim(dir)
        .args([
            "-cfg",
            "t.ini",
            "-dir",
            "d1",
            "-size",
            "20",
            "--seed",
            "1",
            "--dry-run",
        ])
        .output()
        .expect("run");
    // MaxMemory follows the memory available at the moment: mask it.
    let mem = regex::Regex::new(r"MaxMemory = \d+ MB").expect("regex");
    let text = |b: &[u8]| {
        mem.replace_all(&String::from_utf8_lossy(b), "MaxMemory = N MB")
            .into_owned()
    };
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_five_samples_read_the_same_in_every_windows_encoding() {
    let dir = scratch();
    for sample in ["default", "hwcache", "nothrottle", "seqwrites", "sparse"] {
        let path = format!("{SAMPLES}/sqliosim.{sample}.cfg.ini");
        let text = std::fs::read_to_string(&path).expect("the Microsoft sample");
        let plain = dry_run(dir.path(), text.as_bytes());
        assert_eq!(plain.0, Some(0), "{sample} as given: {}", plain.2);
        assert!(plain.1.contains("MaxMemory"), "{sample}: {}", plain.1);
        for encoding in ["utf-8", "utf-8-bom", "utf-16le", "utf-16be"] {
            let got = dry_run(dir.path(), &windows_bytes(&text, encoding));
            assert_eq!(got, plain, "{sample} saved as {encoding} with CRLF");
        }
    }
}

#[test]
fn a_file_with_nothing_readable_is_refused() {
    let dir = scratch();
    let le = windows_bytes(SMALL, "utf-16le");
    let cases: [(&str, &[u8], &str); 3] = [
        ("utf-16 without its BOM", &le[2..], "NUL bytes"),
        ("empty", b"", "the file is empty"),
        (
            "not an ini",
            b"hello\r\nworld\r\n",
            "the first of them \"hello\"",
        ),
    ];
    for (what, bytes, says) in cases {
        let (code, stdout, stderr) = dry_run(dir.path(), bytes);
        assert_eq!(code, Some(2), "{what}: {stdout}{stderr}");
        assert!(
            stderr.contains("t.ini") && stderr.contains(says),
            "{what}: {stderr}"
        );
        assert!(!stdout.contains("MaxMemory"), "{what} ran: {stdout}");
    }
}
