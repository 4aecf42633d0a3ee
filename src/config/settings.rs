//! Configuration + command line ([`RunArgs`]) → [`RunSettings`]: which file is read (`-cfg`,
//! else `sqliosim.cfg.ini` in the working directory, else the built-in default), command-line
//! values applied over it (the command line wins), files placed with absolute paths, and the
//! checks that need the final file list.

use super::encoding;
use super::error::{ConfigError, Warning};
use super::files;
use super::host::Host;
use super::pages;
use super::parse;
use super::reader::View;
use super::run_args::RunArgs;
use super::sections::{Config, MAX_DURATION_S, MAX_FILE_MB};
use crate::io::safefile::{Kind, Use};
use std::path::{Path, PathBuf};

pub use super::engine::IoServiceKind;

/// The built-in configuration used when no file is given: a 60 s run, a 200 MB data file
/// growing to 400 MB, a 50 MB log file, in `./sqliosim-data/`.
pub const DEFAULT_CONFIG: &str = include_str!("../../configs/default-run.cfg.ini");

/// The name the built-in configuration goes by in messages.
pub const DEFAULT_CONFIG_NAME: &str = "<built-in default-run.cfg.ini>";

/// The folder (under the working directory) the built-in configuration puts its files in.
pub const DEFAULT_DATA_DIR: &str = "sqliosim-data";

/// The file SQLIOSim reads from the working directory when no `-cfg` is given.
pub const WORKING_DIR_CONFIG: &str = "sqliosim.cfg.ini";

/// Where the configuration came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum ConfigSource {
    /// `-cfg FILE` (absolute path).
    File(PathBuf),
    /// `sqliosim.cfg.ini` found in the working directory (absolute path).
    WorkingDir(PathBuf),
    /// The built-in default.
    Embedded,
    /// Text handed to [`RunSettings::from_ini`].
    Inline,
}

/// The process environment the resolution depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// Working directory (absolute); relative command-line paths are taken from here.
    pub cwd: PathBuf,
    /// The machine.
    pub host: Host,
}

impl Env {
    /// The real environment of this process.
    pub fn detect() -> Result<Env, ConfigError> {
        let cwd = std::env::current_dir().map_err(|e| ConfigError::Rule {
            file: "environment".into(),
            line: 0,
            message: format!("cannot determine the working directory: {e}"),
        })?;
        Ok(Env {
            cwd,
            host: Host::detect(),
        })
    }
}

/// Everything a run needs, resolved: the simulation codes against this.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunSettings {
    /// The resolved configuration: overrides applied, `files` absolute, Increments adjusted,
    /// `general.error_file` equal to `error_log`.
    pub config: Config,
    /// Where the configuration came from.
    pub source: ConfigSource,
    /// The configuration's name as shown in messages.
    pub source_name: String,
    /// Folder of the test files: the first `-dir`, else the folder relative names resolve to.
    pub data_dir: PathBuf,
    /// XML error log (absolute).
    pub error_log: PathBuf,
    /// JSON summary (absolute): `--json`, else beside the error log
    /// ([`beside_log`]); none
    /// with `--no-json`.
    pub json: Option<PathBuf>,
    /// The seed every random choice derives from (given or drawn).
    pub seed: u64,
    /// Whether the seed came from the command line.
    pub seed_given: bool,
    /// Where to write the resolved configuration (absolute), when asked for.
    pub save: Option<PathBuf>,
    /// Overwrite files sqliosim did not create.
    pub force: bool,
    /// Continue from existing files.
    pub resume: bool,
    /// Start afresh even when the previous run of the file set did not end cleanly.
    pub discard_previous_run: bool,
    /// Directory of the durability journal (absolute), when not beside the first data file.
    pub journal_dir: Option<PathBuf>,
    /// `--witness`: where the journal's batches also go.
    pub witness: Option<WitnessTarget>,
    /// Evidence bundle path (absolute), when asked for.
    pub bundle: Option<PathBuf>,
    /// Benchmark specification, when asked for.
    pub bench: Option<String>,
    /// Fault specification (tests only).
    pub fault_injection: Option<String>,
    /// How the disk I/O is carried (`--engine`, default uring).
    pub io_service: IoServiceKind,
    /// `--engine` was given: the engine is kept whatever the engine probe measures.
    pub io_service_named: bool,
    /// Resolve, echo and save only.
    pub dry_run: bool,
    /// `--host-label`: the host's inventory name, carried into the JSON summary and XML log.
    pub host_label: Option<String>,
    /// `--json -`: the final JSON summary goes to stdout, and the console to stderr.
    pub json_stdout: bool,
    /// Seconds between status lines when stdout is not a terminal (`--status-interval`).
    pub status_interval: Option<u64>,
    /// The Prometheus textfile rewritten while the run goes on (absolute), when asked for.
    pub metrics_textfile: Option<PathBuf>,
}

