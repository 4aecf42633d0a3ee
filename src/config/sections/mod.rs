//! One INI section, one file. Each fixed `[Section]` of a SQLIOSim configuration is a type in
//! a file of its own here, which owns the section's keys, how it is read (defaults, ranges,
//! Min/Max pairs), what `-save` writes of it, what the start-up echo shows of it, its
//! `UserCount` and the page counts the page rule checks ([`IniSection`], [`SectionValue`]).
//!
//! The `sections!` list at the end of this file is the registry: it names the fixed sections
//! in the order SQLIOSim writes them, and from it come the [`Config`] struct (one field per
//! section), the table of known names and keys ([`SECTIONS`]), and the order in which the
//! sections are read, saved, echoed and checked. A new section is a new file here and one line
//! in that list. `[File1]`..`[FileN]`, a numbered family rather than one section, live in
//! `file_n.rs` and always come after the fixed sections.
//!
//! What every section shares stays outside: the INI reader with line numbers (`ini`), typed
//! value reading with errors naming file, line, key and range (`reader`), the error types
//! (`error`), the `-save` and echo formats (`save`, `echo`) and the page rule (`pages`).

mod audit_user;
mod backup_user;
mod bulk_update_user;
mod check_db_user;
mod file_n;
mod general;
mod random_user;
mod read_ahead_user;
mod shrink_user;
mod sort_user;

pub use audit_user::AuditUser;
pub use backup_user::BackupUser;
pub use bulk_update_user::BulkUpdateUser;
pub use check_db_user::CheckDbUser;
pub use file_n::{
    echo_files, file_number, save_files, FileOrigin, FileSpec, FILE_KEYS, FILE_SECTION, MAX_FILE_MB,
};
pub use general::{General, MAX_DURATION_S};
pub use random_user::RandomUser;
pub use read_ahead_user::ReadAheadUser;
pub use shrink_user::ShrinkUser;
pub use sort_user::SortUser;

use super::error::{ConfigError, Warning};
use super::host::Host;
use super::ini::Ini;
use super::reader::View;

/// What a fixed section is: its name, its keys and how it is read.
pub trait IniSection: SectionValue + Sized {
    /// The name as SQLIOSim writes it (matched without regard to case).
    const NAME: &'static str;
    /// Every key the section knows.
    const KEYS: &'static [&'static str];

    /// Reads the section (`v` may be absent from the file: every key then has its default).
    fn parse(v: &View, cx: &mut ParseContext) -> Result<Self, ConfigError>;

    /// The warning for a key the section knows of but ignores, if `key` is one.
    fn ignored_key(_key: &str) -> Option<&'static str> {
        None
    }
}

/// What a read section gives the shared writers and checks (object-safe, so the registry can
/// hand out every section as a `&dyn SectionValue`).
pub trait SectionValue {
    /// Every key with its value as `-save` writes it, in the order written.
    fn save(&self) -> Vec<(&'static str, String)>;

    /// Lines of the start-up echo before the `Users:` line (most sections have none).
    fn echo(&self, _out: &mut String) {}

    /// The resolved `UserCount`, for sections that have one: it counts towards the total and
    /// is shown in the echo's `Users:` line.
    fn user_count(&self) -> Option<u32> {
        None
    }

    /// Counts of pages a user touches at once, by key: each must fit the smallest data file
    /// and the buffer pool.
    fn page_counts(&self) -> Vec<(&'static str, u32)> {
        Vec::new()
    }
}

/// What the sections read with besides their own lines.
pub struct ParseContext<'a> {
    /// The configuration's name, for messages.
    pub file: &'a str,
    /// The machine, for defaults that depend on it.
    pub host: &'a Host,
    /// `CPUCount`: the machine's until `[CONFIG]` (read first) sets it; the user counts of the
    /// later sections are resolved against it.
    pub cpu_count: u32,
    /// `IoGeneration`'s caps: the default's until `[CONFIG]` sets them; the read-ahead and
    /// bulk sections warn about requests beyond them.
    pub io_generation: crate::config::IoGeneration,
    /// `Edition`: Standard until `[CONFIG]` sets it (the read-ahead cap).
    pub edition: crate::config::Edition,
    /// Warnings, in file order.
    pub warnings: &'a mut Vec<Warning>,
}

/// A section's name, keys and ignored-key rule, for the unknown-name warnings.
pub struct SectionSpec {
    /// The name as SQLIOSim writes it.
    pub name: &'static str,
    /// Every key the section knows.
    pub keys: &'static [&'static str],
    /// The warning for a known but ignored key.
    pub ignored_key: fn(&str) -> Option<&'static str>,
}

impl SectionSpec {
    /// The spec of section type `S`.
    const fn of<S: IniSection>() -> SectionSpec {
        SectionSpec {
            name: S::NAME,
            keys: S::KEYS,
            ignored_key: S::ignored_key,
        }
    }
}

/// The spec of section `name` (any case): a fixed section or a `[FileN]`; `None` if unknown.
pub fn spec_of(name: &str) -> Option<&'static SectionSpec> {
    if file_number(name).is_some() {
        return Some(&FILE_SECTION);
    }
    SECTIONS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Section `S` as an INI file without it reads it: every key at its default. Reading no
