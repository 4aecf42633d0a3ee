//! Configuration: SQLIOSim-compatible INI text and command-line values → checked, typed
//! [`RunSettings`] the simulation runs from.
//!
//! The stages are kept apart so each can be tested alone: `ini` reads lines (keeping line
//! numbers), `parse` checks every key into a [`Config`], `settings` applies the command line
//! and places the files, `save` writes a configuration back as INI, `echo` renders the start-up
//! block. Nothing here prints: warnings are returned as data.
//!
//! Each INI section is one file in [`sections`]: its struct, keys, parsing, `-save` keys,
//! echo lines and page counts. The stages above only walk the registry there.
//!
//! One cycle of files stays, on purpose: `sections` is the registry every stage walks (`parse`,
//! `files`, `pages`, `settings`, `save`, `echo`, `model`), and each section's file uses the stages'
//! helpers (`reader`, `model`, `save`, `echo`, `generation`) to read, save and echo its own keys,
//! so that a section stays one file; `settings` and `run_args` build each other's inputs. Breaking
//! it would scatter every section over the stages.

pub mod cgroup;
mod durability;
mod echo;
pub mod encoding;
mod engine;
mod error;
mod files;
mod generation;
mod host;
mod ini;
mod keys;
mod model;
pub mod offer;
mod pages;
mod parse;
mod reader;
mod run_args;
mod save;
pub mod sections;
mod settings;
pub mod units;
mod unsupported;

pub use durability::DurabilityMode;
pub use error::{BadValue, ConfigError, Warning};
pub use files::{dir_pair, is_windows_path, log_size, stream_to_sibling, DEFAULT_DIR_SIZE_MB};
pub use generation::{Edition, IoCaps, IoGeneration};
pub use host::{meminfo_mb, Host, MAX_CPU_COUNT};
pub use ini::{Entry, Ini, Section};
pub use keys::{closest, edit_distance};
pub use model::{auto_user_count, user_limit, Ratio, PAGES_PER_MB};
pub use parse::{parse, Parsed};
pub use run_args::{parse_duration, RunArgs};
pub use save::to_ini;
pub use sections::{
    AuditUser, BackupUser, BulkUpdateUser, Config, FileSpec, General, RandomUser, ReadAheadUser,
    Sections, ShrinkUser, MAX_DURATION_S, MAX_FILE_MB,
};
pub use settings::beside_log;
pub use settings::{
    ConfigSource, Env, IoServiceKind, RunSettings, WitnessTarget, DEFAULT_CONFIG,
    DEFAULT_CONFIG_NAME, DEFAULT_DATA_DIR, WORKING_DIR_CONFIG,
};
pub use unsupported::unsupported_cpu_keys;
