//! `[ShrinkUser]`: grows and shrinks the shrinkable files. It has no `UserCount`: one
//! ShrinkUser acts on every file with `Shrinkable=TRUE`.

use super::{IniSection, ParseContext, SectionValue};
use crate::config::error::ConfigError;
use crate::config::reader::View;

/// `[ShrinkUser]`: grows and shrinks shrinkable files.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShrinkUser {
    /// `MinShrinkInterval`: shortest gap in seconds between operations, default 120; ≤ max.
    pub min_shrink_interval_s: u32,
    /// `MaxShrinkInterval`: longest gap in seconds, default 600.
    pub max_shrink_interval_s: u32,
    /// `MinExtends`: fewest `Increment` steps per operation, default 1; ≤ max.
    pub min_extends: u32,
    /// `MaxExtends`: most `Increment` steps per operation, default 20; range 1..=1000000.
    pub max_extends: u32,
}

impl IniSection for ShrinkUser {
    const NAME: &'static str = "ShrinkUser";
    const KEYS: &'static [&'static str] = &[
        "MinShrinkInterval",
        "MaxShrinkInterval",
        "MinExtends",
        "MaxExtends",
    ];

    fn parse(v: &View, _cx: &mut ParseContext) -> Result<Self, ConfigError> {
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

    fn ignored_key(key: &str) -> Option<&'static str> {
        key.eq_ignore_ascii_case("UserCount").then_some(
            "[ShrinkUser] has no UserCount and it is ignored: the ShrinkUser acts on every \
             file with Shrinkable=TRUE",
        )
    }
}

impl SectionValue for ShrinkUser {
    fn save(&self) -> Vec<(&'static str, String)> {
        vec![
            ("MinShrinkInterval", self.min_shrink_interval_s.to_string()),
            ("MaxShrinkInterval", self.max_shrink_interval_s.to_string()),
            ("MinExtends", self.min_extends.to_string()),
            ("MaxExtends", self.max_extends.to_string()),
        ]
    }
}
