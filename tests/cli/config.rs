//! Configuration tests: Microsoft's five samples, `-save` round trips, one test per rule with
//! the exact error or warning text, and random input that must never panic.

use proptest::prelude::*;
use sqliosim::config::{self, ConfigSource, Env, Host, RunArgs, RunSettings};
use std::path::{Path, PathBuf};

#[path = "config/rules.rs"]
mod rules;

const SAMPLES: &str = "/work/shared/reference/microsoft-sample-configs";
const HOST: Host = Host {
    cpus: 2,
    mem_available_mb: 1024,
    mem_total_mb: 4096,
};

/// A scratch working directory with `t.ini` holding `text`.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new(text: &str) -> Scratch {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("t.ini"), text).expect("write t.ini");
        Scratch { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn env(&self) -> Env {
        Env {
            cwd: self.path().to_path_buf(),
            host: HOST,
        }
    }

    /// Resolves `t.ini` with `o` (its `config` set to t.ini); warnings as text.
    fn resolve(&self, mut o: RunArgs) -> Result<(RunSettings, Vec<String>), String> {
        o.config = Some("t.ini".into());
        RunSettings::resolve(&o, &self.env())
            .map(|(s, w)| (s, w.iter().map(ToString::to_string).collect()))
            .map_err(|e| e.to_string())
    }
}

/// A minimal valid file: one data and one log file, then `extra` lines (sections allowed).
fn with_files(extra: &str) -> String {
    format!(
        "[File1]\nFileName=d.mdx\nInitialSize=64\nMaxSize=128\nIncrement=1\nShrinkable=TRUE\n\
         [File2]\nFileName=l.ldx\nInitialSize=16\nLogFile=TRUE\n{extra}"
    )
}

fn ok(text: &str) -> (RunSettings, Vec<String>) {
    Scratch::new(text)
        .resolve(RunArgs::default())
        .expect("valid configuration")
}

fn err(text: &str) -> String {
    Scratch::new(text)
        .resolve(RunArgs::default())
        .expect_err("invalid configuration")
}

fn sample(name: &str) -> PathBuf {
    Path::new(SAMPLES).join(format!("sqliosim.{name}.cfg.ini"))
}

#[test]
fn all_five_microsoft_samples_parse_with_dir() {
    for name in ["default", "hwcache", "nothrottle", "seqwrites", "sparse"] {
        let scratch = Scratch::new("");
        let o = RunArgs {
            config: Some(sample(name)),
            dir: vec!["data".into()],
            ..RunArgs::default()
        };
        let (s, _) =
            RunSettings::resolve(&o, &scratch.env()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            s.config
                .files
                .iter()
                .all(|f| f.path.starts_with(scratch.path().join("data"))),
            "{name}"
        );
        assert_eq!(s.config.general.cpu_count, 2);
    }
}

#[test]
fn sample_values_are_read() {
    let scratch = Scratch::new("");
    let o = RunArgs {
        config: Some(sample("sparse")),
        ..RunArgs::default()
    };
    let (s, w) = RunSettings::resolve(&o, &scratch.env()).expect("sparse parses without -dir");
    let g = &s.config.general;
    assert_eq!(
        (g.max_memory_mb, g.test_cycles, g.test_cycle_duration_s),
        (32, 3, 600)
    );
    assert_eq!(g.target_io_duration_ms, 10000);
    assert!(!g.use_scatter_gather);
    assert_eq!(s.config.random.min_io_chain_length, 50);
    let names: Vec<_> = s
        .config
        .files
        .iter()
        .map(|f| f.path.file_name().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        names,
        ["sqliosim.mdx", "sqliosim.ldx", "sqliosim.mdx.replica"]
    );
    assert!(s.config.files[2].sparse && s.config.files[1].log_file);
    assert!(w.iter().any(|w| w.message.contains("names an NTFS stream")));
    assert_eq!(s.source, ConfigSource::File(sample("sparse")));
}

#[test]
fn save_round_trips_every_sample() {
    for name in ["default", "hwcache", "nothrottle", "seqwrites", "sparse"] {
        let scratch = Scratch::new("");
        let o = RunArgs {
            config: Some(sample(name)),
            dir: vec!["d1".into(), "d2".into()],
            ..RunArgs::default()
        };
        let (first, _) = RunSettings::resolve(&o, &scratch.env()).expect("sample");
        let saved = scratch.path().join("saved.ini");
        std::fs::write(&saved, config::to_ini(&first.config)).expect("write");
        let again = RunArgs {
            config: Some(saved),
            ..RunArgs::default()
        };
        let (second, _) = RunSettings::resolve(&again, &scratch.env()).expect("saved file parses");
        assert_eq!(first.config, second.config, "{name}");
    }
}