impl RunSettings {
    /// Resolves the configuration and command line; returns the settings and the warnings.
    pub fn resolve(o: &RunArgs, env: &Env) -> Result<(RunSettings, Vec<Warning>), ConfigError> {
        let loaded = load(o, env)?;
        resolve_loaded(loaded, o, env)
    }

    /// Settings from INI `text` held in memory, relative file names placed in `dir`, with a
    /// fixed seed: for tests of the layers that consume `RunSettings`.
    pub fn from_ini(
        text: &str,
        dir: &Path,
        host: Host,
        seed: u64,
    ) -> Result<(RunSettings, Vec<Warning>), ConfigError> {
        let loaded = ConfigText {
            source: ConfigSource::Inline,
            name: "<inline configuration>".into(),
            text: text.into(),
            base: dir.to_path_buf(),
        };
        let o = RunArgs {
            seed: Some(seed),
            ..RunArgs::default()
        };
        resolve_loaded(
            loaded,
            &o,
            &Env {
                cwd: dir.to_path_buf(),
                host,
            },
        )
    }
}

/// A configuration text and where it came from.
struct ConfigText {
    source: ConfigSource,
    name: String,
    text: String,
    /// The folder relative names resolve against when no `-dir` is given.
    base: PathBuf,
}

/// The configuration part of the resolution: parse, override, place and check the files.
fn resolve_config(
    l: &ConfigText,
    o: &RunArgs,
    env: &Env,
    w: &mut Vec<Warning>,
) -> Result<(Config, PathBuf, PathBuf), ConfigError> {
    let mut parsed = parse::parse(&l.text, &l.name, &env.host)?;
    w.append(&mut parsed.warnings);
    apply_general_overrides(&mut parsed.config, o)?;
    let dirs: Vec<PathBuf> = o.dir.iter().map(|d| env.cwd.join(d)).collect();
    let mut placed = files::place(
        &parsed.config,
        &parsed.file_origins,
        &dirs,
        &l.base,
        &l.name,
        w,
    )?;
    if let Some(size) = o.size {
        files::apply_size(&mut placed, size);
    }
    files::check_file_set(&placed, &l.name)?;
    let shrink = &parsed.config.shrink;
    files::adjust_increments(
        &mut placed,
        parsed.config.general.max_memory_mb,
        shrink.max_extends,
        w,
    );
    pages::check_page_counts(&parsed, &placed, &l.name)?;
    let data_dir = dirs.first().cloned().unwrap_or_else(|| l.base.clone());
    let error_log = error_log(o, env, &parsed, &data_dir, &l.name)?;
    let backup_file = files::place_backup_file(&parsed, !dirs.is_empty(), &l.name)?;
    let mut config = parsed.config;
    config.backup.backup_file = backup_file;
    config.files = placed.into_iter().map(|(s, _)| s).collect();
    config.general.error_file = error_log.to_string_lossy().into_owned();
    Ok((config, data_dir, error_log))
}

/// Resolves a loaded configuration with the command line into settings and warnings.
fn resolve_loaded(
    l: ConfigText,
    o: &RunArgs,
    env: &Env,
) -> Result<(RunSettings, Vec<Warning>), ConfigError> {
    let mut w = Vec::new();
    let (config, data_dir, error_log) = resolve_config(&l, o, env, &mut w)?;
    let abs = |p: &Option<PathBuf>| p.as_ref().map(|p| env.cwd.join(p));
    let json_stdout = o.json.as_deref() == Some(Path::new("-"));
    let json = match (&o.json, o.no_json) {
        (_, true) => None,
        (Some(_), false) if json_stdout => None,
        (Some(_), false) => abs(&o.json),
        (None, false) => Some(beside_log(&error_log)),
    };
    let settings = RunSettings {
        config,
        source: l.source,
        source_name: l.name,
        data_dir,
        error_log,
        json,
        seed: o.seed.unwrap_or_else(rand::random),
        seed_given: o.seed.is_some(),
        save: abs(&o.save),
        force: o.force,
        resume: o.resume,
        discard_previous_run: o.discard_previous_run,
        journal_dir: abs(&o.journal_dir),
        witness: o.witness.clone().map(|addr| WitnessTarget {
            addr,
            token_file: abs(&o.witness_token_file),
            wait: std::time::Duration::from_secs(o.witness_wait),
        }),
        bundle: abs(&o.bundle),
        bench: o.bench.clone(),
        fault_injection: o.fault_injection.clone(),
        io_service: o.engine.unwrap_or_default(),
        io_service_named: o.engine.is_some(),
        dry_run: o.dry_run,
        host_label: o.host_label.clone(),
        json_stdout,
        status_interval: o.status_interval,
        metrics_textfile: abs(&o.metrics_textfile),
    };
    Ok((settings, w))
}

