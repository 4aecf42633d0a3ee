//! deploy/systemd's burn-in unit: its settings, its command (with the unit's defaults and an
//! operator's override) against the built binary, its burn-in configuration
//! (configs/burnin.cfg.ini) resolved without a warning and run for 5 s, and `systemd-analyze
//! verify` with the binary installed as the docs install it, under a temporary root.
//!
//! systemd-analyze is skipped (SKIPPED line) where it is missing, and required under
//! SQLIOSIM_REQUIRE_SYSTEMD=1 (as in CI).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::manifests::{deploy, text, tool};

/// deploy/systemd's unit, its continuation lines joined.
fn unit_lines() -> Vec<String> {
    let path = deploy().join("systemd").join("sqliosim-burnin.service");
    let text = std::fs::read_to_string(&path).expect("the burn-in unit");
    text.replace("\\\n", " ")
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

/// The value of `key=` in the unit's lines (the last one wins, as in systemd).
fn unit_value(lines: &[String], key: &str) -> Option<String> {
    let prefix = format!("{key}=");
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

/// The unit's ExecStart as the words systemd passes: `${NAME}` replaced by the value,
/// `$NAME` as a word of its own by the value split at whitespace (none when empty), with the
/// unit's Environment= defaults overridden by `env` (as /etc/sqliosim/burnin.env does).
fn unit_command(lines: &[String], env: &[(&str, &str)]) -> Vec<String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    for e in lines.iter().filter_map(|l| l.strip_prefix("Environment=")) {
        let (name, value) = e.split_once('=').expect("NAME=value");
        vars.push((name.to_string(), value.to_string()));
    }
    vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let value = |name: &str| {
        vars.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("${name} is not set by the unit"))
    };
    let exec = unit_value(lines, "ExecStart").expect("ExecStart");
    let mut words = Vec::new();
    for word in exec.split_whitespace() {
        if let Some(name) = word.strip_prefix('$').filter(|n| !n.starts_with('{')) {
            words.extend(value(name).split_whitespace().map(str::to_string));
            continue;
        }
        let mut w = word.to_string();
        while let Some(at) = w.find("${") {
            let end = at + w[at..].find('}').expect("}");
            w = format!("{}{}{}", &w[..at], value(&w[at + 2..end]), &w[end + 1..]);
        }
        words.push(w);
    }
    words
}

/// The unit's command with `env`, its absolute paths moved under `root`, the configuration
/// it installs (configs/burnin.cfg.ini) in place of /etc/sqliosim/burnin.cfg.ini.
fn unit_args(root: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let words = unit_command(&unit_lines(), env);
    assert_eq!(words[..2], ["/usr/local/bin/sqliosim", "run"], "{words:?}");
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/burnin.cfg.ini");
    words[2..]
        .iter()
        .map(|w| match w.as_str() {
            "/etc/sqliosim/burnin.cfg.ini" => cfg.display().to_string(),
            w if w.starts_with('/') => root.join(&w[1..]).display().to_string(),
            w => w.to_string(),
        })
        .collect()
}

#[test]
fn the_burn_in_unit_stops_cleanly_logs_to_the_journal_and_its_command_parses() {
    let lines = unit_lines();
    let v = |k| unit_value(&lines, k);
    assert_eq!(v("Restart").as_deref(), Some("no"));
    assert_eq!(v("KillSignal").as_deref(), Some("SIGTERM"));
    assert_eq!(v("TimeoutStopSec").as_deref(), Some("15min"));
    assert_eq!(v("StandardOutput").as_deref(), Some("journal"));
    // The command with the unit's defaults, against the built binary: its options exist and
    // resolve (--dry-run stops before any file is touched); no metrics file by default, which
    // a host without node_exporter has no directory for.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let args = unit_args(tmp.path(), &[]);
    assert!(
        args.windows(2).any(|w| w == ["--status-interval", "60"]),
        "{args:?}"
    );
    assert!(!args.iter().any(|a| a.contains("metrics")), "{args:?}");
    // And with the metrics of the unit's comment, as an operator's burnin.env sets them.
    let metrics = [(
        "SQLIOSIM_OPTIONS",
        "--metrics-textfile /var/lib/prometheus/node-exporter/sqliosim.prom",
    )];
    let with_metrics = unit_args(tmp.path(), &metrics);
    assert!(
        with_metrics.iter().any(|a| a == "--metrics-textfile"),
        "{with_metrics:?}"
    );
    for args in [&args, &with_metrics] {
        let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
            .arg("run")
            .args(args)
            .arg("--dry-run")
            .output()
            .expect("sqliosim");
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    }
}

