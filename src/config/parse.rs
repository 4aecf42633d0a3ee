//! INI text → checked [`Config`]: every key read with its default, ranges and Min/Max pairs
//! checked, user counts resolved, unknown names reported with the closest known one. What
//! depends on the command line (file placement, Increment adjustment, page counts against file
//! sizes) is left to `settings`.

use super::error::{ConfigError, Warning};
use super::host::{Host, MAX_CPU_COUNT};
use super::ini::{self, Ini};
use super::keys::{self, closest};
use super::model::*;
use super::reader::View;
use std::path::PathBuf;

/// A `[FileN]` section's name and the line of its `FileName`.
pub type FileOrigin = (String, usize);

/// A parsed file: the configuration, the advice gathered, and where each `[FileN]` was.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The checked configuration; `files` hold `FileName` as written.
    pub config: Config,
    /// Warnings in file order.
    pub warnings: Vec<Warning>,
    /// For each entry of `config.files`: (section name, line of `FileName`).
    pub file_origins: Vec<FileOrigin>,
    /// The lines as read, for messages that need a key's line later.
    pub ini: Ini,
}

/// The error for a file in which no `[section]` could be read: never run it as if it were
/// empty, on settings the user never chose.
fn nothing_readable(text: &str, file: &str) -> ConfigError {
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with(';') && !l.starts_with('#'));
    let found = match first {
        None if lines == 0 => "the file is empty".to_string(),
        None => format!("it holds only comments ({lines} lines)"),
        Some(l) => {
            let shown: String = l.chars().take(40).collect();
            format!("{lines} lines, the first of them \"{shown}\"")
        }
    };
    ConfigError::Rule {
        file: file.to_string(),
        line: 0,
        message: format!(
            "no [section] or Key=Value could be read ({found}); a configuration needs at least \
             one section such as [CONFIG] or [File1] (UTF-8, or UTF-16 with a byte-order mark)"
        ),
    }
}

/// Parses and checks configuration `text`; `file` names it in messages.
pub fn parse(text: &str, file: &str, host: &Host) -> Result<Parsed, ConfigError> {
    let (ini, mut warnings) = ini::read(text, file);
    if ini.sections.is_empty() {
        return Err(nothing_readable(text, file));
    }
    warn_unknown(&ini, file, &mut warnings);
    let view = |name: &str| View::new(file, name, ini.section(name));
    let general = general(&view("CONFIG"), host, &mut warnings)?;
    let cpus = general.cpu_count;
    let random = random_user(&view("RandomUser"), cpus)?;
    let audit = audit_user(&view("AuditUser"), cpus)?;
    let read_ahead = read_ahead_user(&view("ReadAheadUser"), cpus)?;
    let bulk_update = bulk_update_user(&view("BulkUpdateUser"), cpus)?;
    let shrink = shrink_user(&view("ShrinkUser"))?;
    let (files, file_origins) = files(&ini, file, &mut warnings)?;
    let config = Config {
        general,
        random,
        audit,
        read_ahead,
        bulk_update,
        shrink,
        files,
    };
    check_total_users(&config, file)?;
    Ok(Parsed {
        config,
        warnings,
        file_origins,
        ini,
    })
}

/// Warns about sections and keys we do not know, naming the closest known one.
fn warn_unknown(ini: &Ini, file: &str, warnings: &mut Vec<Warning>) {
    for section in &ini.sections {
        let Some(known) = keys::keys_of(&section.name) else {
            let candidates: Vec<&str> = keys::SECTIONS.iter().copied().chain(["File1"]).collect();
            let hint = closest(&section.name, &candidates).unwrap_or("CONFIG");
            warnings.push(Warning::at(
                file,
                section.line,
                format!(
                    "unknown section [{}] is ignored; did you mean [{hint}]?",
                    section.name
                ),
            ));
            continue;
        };
        for entry in &section.entries {
            if known == keys::SHRINK_KEYS && entry.key.eq_ignore_ascii_case("UserCount") {
                warnings.push(Warning::at(
                    file,
                    entry.line,
                    "[ShrinkUser] has no UserCount and it is ignored: the ShrinkUser acts on every \
                     file with Shrinkable=TRUE",
                ));
            } else if !known.iter().any(|k| k.eq_ignore_ascii_case(&entry.key)) {
                let hint = closest(&entry.key, known).unwrap_or_default();
                warnings.push(Warning::at(
                    file,
                    entry.line,
                    format!(
                        "unknown key {} in [{}] is ignored; did you mean {hint}?",
                        entry.key, section.name
                    ),
                ));
            }
        }
    }
}