#[test]
fn saved_file_has_every_key() {
    let (s, _) = ok(&with_files(""));
    let text = config::to_ini(&s.config);
    for key in [
        "ErrorFile=",
        "IOAffinity=",
        "CPUCyclesMax=",
        "BuffersValidated=",
        "RADelay=",
        "BUDelay=",
        "MaxExtends=",
        "Sparse=",
    ] {
        assert!(text.contains(key), "{key} missing from\n{text}");
    }
}

#[test]
fn file_names_resolve_against_dir_or_the_config_folder() {
    let dir = Scratch::new(&with_files(""));
    let (s, _) = dir.resolve(RunArgs::default()).expect("valid");
    assert_eq!(s.config.files[0].path, dir.path().join("d.mdx"));
    assert_eq!(s.data_dir, dir.path());
    let (s, _) = dir
        .resolve(RunArgs {
            dir: vec!["x".into()],
            ..RunArgs::default()
        })
        .expect("valid");
    assert_eq!(s.config.files[1].path, dir.path().join("x/l.ldx"));
    assert_eq!(s.error_log, dir.path().join("x/sqliosim.log.xml"));
    let (s, _) =
        ok(&with_files("[CONFIG]\nErrorFile=/var/tmp/e.xml\n").replace("d.mdx", "/abs/d.mdx"));
    assert_eq!(s.config.files[0].path, Path::new("/abs/d.mdx"));
    assert_eq!(s.error_log, Path::new("/var/tmp/e.xml"));
}

#[test]
fn dir_without_file_sections_creates_a_pair_per_dir() {
    let dir = Scratch::new("[CONFIG]\nTestCycles=2\n");
    let o = RunArgs {
        dir: vec!["a".into(), "b".into()],
        size: Some(500),
        ..RunArgs::default()
    };
    let (s, _) = dir.resolve(o).expect("valid");
    let got: Vec<_> = s
        .config
        .files
        .iter()
        .map(|f| (f.path.clone(), f.initial_size_mb, f.max_size_mb, f.log_file))
        .collect();
    let p = dir.path();
    assert_eq!(
        got,
        [
            (p.join("a/sqliosim.mdx"), 500, 1000, false),
            (p.join("a/sqliosim.ldx"), 50, 50, true),
            (p.join("b/sqliosim.mdx"), 500, 1000, false),
            (p.join("b/sqliosim.ldx"), 50, 50, true),
        ]
    );
    // -size sets the pair's Increment to a tenth of its size (docs/configuration.md).
    let sized = RunArgs {
        dir: vec!["a".into()],
        size: Some(40),
        ..RunArgs::default()
    };
    let (s, _) = dir.resolve(sized).expect("valid");
    let inc: Vec<u64> = s.config.files.iter().map(|f| f.increment_mb).collect();
    assert_eq!(
        inc,
        [4, 0],
        "-size 40 gives Increment 4 MB, not the default's 20"
    );
    let twice = RunArgs {
        dir: vec!["a".into(), "a".into()],
        ..RunArgs::default()
    };
    let msg = dir.resolve(twice).expect_err("same dir twice");
    assert_eq!(
        msg,
        format!(
            "t.ini: -dir and -dir both resolve to {}; give each file its own name or directory",
            p.join("a/sqliosim.mdx").display()
        )
    );
}

#[test]
fn command_line_overrides_the_file() {
    let dir = Scratch::new(&with_files(
        "[CONFIG]\nTestCycleDuration=300\nTestCycles=5\n",
    ));
    let o = RunArgs {
        duration: Some(42),
        cycles: Some(0),
        size: Some(10),
        seed: Some(7),
        log: Some("logs/x.xml".into()),
        no_stop_on_error: true,
        ..RunArgs::default()
    };
    let (s, _) = dir.resolve(o).expect("valid");
    let g = &s.config.general;
    assert_eq!(
        (g.test_cycle_duration_s, g.test_cycles, g.stop_on_error),
        (42, 0, false)
    );
    assert_eq!(
        (
            s.config.files[0].initial_size_mb,
            s.config.files[0].max_size_mb
        ),
        (10, 20)
    );
    assert_eq!(
        s.config.files[0].increment_mb, 1,
        "a [FileN]'s own Increment stays"
    );
    assert_eq!(
        (
            s.config.files[1].initial_size_mb,
            s.config.files[1].max_size_mb
        ),
        (5, 5)
    );
    assert_eq!((s.seed, s.seed_given), (7, true));
    assert_eq!(s.error_log, dir.path().join("logs/x.xml"));
    let bad = dir
        .resolve(RunArgs {
            size: Some(0),
            ..RunArgs::default()
        })
        .expect_err("size 0");
    assert_eq!(bad, "command line -size/--size 0: expected 1 to 524288 MB");
}