/// Picks and reads the configuration: `-cfg`, else `sqliosim.cfg.ini` in the working
/// directory, else the built-in default.
fn load(o: &RunArgs, env: &Env) -> Result<ConfigText, ConfigError> {
    let read = |path: &Path| {
        // A FIFO or device is refused, not waited on.
        let bytes =
            crate::io::safefile::read_bounded(path, Use::Input, Kind::Config).map_err(|e| {
                ConfigError::Read {
                    path: path.to_path_buf(),
                    message: match e {
                        crate::io::safefile::SafeFileError::Refused { problem, .. } => {
                            format!("{problem}; a configuration must be a regular file")
                        }
                        crate::io::safefile::SafeFileError::Os { source, .. } => source.to_string(),
                        crate::io::safefile::SafeFileError::TooBig(t) => t.why(),
                    },
                }
            })?;
        encoding::decode(&bytes).map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    };
    if let Some(given) = &o.config {
        let path = env.cwd.join(given);
        let base = path
            .parent()
            .map_or_else(|| env.cwd.clone(), Path::to_path_buf);
        let text = read(&path)?;
        return Ok(ConfigText {
            source: ConfigSource::File(path),
            name: given.display().to_string(),
            text,
            base,
        });
    }
    let local = env.cwd.join(WORKING_DIR_CONFIG);
    // Any entry under the name is the configuration meant: one that is no regular file (a
    // FIFO, a directory, a dangling symlink) is refused by `read`, never passed over for the
    // built-in run.
    if local.symlink_metadata().is_ok() {
        let text = read(&local)?;
        let name = WORKING_DIR_CONFIG.into();
        return Ok(ConfigText {
            source: ConfigSource::WorkingDir(local),
            name,
            text,
            base: env.cwd.clone(),
        });
    }
    Ok(ConfigText {
        source: ConfigSource::Embedded,
        name: DEFAULT_CONFIG_NAME.into(),
        text: DEFAULT_CONFIG.into(),
        base: env.cwd.join(DEFAULT_DATA_DIR),
    })
}

/// `-d`, `--cycles` and the range checks of `-size`.
fn apply_general_overrides(config: &mut Config, o: &RunArgs) -> Result<(), ConfigError> {
    let bad = |option: &str, value: u64, allowed: String| ConfigError::BadOption {
        option: option.into(),
        value: value.to_string(),
        allowed,
    };
    if let Some(d) = o.duration {
        if !(1..=MAX_DURATION_S).contains(&d) {
            return Err(bad(
                "-d/--duration",
                d,
                format!("expected 1 to {MAX_DURATION_S} seconds"),
            ));
        }
        config.general.test_cycle_duration_s = d;
    }
    if let Some(size) = o.size {
        if !(1..=MAX_FILE_MB / 2).contains(&size) {
            return Err(bad(
                "-size/--size",
                size,
                format!("expected 1 to {} MB", MAX_FILE_MB / 2),
            ));
        }
    }
    if let Some(cycles) = o.cycles {
        config.general.test_cycles = cycles;
    }
    if let Some(stop) = o.stop_on_error_override() {
        config.general.stop_on_error = stop;
    }
    if let Some(mode) = o.durability {
        config.general.durability_mode = mode;
    }
    if o.forced_flush_per_write {
        config.general.forced_flush_per_write = true;
    }
    Ok(())
}

/// `-log`, else `ErrorFile` placed like a `FileName` (in the first `-dir`, else beside the
/// configuration).
fn error_log(
    o: &RunArgs,
    env: &Env,
    p: &parse::Parsed,
    data_dir: &Path,
    name: &str,
) -> Result<PathBuf, ConfigError> {
    if let Some(log) = &o.log {
        return Ok(env.cwd.join(log));
    }
    let written = &p.config.general.error_file;
    if o.dir.is_empty() && files::is_windows_path(written) {
        let line = View::new(name, "CONFIG", p.ini.section("CONFIG")).line_of("ErrorFile");
        return Err(ConfigError::Rule {
            file: name.into(),
            line,
            message: format!(
                "[CONFIG] ErrorFile={written} is a Windows path; pass -log FILE, or -dir DIR to put {} in DIR",
                files::name_part(written)
            ),
        });
    }
    let leaf = if o.dir.is_empty() {
        written.as_str()
    } else {
        files::name_part(written)
    };
    Ok(data_dir.join(leaf))
}

/// Where a run's JSON summary goes by default: beside its XML log, the log's name with a
/// trailing ".xml" replaced by ".json" (`sqliosim.log.xml` → `sqliosim.log.json`), or ".json"
/// appended when it has no ".xml" suffix.
pub fn beside_log(log: &Path) -> PathBuf {
    let name = log.file_name().map_or_else(
        || "sqliosim.log".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let stem = name.strip_suffix(".xml").unwrap_or(&name);
    log.with_file_name(format!("{stem}.json"))
}

/// `run --witness`: the off-host witness every journal batch also goes to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WitnessTarget {
    /// `HOST:PORT` of `sqliosim witness`.
    pub addr: String,
    /// Its shared token's file (absolute).
    pub token_file: Option<PathBuf>,
    /// How long the end of the run waits for its acknowledgements.
    pub wait: std::time::Duration,
}