/// `[CONFIG]`.
fn general(v: &View, host: &Host, warnings: &mut Vec<Warning>) -> Result<General, ConfigError> {
    let cpu_count = v.u32("CPUCount", host.default_cpu_count(), 1, MAX_CPU_COUNT)?;
    let mask_cpus = host.cpus.max(cpu_count);
    let scatter_key = ["UseScatterGather", "ScatterGather"]
        .into_iter()
        .filter_map(|k| v.entry(k).map(|e| (e.line, k)))
        .max()
        .map_or("UseScatterGather", |(_, k)| k);
    let g = General {
        error_file: error_file(v)?,
        cpu_count,
        affinity: v.mask("Affinity", mask_cpus)?,
        io_affinity: v.mask("IOAffinity", mask_cpus)?,
        max_memory_mb: v.uint(
            "MaxMemoryMB",
            host.mem_available_mb.max(1),
            1,
            host.mem_total_mb.max(1),
        )?,
        stop_on_error: v.boolean("StopOnError", true)?,
        test_cycles: v.u32("TestCycles", 1, 0, u32::MAX)?,
        test_cycle_duration_s: v.uint("TestCycleDuration", 300, 1, MAX_DURATION_S)?,
        cache_hit_ratio: v.ratio("CacheHitRatio", 1000)?,
        no_buffering: v.boolean("NoBuffering", true)?,
        write_through: v.boolean("WriteThrough", true)?,
        max_outstanding_io: v.u32("MaxOutstandingIO", 0, 0, 140_000)?,
        target_io_duration_ms: v.u32("TargetIODuration", 100, 1, u32::MAX)?,
        allow_io_bursts: v.boolean("AllowIOBursts", true)?,
        use_scatter_gather: v.boolean(scatter_key, true)?,
        force_read_ahead: v.boolean("ForceReadAhead", true)?,
        delete_files_at_startup: v.boolean("DeleteFilesAtStartup", true)?,
        delete_files_at_shutdown: v.boolean("DeleteFilesAtShutdown", false)?,
        stamp_files: v.boolean("StampFiles", false)?,
    };
    Ok(scatter_gather_forces_no_buffering(v, g, warnings))
}

/// `ErrorFile`, default `sqliosim.log.xml`; an empty value is an error.
fn error_file(v: &View) -> Result<String, ConfigError> {
    match v.entry("ErrorFile") {
        None => Ok("sqliosim.log.xml".into()),
        Some(e) if e.value.is_empty() => {
            Err(v.bad(e, "expected a file name for the XML error log"))
        }
        Some(e) => Ok(e.value.clone()),
    }
}

/// The longest TestCycleDuration (and `-d`) accepted: a year, in seconds.
pub const MAX_DURATION_S: u64 = 365 * 24 * 3600;

/// SQLIOSim forces NoBuffering on when scatter/gather is on; we do the same and say so.
fn scatter_gather_forces_no_buffering(v: &View, mut g: General, w: &mut Vec<Warning>) -> General {
    if g.use_scatter_gather && !g.no_buffering {
        w.push(Warning::at(
            v.file,
            v.line_of("NoBuffering"),
            "NoBuffering=FALSE is overridden: UseScatterGather=TRUE forces NoBuffering=TRUE (as in SQLIOSim); \
             set UseScatterGather=FALSE to test buffered I/O",
        ));
        g.no_buffering = true;
    }
    g
}