#[test]
fn working_dir_file_else_embedded_default() {
    let dir = Scratch::new("");
    let (s, _) = RunSettings::resolve(&RunArgs::default(), &dir.env()).expect("embedded default");
    assert_eq!(s.source, ConfigSource::Embedded);
    assert_eq!(s.config.general.test_cycle_duration_s, 60);
    assert_eq!(
        s.config.files[0].path,
        dir.path().join("sqliosim-data/sqliosim.mdx")
    );
    assert_eq!(
        (
            s.config.files[0].initial_size_mb,
            s.config.files[0].max_size_mb
        ),
        (200, 400)
    );
    assert_eq!(s.config.general.max_memory_mb, 1024, "MemAvailable");
    std::fs::write(
        dir.path().join("sqliosim.cfg.ini"),
        with_files("[CONFIG]\nTestCycleDuration=9\n"),
    )
    .expect("write");
    let (s, _) = RunSettings::resolve(&RunArgs::default(), &dir.env()).expect("working-dir file");
    assert_eq!(
        s.source,
        ConfigSource::WorkingDir(dir.path().join("sqliosim.cfg.ini"))
    );
    assert_eq!(s.config.general.test_cycle_duration_s, 9);
}

#[test]
fn missing_config_file_is_an_error() {
    let dir = Scratch::new("");
    let o = RunArgs {
        config: Some("nope.ini".into()),
        ..RunArgs::default()
    };
    let e = RunSettings::resolve(&o, &dir.env())
        .expect_err("missing")
        .to_string();
    assert!(
        e.starts_with(&format!(
            "cannot read the configuration file {}: ",
            dir.path().join("nope.ini").display()
        )),
        "{e}"
    );
}

#[test]
fn repo_configs_are_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("configs"))
        .expect("configs/")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.push(root.join("sqliosim.cfg.ini.sample"));
    for path in files {
        let dir = Scratch::new("");
        let o = RunArgs {
            config: Some(path.clone()),
            ..RunArgs::default()
        };
        let (_, mut w) = RunSettings::resolve(&o, &dir.env())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Microsoft's samples are kept as published: seqwrites asks for 1,000-page bulk
        // writes, which IoGeneration splits, and says so.
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if Path::new(SAMPLES).join(name).exists() {
            w.retain(|w| !w.message.contains("is more than IoGeneration="));
        }
        assert!(w.is_empty(), "{}: {w:?}", path.display());
    }
}

/// The keys the sample sets or shows commented out (`Key=…` or `;Key=…`), by section name in
/// lower case (`[File1]`..`[FileN]` as `filen`), and each section's whole text.
fn sample_sections(text: &str) -> std::collections::BTreeMap<String, (Vec<String>, String)> {
    let mut out = std::collections::BTreeMap::<String, (Vec<String>, String)>::new();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.to_ascii_lowercase();
            let numbered = name
                .strip_prefix("file")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            section = if numbered { "filen".into() } else { name };
            continue;
        }
        let entry = out.entry(section.clone()).or_default();
        entry.1.push_str(line);
        entry.1.push('\n');
        let setting = line.trim_start_matches(';');
        if let Some((key, _)) = setting.split_once('=') {
            if !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric()) {
                entry.0.push(key.to_string());
            }
        }
    }
    out
}

/// The spellings a key also has, named in the sample's comment on the key they stand for
/// rather than set a second time (setting both would leave the later one in force).
const ALIASES: &[&str] = &["ScatterGather"];

#[test]
fn the_sample_names_every_key_the_parser_accepts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("sqliosim.cfg.ini.sample")).expect("the sample");
    let sample = sample_sections(&text);
    let mut specs: Vec<(String, &[&str])> = config::sections::SECTIONS
        .iter()
        .map(|s| (s.name.to_ascii_lowercase(), s.keys))
        .collect();
    specs.push(("filen".into(), config::sections::FILE_KEYS));
    // A parser that saw nothing would pass anything.
    assert!(specs.len() >= 10 && specs[0].1.len() >= 20, "{specs:?}");
    let mut missing = Vec::new();
    for (section, keys) in &specs {
        let (named, body) = sample.get(section).cloned().unwrap_or_default();
        for key in keys.iter() {
            let found = if ALIASES.contains(key) {
                body.contains(key)
            } else {
                named.iter().any(|n| n.eq_ignore_ascii_case(key))
            };
            if !found {
                missing.push(format!("[{section}] {key}"));
            }
        }
        // The other way: a key the sample shows (commented out or not) is one the parser knows.
        for n in &named {
            assert!(
                keys.iter().any(|k| k.eq_ignore_ascii_case(n)),
                "the sample's [{section}] shows {n}, which the parser does not know"
            );
        }
    }
    assert!(
        missing.is_empty(),
        "sqliosim.cfg.ini.sample lacks keys the parser accepts (add each with its default and a \
         comment): {missing:?}"
    );
}

