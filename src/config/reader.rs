//! Typed reading of one INI section: numbers, ratios, booleans, masks and user counts, each with
//! its default when the key is absent and an error naming file, line, key, value and range when
//! the value is unusable. SQLIOSim turns bad numbers into 0 and ignores bad booleans; we stop.

use super::error::{BadValue, ConfigError};
use super::ini::{Entry, Section};
use super::model::{auto_user_count, user_limit, Ratio};

/// One section of one file, ready to be read key by key.
pub struct View<'a> {
    /// File name for messages.
    pub file: &'a str,
    /// Section name for messages (as written, or the canonical name when absent).
    pub name: String,
    /// The section, when the file has it.
    pub section: Option<&'a Section>,
}

impl<'a> View<'a> {
    /// A view of `canonical` (any case) in `ini`.
    pub fn new(file: &'a str, canonical: &str, section: Option<&'a Section>) -> Self {
        let name = section.map_or_else(|| canonical.to_string(), |s| s.name.clone());
        View {
            file,
            name,
            section,
        }
    }

    /// The entry for `key`, if given.
    pub fn entry(&self, key: &str) -> Option<&'a Entry> {
        self.section.and_then(|s| s.get(key))
    }

    /// The line of `key`, else of the section header, else 0.
    pub fn line_of(&self, key: &str) -> usize {
        self.entry(key)
            .map(|e| e.line)
            .or(self.section.map(|s| s.line))
            .unwrap_or(0)
    }

    /// A `BadValue` error for `entry`.
    pub fn bad(&self, entry: &Entry, allowed: impl Into<String>) -> ConfigError {
        ConfigError::BadValue(Box::new(BadValue {
            file: self.file.to_string(),
            line: entry.line,
            section: self.name.clone(),
            key: entry.key.clone(),
            value: entry.value.clone(),
            allowed: allowed.into(),
        }))
    }

    /// A whole number in `min..=max`, `default` when absent.
    pub fn uint(&self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        let Some(e) = self.entry(key) else {
            return Ok(default);
        };
        match e.value.parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(self.bad(e, format!("expected a whole number from {min} to {max}"))),
        }
    }

    /// Like [`View::uint`] for values that fit `u32`.
    pub fn u32(&self, key: &str, default: u32, min: u32, max: u32) -> Result<u32, ConfigError> {
        let v = self.uint(key, default.into(), min.into(), max.into())?;
        Ok(u32::try_from(v).unwrap_or(max))
    }

    /// A ratio written as percent × 100 (0..=10000).
    pub fn ratio(&self, key: &str, default: u16) -> Result<Ratio, ConfigError> {
        let fallback = Ratio::clamped(default);
        let Some(e) = self.entry(key) else {
            return Ok(fallback);
        };
        let parsed = e.value.parse::<u16>().ok().and_then(Ratio::new);
        parsed.ok_or_else(|| {
            self.bad(
                e,
                "expected a whole number from 0 to 10000 (percent × 100: 1000 = 10 %)",
            )
        })
    }

    /// `true` / `false` in any letter case.
    pub fn boolean(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        let Some(e) = self.entry(key) else {
            return Ok(default);
        };
        if e.value.eq_ignore_ascii_case("true") {
            Ok(true)
        } else if e.value.eq_ignore_ascii_case("false") {
            Ok(false)
        } else {
            Err(self.bad(e, "expected TRUE or FALSE (any letter case)"))
        }
    }

    /// A CPU mask (decimal or 0x hex) naming only CPUs below `cpus`; 0 = all CPUs.
    pub fn mask(&self, key: &str, cpus: u32) -> Result<u64, ConfigError> {
        let Some(e) = self.entry(key) else {
            return Ok(0);
        };
        let v = &e.value;
        let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse::<u64>().ok(),
        };
        let allowed_bits = if cpus >= 64 {
            u64::MAX
        } else {
            (1u64 << cpus) - 1
        };
        match parsed {
            Some(m) if m & !allowed_bits == 0 => Ok(m),
            _ => Err(self.bad(
                e,
                format!(
                    "expected a CPU mask (decimal or 0x hex) naming only CPUs 0..={}; 0 means all CPUs",
                    cpus.saturating_sub(1)
                ),
            )),
        }
    }

    /// A `UserCount`: -1 = min(cpus*2, 8), 0 = none, else at most cpus*1023-100.
    pub fn user_count(&self, key: &str, default: i64, cpus: u32) -> Result<u32, ConfigError> {
        let (auto, limit) = (auto_user_count(cpus), user_limit(cpus));
        let resolve = |n: i64| match n {
            -1 => Some(auto),
            n if n >= 0 && n.unsigned_abs() <= limit => u32::try_from(n).ok(),
            _ => None,
        };
        let Some(e) = self.entry(key) else {
            return Ok(resolve(default).unwrap_or(auto));
        };
        e.value
            .parse::<i64>()
            .ok()
            .and_then(resolve)
            .ok_or_else(|| {
                self.bad(
                    e,
                    format!(
                        "expected -1 (automatic: min(CPUCount*2, 8) = {auto}), 0 (none) \
                     or a count up to CPUCount*1023-100 = {limit}"
                    ),
                )
            })
    }

    /// Checks `min <= max` for a Min/Max pair already read.
    pub fn min_max(
        &self,
        (min_key, min): (&'static str, u64),
        (max_key, max): (&'static str, u64),
    ) -> Result<(), ConfigError> {
        if min <= max {
            return Ok(());
        }
        Err(ConfigError::MinAboveMax {
            file: self.file.to_string(),
            line: self.line_of(min_key).max(self.line_of(max_key)),
            section: self.name.clone(),
            min_key,
            min,
            max_key,
            max,
        })
    }
}