/// `[RandomUser]`.
fn random_user(v: &View, cpus: u32) -> Result<RandomUser, ConfigError> {
    let r = RandomUser {
        user_count: v.user_count("UserCount", -1, cpus)?,
        jump_to_new_region: v.ratio("JumpToNewRegionPercentage", 500)?,
        min_io_chain_length: v.u32("MinIOChainLength", 1, 0, u32::MAX)?,
        max_io_chain_length: v.u32("MaxIOChainLength", 100, 1, u32::MAX)?,
        read_write_ratio: v.ratio("RandomUserReadWriteRatio", 9000)?,
        min_log_per_buffer: v.u32("MinLogPerBuffer", 64, 1, 64_000)?,
        max_log_per_buffer: v.u32("MaxLogPerBuffer", 8192, 1, 64_000)?,
        rollback_chance: v.ratio("RollbackChance", 100)?,
        sleep_after_ms: v.u32("SleepAfter", 5, 0, u32::MAX)?,
        yield_percentage: v.ratio("YieldPercentage", 0)?,
        cpu_simulation: v.boolean("CPUSimulation", false)?,
        cpu_cycles_min: v.u32("CPUCyclesMin", 0, 0, u32::MAX)?,
        cpu_cycles_max: v.u32("CPUCyclesMax", 0, 0, u32::MAX)?,
    };
    v.min_max(
        ("MinIOChainLength", r.min_io_chain_length.into()),
        ("MaxIOChainLength", r.max_io_chain_length.into()),
    )?;
    v.min_max(
        ("MinLogPerBuffer", r.min_log_per_buffer.into()),
        ("MaxLogPerBuffer", r.max_log_per_buffer.into()),
    )?;
    v.min_max(
        ("CPUCyclesMin", r.cpu_cycles_min.into()),
        ("CPUCyclesMax", r.cpu_cycles_max.into()),
    )?;
    Ok(r)
}

/// `[AuditUser]`.
fn audit_user(v: &View, cpus: u32) -> Result<AuditUser, ConfigError> {
    Ok(AuditUser {
        user_count: v.user_count("UserCount", 2, cpus)?,
        buffers_validated: v.u32("BuffersValidated", 64, 1, u32::MAX)?,
        delay_after_cycles: v.u32("DelayAfterCycles", 2, 0, u32::MAX)?,
        audit_delay_ms: v.u32("AuditDelay", 200, 0, u32::MAX)?,
    })
}

/// `[ReadAheadUser]`.
fn read_ahead_user(v: &View, cpus: u32) -> Result<ReadAheadUser, ConfigError> {
    let r = ReadAheadUser {
        user_count: v.user_count("UserCount", 2, cpus)?,
        buffers_min: v.u32("BuffersRAMin", 32, 0, u32::MAX)?,
        buffers_max: v.u32("BuffersRAMax", 64, 1, u32::MAX)?,
        delay_after_cycles: v.u32("DelayAfterCycles", 2, 0, u32::MAX)?,
        ra_delay_ms: v.u32("RADelay", 200, 0, u32::MAX)?,
    };
    v.min_max(
        ("BuffersRAMin", r.buffers_min.into()),
        ("BuffersRAMax", r.buffers_max.into()),
    )?;
    Ok(r)
}

/// `[BulkUpdateUser]`.
fn bulk_update_user(v: &View, cpus: u32) -> Result<BulkUpdateUser, ConfigError> {
    let b = BulkUpdateUser {
        user_count: v.user_count("UserCount", -1, cpus)?,
        buffers_min: v.u32("BuffersBUMin", 64, 0, u32::MAX)?,
        buffers_max: v.u32("BuffersBUMax", 128, 1, u32::MAX)?,
        delay_after_cycles: v.u32("DelayAfterCycles", 2, 0, u32::MAX)?,
        bu_delay_ms: v.u32("BUDelay", 10, 0, u32::MAX)?,
    };
    v.min_max(
        ("BuffersBUMin", b.buffers_min.into()),
        ("BuffersBUMax", b.buffers_max.into()),
    )?;
    Ok(b)
}

/// `[ShrinkUser]`.
fn shrink_user(v: &View) -> Result<ShrinkUser, ConfigError> {
    let s = ShrinkUser {
        min_shrink_interval_s: v.u32("MinShrinkInterval", 120, 0, u32::MAX)?,
        max_shrink_interval_s: v.u32("MaxShrinkInterval", 600, 1, u32::MAX)?,
        min_extends: v.u32("MinExtends", 1, 0, 1_000_000)?,
        max_extends: v.u32("MaxExtends", 20, 1, 1_000_000)?,
    };
    v.min_max(
        ("MinShrinkInterval", s.min_shrink_interval_s.into()),
        ("MaxShrinkInterval", s.max_shrink_interval_s.into()),
    )?;
    v.min_max(
        ("MinExtends", s.min_extends.into()),
        ("MaxExtends", s.max_extends.into()),
    )?;
    Ok(s)
}