/// line cannot fail, so a failure is a bug in the section's defaults.
fn default_of<S: IniSection>(ini: &Ini, cx: &mut ParseContext) -> S {
    match S::parse(&view_of::<S>(ini, cx.file), cx) {
        Ok(section) => section,
        Err(e) => panic!("[{}]'s defaults do not read: {e}", S::NAME),
    }
}

/// A view of the fixed section `S` in `ini`.
fn view_of<'a, S: IniSection>(ini: &'a Ini, file: &'a str) -> View<'a> {
    View::new(file, S::NAME, ini.section(S::NAME))
}

/// The registry: makes [`Config`], [`SECTIONS`], [`Config::sections`] and `read` from the
/// list of fixed sections.
macro_rules! sections {
    ($( $(#[$doc:meta])* $field:ident: $ty:ty, )*) => {
        /// The whole configuration file: one field per fixed section, in the order SQLIOSim
        /// writes them, then the files.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
        pub struct Config {
            $( $(#[$doc])* pub $field: $ty, )*
            /// `[File1]`..`[FileN]` in order of N. After `RunSettings::resolve` the paths are
            /// absolute and there is at least one data file and one log file.
            pub files: Vec<FileSpec>,
        }

        /// The fixed sections' names, keys and rules, in the order SQLIOSim writes them.
        pub static SECTIONS: &[SectionSpec] = &[ $( SectionSpec::of::<$ty>(), )* ];

        impl Config {
            /// Every fixed section with its name, in order.
            pub fn sections(&self) -> Vec<(&'static str, &dyn SectionValue)> {
                vec![ $( (<$ty as IniSection>::NAME, &self.$field as &dyn SectionValue), )* ]
            }

            /// Every fixed section as read, without the files: what the run plan carries.
            pub fn fixed_sections(&self) -> Sections {
                Sections { $( $field: self.$field.clone(), )* }
            }
        }

        /// Every fixed section as read (defaults resolved, ranges checked), without the
        /// files. The run plan carries it (`SimPlan::sections`), so an actor whose section is
        /// new reads its settings there: adding one touches no plan type, no `plan_from` and
        /// no builder (ARCHITECTURE.md, "Adding things").
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Sections {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl Sections {
            /// Every section at its default, as a configuration that names none of them gives
            /// on `host`.
            pub fn defaults(host: &Host) -> Sections {
                const FILE: &str = "<defaults>";
                let (ini, _) = super::ini::read("", FILE);
                let mut warnings = Vec::new();
                let mut cx = ParseContext {
                    file: FILE,
                    host,
                    cpu_count: host.default_cpu_count(),
                    io_generation: crate::config::IoGeneration::default(),
                    edition: crate::config::Edition::default(),
                    warnings: &mut warnings,
                };
                Sections { $( $field: default_of::<$ty>(&ini, &mut cx), )* }
            }
        }

        /// Reads every fixed section in order, then the `[FileN]` sections: the first error
        /// stops. Returns the configuration and where each file was.
        pub(in crate::config) fn read(
            ini: &Ini,
            cx: &mut ParseContext,
        ) -> Result<(Config, Vec<FileOrigin>), ConfigError> {
            $( let $field = <$ty as IniSection>::parse(&view_of::<$ty>(ini, cx.file), cx)?; )*
            let (files, origins) = file_n::read_all(ini, cx)?;
            Ok((Config { $( $field, )* files }, origins))
        }
    };
}

sections! {
    /// `[CONFIG]`.
    general: General,
    /// `[RandomUser]`.
    random: RandomUser,
    /// `[AuditUser]`.
    audit: AuditUser,
    /// `[ReadAheadUser]`.
    read_ahead: ReadAheadUser,
    /// `[BulkUpdateUser]`.
    bulk_update: BulkUpdateUser,
    /// `[ShrinkUser]`.
    shrink: ShrinkUser,
    /// `[BackupUser]` (ours, not SQLIOSim's).
    backup: BackupUser,
    /// `[SortUser]` (ours: tempdb spills).
    sort: SortUser,
    /// `[CheckDbUser]` (ours: DBCC CHECKDB's sparse snapshot).
    check_db: CheckDbUser,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sections_by_name_in_any_case() {
        let keys = |name: &str| spec_of(name).map(|s| s.keys);
        assert_eq!(keys("shrinkuser"), Some(ShrinkUser::KEYS));
        assert_eq!(keys("FILE7"), Some(FILE_KEYS));
        assert_eq!(keys("Users"), None);
        let names: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
        let sqliosim_order = [
            "CONFIG",
            "RandomUser",
            "AuditUser",
            "ReadAheadUser",
            "BulkUpdateUser",
            "ShrinkUser",
            "BackupUser",
            "SortUser",
            "CheckDbUser",
        ];
        assert_eq!(names, sqliosim_order);
    }

    #[test]
    fn defaults_are_what_a_configuration_naming_no_section_reads() {
        let host = Host {
            cpus: 3,
            mem_available_mb: 64,
            mem_total_mb: 64,
        };
        let parsed =
            crate::config::parse("[File1]\nFileName=d.mdx\nInitialSize=1\n", "t.ini", &host)
                .expect("valid");
        let defaults = Sections::defaults(&host);
        assert_eq!(parsed.config.fixed_sections(), defaults);
        assert_eq!(defaults.backup.user_count, 0);
        assert!(defaults.random.user_count > 0, "{:?}", defaults.random);
    }
}
