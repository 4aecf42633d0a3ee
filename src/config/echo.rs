//! The start-up echo: the resolved configuration in one readable block, its first line in
//! SQLIOSim's own format (`CPUCount = 2, Affinity = 0, … CacheHitRatio = 10.00%`). Each
//! section writes its own lines (`sections/`); the `Users:` line gathers every section's
//! `UserCount`.

use super::sections::{self, Config};
use super::settings::{ConfigSource, RunSettings};
use std::fmt::Write;

/// "Yes"/"No", as SQLIOSim prints booleans.
pub(super) fn yes(v: bool) -> &'static str {
    if v {
        "Yes"
    } else {
        "No"
    }
}

impl RunSettings {
    /// The start-up block: SQLIOSim's configuration line, I/O options, users, one line per
    /// file, the configuration source, the error log and the seed. Ends with a newline.
    pub fn echo(&self) -> String {
        let mut out = section_lines(&self.config);
        sections::echo_files(&mut out, &self.config.files);
        let source = match &self.source {
            ConfigSource::File(p) | ConfigSource::WorkingDir(p) => p.display().to_string(),
            ConfigSource::Embedded => "built-in default (sqliosim run with no -cfg)".to_string(),
            ConfigSource::Inline => self.source_name.clone(),
        };
        let _ = writeln!(out, "Configuration = {source}");
        let _ = writeln!(out, "Error log = {}", self.error_log.display());
        let _ = writeln!(out, "Seed = {}", self.seed);
        out
    }
}

/// Each section's own lines, then the user counts.
fn section_lines(c: &Config) -> String {
    let mut out = String::new();
    for (_, s) in c.sections() {
        s.echo(&mut out);
    }
    let users: Vec<String> = c
        .sections()
        .iter()
        .filter_map(|(name, s)| s.user_count().map(|n| format!("{name} = {n}")))
        .collect();
    let _ = writeln!(out, "Users: {}", users.join(", "));
    out
}