/// The unit's own command, as the unit starts it (defaults, no node_exporter on the host),
/// with the burn-in's configuration for 5 s instead of 48 h: it runs and ends CLEAN.
#[test]
fn the_burn_in_units_command_runs_the_burn_in_configuration_clean() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let args = unit_args(tmp.path(), &[("SQLIOSIM_DURATION", "5s")]);
    std::fs::create_dir_all(tmp.path().join("var/lib/sqliosim")).expect("StateDirectory");
    std::fs::create_dir_all(tmp.path().join("mnt/burnin/sqliosim")).expect("the disk");
    let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .arg("run")
        .args(&args)
        .current_dir(tmp.path().join("var/lib/sqliosim"))
        .output()
        .expect("sqliosim");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    assert!(text(&out).contains("Verdict: CLEAN"), "{}", text(&out));
}

#[test]
fn the_burn_in_configuration_resolves_without_a_warning() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/burnin.cfg.ini");
    let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .arg("run")
        .arg("--config")
        .arg(&cfg)
        .arg("--dir")
        .arg(tmp.path().join("data"))
        .args(["--duration", "48h", "--dry-run"])
        .output()
        .expect("sqliosim");
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.to_lowercase().contains("warning"), "{stderr}");
}

/// A copy of the unit whose binary and mount point are under `root`, for systemd-analyze.
fn unit_under(root: &Path, binary: &Path) -> PathBuf {
    let unit = std::fs::read_to_string(deploy().join("systemd/sqliosim-burnin.service"))
        .expect("unit")
        .replace("/usr/local/bin/sqliosim", &binary.display().to_string())
        .replace(
            "RequiresMountsFor=/mnt/burnin",
            &format!("RequiresMountsFor={}", root.display()),
        );
    let path = root.join("sqliosim-burnin.service");
    std::fs::write(&path, unit).expect("write");
    path
}

#[test]
fn the_burn_in_unit_passes_systemd_analyze_verify() {
    if !tool("systemd-analyze", "SQLIOSIM_REQUIRE_SYSTEMD") {
        return;
    }
    // The install step of the docs (`install -m 0755 target/release/sqliosim /usr/local/bin/`)
    // under a temporary root: verify checks that the binary is there and executable, and that
    // the mount exists.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let bin = dir.path().join("usr/local/bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let installed = bin.join("sqliosim");
    let verify = |binary: &Path| {
        Command::new("systemd-analyze")
            .arg("verify")
            .arg(unit_under(dir.path(), binary))
            .output()
            .expect("systemd-analyze")
    };
    // Before the install, as the unit met a host where nothing put sqliosim there.
    let missing = verify(&installed);
    assert!(!missing.status.success(), "{}", text(&missing));
    assert!(
        text(&missing).contains("is not executable"),
        "{}",
        text(&missing)
    );
    let status = Command::new("install")
        .args(["-m", "0755", env!("CARGO_BIN_EXE_sqliosim")])
        .arg(&bin)
        .status()
        .expect("install");
    assert!(status.success());
    let out = verify(&installed);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !text(&out).contains("sqliosim-burnin.service:"),
        "warnings: {}",
        text(&out)
    );
}
