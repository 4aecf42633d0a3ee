//! The run's manifest (issue #35): every file a run of the plan may create, write, rename or
//! read back beside its set, in one typed list built from the plan, with what each is (its
//! role), whether the device owes it after a cut (durable), whether it is evidence to keep
//! across reruns, and the rule it must pass before the run opens it. Setup checks every name
//! by its rule before the run starts, the previous-run guard keeps what is evidence, and the
//! planted-name check refuses what is replaced by a rename: each reads this list. The set's
//! files and the journal are here ([`Manifest::of_set`]); an actor that owns a file adds its
//! entry in its own row of the actor table (`ActorSpec::owns`, `sim::actors::table::manifest`)
//! and nowhere else.
//!
//! The paths are the plan's: under the run's directories (or `--journal-dir`); the
//! configuration layer confines the names a config may give.

use std::path::PathBuf;

use crate::page::FileRole;
use crate::sim::plan::SimPlan;

/// Where the journal of a plan's file set is: `--journal-dir`, else beside the first data
/// file.
pub fn journal_path(plan: &SimPlan) -> Option<PathBuf> {
    let first = plan.data_files().first().map(|&i| &plan.files[i])?;
    let dir = match &plan.journal_dir {
        Some(d) => d.clone(),
        None => first.path.parent()?.to_path_buf(),
    };
    Some(dir.join(super::journal::JOURNAL_NAME))
}

/// What a file of the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A data or log file of the set.
    Set(FileRole),
    /// The durability journal, and its compaction's temporary.
    Journal,
    /// A finished backup stream (`.bak`) or log backup stream (`.trn`).
    Stream {
        /// A log backup's.
        log: bool,
    },
    /// The name a backup in progress is written under (`.partial`).
    Partial {
        /// A log backup's.
        log: bool,
    },
    /// A restore's copy of a data file (`NAME.restored`).
    Copy,
    /// A file outside the set that no cut owes: a Sort User's tempdb, a DBCC snapshot.
    Scratch,
}

/// When a file is evidence a rerun keeps (moved aside under the run id, never deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Never: it is the set itself, carried on or replaced by the rules of the set.
    Never,
    /// Whenever the previous run did not end clean.
    Always,
    /// Only when the previous run found errors (a cut leaves nothing owed in it).
    WhenErrors,
}

/// The rule a name must pass before the run opens it (a planted link, FIFO, directory or a
/// file not of ours stops the run before it starts, exit 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// A file with a sqliosim header page, or none.
    Header,
    /// A backup stream of ours (its magic), or none; opened as the stream is.
    Stream {
        /// A log backup's stream (`.trn` magic).
        log: bool,
    },
    /// Replaced whole by a rename: a planted name under it is refused at the start.
    Replace,
}

/// One file of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Where it is.
    pub path: PathBuf,
    /// What it is.
    pub role: Role,
    /// The device owes it after a cut (once the run made it durable).
    pub durable: bool,
    /// Whether a rerun keeps it.
    pub keep: Keep,
    /// What its name must pass before the run opens it.
    pub rule: Rule,
}

/// Every file a run of a plan may own beside its set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The entries, the set's files first.
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// The set's own files and the journal's: what every run of `plan` owns whichever actors
    /// it runs. The actors add theirs (`sim::actors::table::manifest`).
    pub fn of_set(plan: &SimPlan) -> Manifest {
        let mut m = Manifest::default();
        for f in &plan.files {
            m.add(
                f.path.clone(),
                Role::Set(f.role),
                true,
                Keep::Never,
                Rule::Header,
            );
        }
        if let Some(j) = journal_path(plan).filter(|_| plan.journal) {
            let temp = super::journal::compaction_path(&j);
            m.add(j, Role::Journal, true, Keep::Always, Rule::Replace);
            m.add(temp, Role::Journal, false, Keep::Never, Rule::Replace);
        }
        m
    }

    /// Adds one file.
    pub fn add(&mut self, path: PathBuf, role: Role, durable: bool, keep: Keep, rule: Rule) {
        self.entries.push(Entry {
            path,
            role,
            durable,
            keep,
            rule,
        });
    }

    /// Adds a scratch file: never owed after a cut, kept only when the run found errors, ours
    /// by its header.
    pub fn scratch(&mut self, path: PathBuf) {
        self.add(path, Role::Scratch, false, Keep::WhenErrors, Rule::Header);
    }

    /// Adds a scratch file where there is one.
    pub fn scratch_opt(&mut self, path: Option<PathBuf>) {
        if let Some(p) = path {
            self.scratch(p);
        }
    }

    /// The entries other than the set's own files.
    pub fn beside_the_set(&self) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(|e| !matches!(e.role, Role::Set(_)))
    }
}
