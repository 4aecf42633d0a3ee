//! INI text → checked [`Config`]: the sections read in the registry's order (each by its own
//! file in `sections/`), unknown names reported with the closest known one, the total of the
//! user counts checked. What depends on the command line (file placement, Increment
//! adjustment, page counts against file sizes) is left to `settings`.

use super::error::{ConfigError, Warning};
use super::host::Host;
use super::ini::{self, Ini};
use super::keys::closest;
use super::model::user_limit;
use super::sections::{self, Config, FileOrigin, ParseContext};

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
    let mut cx = ParseContext {
        file,
        host,
        cpu_count: host.default_cpu_count(),
        io_generation: super::IoGeneration::default(),
        edition: super::Edition::default(),
        warnings: &mut warnings,
    };
    let (config, file_origins) = sections::read(&ini, &mut cx)?;
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
        let Some(spec) = sections::spec_of(&section.name) else {
            let candidates: Vec<&str> = sections::SECTIONS
                .iter()
                .chain([&sections::FILE_SECTION])
                .map(|s| s.name)
                .collect();
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
            if let Some(why) = (spec.ignored_key)(&entry.key) {
                warnings.push(Warning::at(file, entry.line, why));
            } else if !spec.keys.iter().any(|k| k.eq_ignore_ascii_case(&entry.key)) {
                let hint = closest(&entry.key, spec.keys).unwrap_or_default();
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