#[test]
fn docs_configuration_md_names_every_key_the_parser_accepts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/configuration.md")).expect("the doc");
    let mut keys: Vec<&str> = config::sections::SECTIONS
        .iter()
        .flat_map(|s| s.keys.iter().copied())
        .chain(config::sections::FILE_KEYS.iter().copied())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // A registry that gave nothing would pass anything.
    assert!(keys.len() >= 60, "{keys:?}");
    // A key is documented where its name stands in backticks, as in the tables' first columns.
    let missing: Vec<&str> = keys
        .into_iter()
        .filter(|k| !text.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/configuration.md does not name these keys the parser accepts (a row each, with its \
         default and range): {missing:?}"
    );
}

#[test]
fn echo_has_sqliosim_first_line_and_the_seed() {
    let (mut s, _) = ok(&with_files("[CONFIG]\nCPUCount=2\nMaxMemoryMB=630\n"));
    s.seed = 99;
    let echo = s.echo();
    let first = echo.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        "CPUCount = 2, Affinity = 0, IOAffinity = 0, MaxMemory = 630 MB, StopOnError = Yes, TestCycles = 1, \
         TestCycleDuration = 300 s, CacheHitRatio = 10.00%"
    );
    assert!(
        echo.contains("File2 = ") && echo.ends_with("Seed = 99\n"),
        "{echo}"
    );
}

/// Lines drawn from the vocabulary of real files, so mutations reach the checks.
fn ini_line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "CPUCount",
        "MaxMemoryMB",
        "UserCount",
        "CacheHitRatio",
        "FileName",
        "InitialSize",
        "MaxSize",
        "Increment",
        "Shrinkable",
        "LogFile",
        "MinExtends",
        "MaxExtends",
        "BuffersBUMax",
        "ErrorFile",
        "Bogus",
    ]);
    let values = prop::sample::select(vec![
        "0",
        "-1",
        "1",
        "64",
        "10000",
        "99999999999999999999",
        "TRUE",
        "false",
        "",
        "x:y",
        "f:\\a.mdx",
        "a.mdx:s",
        "é",
    ]);
    let sections = prop::sample::select(vec![
        "[CONFIG]",
        "[File1]",
        "[File2]",
        "[RandomUser]",
        "[ShrinkUser]",
        "[X]",
        "[File",
    ]);
    prop_oneof![
        (keys, values).prop_map(|(k, v)| format!("{k}={v}")),
        sections.prop_map(String::from),
        "[ -~]{0,20}",
        "\\PC{0,10}",
    ]
}

proptest! {
    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        let _ = config::parse(&text, "p.ini", &HOST);
    }

    #[test]
    fn mutated_configs_resolve_or_fail_cleanly(lines in prop::collection::vec(ini_line(), 0..30), cut in 0usize..200) {
        let mut text = std::fs::read_to_string(sample("sparse")).unwrap_or_default();
        text.truncate(cut.min(text.len()));
        text.push('\n');
        text.push_str(&lines.join("\n"));
        let dir = Scratch::new(&text);
        match dir.resolve(RunArgs::default()) {
            Ok((s, _)) => prop_assert!(!s.config.files.is_empty()),
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }
}

#[test]
fn from_ini_builds_settings_for_tests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, w) = RunSettings::from_ini(&with_files(""), dir.path(), HOST, 42).expect("valid");
    assert!(w.is_empty(), "{w:?}");
    assert_eq!((s.seed, s.source.clone()), (42, ConfigSource::Inline));
    assert_eq!(s.config.files[0].path, dir.path().join("d.mdx"));
    assert_eq!(s.config.files[0].max_pages(), 128 * 128);
    assert_eq!(s.error_log, dir.path().join("sqliosim.log.xml"));
}

#[test]
fn settings_serialize_to_json() {
    let (s, _) = ok(&with_files(""));
    let json = serde_json::to_value(&s).expect("serialize");
    assert_eq!(json["config"]["general"]["cache_hit_ratio"], 1000);
    assert_eq!(json["config"]["files"][1]["log_file"], true);
}