/// Every `[FileN]` in order of N, with the line of its `FileName`.
fn files(
    ini: &Ini,
    file: &str,
    w: &mut Vec<Warning>,
) -> Result<(Vec<FileSpec>, Vec<FileOrigin>), ConfigError> {
    let mut numbered: Vec<_> = ini
        .sections
        .iter()
        .filter_map(|s| keys::file_number(&s.name).map(|n| (n, s)))
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    let mut specs = Vec::new();
    let mut origins = Vec::new();
    for (_, section) in numbered {
        let v = View::new(file, &section.name, Some(section));
        specs.push(file_spec(&v, w)?);
        origins.push((section.name.clone(), v.line_of("FileName")));
    }
    Ok((specs, origins))
}

/// One `[FileN]` section.
fn file_spec(v: &View, w: &mut Vec<Warning>) -> Result<FileSpec, ConfigError> {
    let missing = |key: &str, what: &str| ConfigError::Rule {
        file: v.file.to_string(),
        line: v.line_of(key),
        message: format!("[{}] has no {key}: {what}", v.name),
    };
    let name = v
        .entry("FileName")
        .ok_or_else(|| missing("FileName", "every [FileN] section needs FileName=PATH"))?;
    if name.value.is_empty() {
        return Err(v.bad(name, "expected a file path"));
    }
    if v.entry("InitialSize").is_none() {
        return Err(missing(
            "InitialSize",
            "every [FileN] section needs InitialSize=MB",
        ));
    }
    let initial = v.uint("InitialSize", 0, 1, MAX_FILE_MB)?;
    let spec = FileSpec {
        path: PathBuf::from(&name.value),
        initial_size_mb: initial,
        max_size_mb: v.uint("MaxSize", initial, 1, MAX_FILE_MB)?,
        increment_mb: v.uint("Increment", 0, 0, MAX_FILE_MB)?,
        shrinkable: v.boolean("Shrinkable", false)?,
        log_file: v.boolean("LogFile", false)?,
        sparse: v.boolean("Sparse", false)?,
    };
    v.min_max(
        ("InitialSize", spec.initial_size_mb),
        ("MaxSize", spec.max_size_mb),
    )?;
    advise_shrinkable(v, &spec, w);
    Ok(spec)
}

/// The largest InitialSize / MaxSize / Increment accepted, in MB (1 TB).
pub const MAX_FILE_MB: u64 = 1 << 20;

/// SQLIOSim's documentation ties Shrinkable to Increment; its own samples do not, so this is
/// advice only.
fn advise_shrinkable(v: &View, spec: &FileSpec, w: &mut Vec<Warning>) {
    if spec.shrinkable && spec.increment_mb == 0 {
        w.push(Warning::at(
            v.file,
            v.line_of("Shrinkable"),
            format!(
                "[{}] Shrinkable=TRUE with Increment=0: the file will neither grow nor shrink",
                v.name
            ),
        ));
    } else if !spec.shrinkable && spec.increment_mb > 0 && spec.max_size_mb > spec.initial_size_mb {
        w.push(Warning::at(
            v.file,
            v.line_of("Increment"),
            format!(
                "[{}] Increment={} with Shrinkable=FALSE: the file keeps its size; \
                 set Shrinkable=TRUE to let it grow towards MaxSize",
                v.name, spec.increment_mb
            ),
        ));
    }
}

/// The total of all user counts is limited like each one.
fn check_total_users(config: &Config, file: &str) -> Result<(), ConfigError> {
    let (total, limit) = (config.total_users(), user_limit(config.general.cpu_count));
    if total <= limit {
        return Ok(());
    }
    Err(ConfigError::Rule {
        file: file.to_string(),
        line: 0,
        message: format!(
            "the UserCount values add up to {total} users, more than CPUCount*1023-100 = {limit} \
             (CPUCount={}); lower some UserCount",
            config.general.cpu_count
        ),
    })
}
