//! The actor table, modelled on ripgrep's single flag table: one [`ActorSpec`] per actor a
//! cycle runs, giving its kind, the phase it runs in, how many threads it gets and how many
//! pages each buffers (both functions of the plan), and its body. The driver iterates the table
//! (`sim::driver::run`); a new actor is a new body and a new row. The bodies are plain `fn`
//! pointers, each called once per thread, so dispatch stays static and the actors' own loops
//! are untouched.

use super::worker::Worker;
use super::{
    backup, batch, checkdb, checkpoint, lazy_writer, log_backup, log_writer, random,
    recovery_writer, shrink, sort, sweep,
};
use crate::page::ActorKind;
use crate::sim::engine::manifest::Manifest;
use crate::sim::plan::SimPlan;

/// Pages per request for the sweeps (initial update, audit pass) and the system actors.
pub const SWEEP_PAGES: usize = 64;

/// The phases of a cycle, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CyclePhase {
    /// Every page of the data files written once.
    InitialUpdate,
    /// A checkpoint after the initial update.
    InitialCheckpoint,
    /// Every user and system actor, for the cycle's duration.
    Main,
    /// A checkpoint after the main phase.
    FinalCheckpoint,
    /// Every page read back, every log's chain checked.
    Audit,
}

impl CyclePhase {
    /// The phase's name in the log and the stop stage.
    pub fn name(self) -> &'static str {
        match self {
            CyclePhase::InitialUpdate => "initial update",
            CyclePhase::InitialCheckpoint => "initial checkpoint",
            CyclePhase::Main => "main",
            CyclePhase::FinalCheckpoint => "final checkpoint",
            CyclePhase::Audit => "audit",
        }
    }

    /// True when the phase lifts throttling under AllowIOBursts.
    pub fn bursts(self) -> bool {
        !matches!(self, CyclePhase::Main | CyclePhase::Audit)
    }
}

/// One actor of the table.
#[derive(Debug, Clone, Copy)]
pub struct ActorSpec {
    /// What the actor is (its name, and the tag in the pages it writes).
    pub kind: ActorKind,
    /// When it runs.
    pub phase: CyclePhase,
    /// Id of its first thread (the others follow).
    pub first_id: u16,
    /// How many threads it gets.
    pub threads: fn(&SimPlan) -> usize,
    /// Pages each thread's I/O buffers hold.
    pub pages: fn(&SimPlan) -> usize,
    /// What thread `i` (0-based) of the actor runs.
    pub body: fn(&mut Worker<'_>, usize),
    /// The files beside the set the actor may create, write, rename or read back, added to
    /// the run's manifest when the plan gives it a thread ([`manifest`]).
    pub owns: fn(&SimPlan, &mut Manifest),
}

/// Every actor of a cycle, in the order they are started within their phase.
pub static ACTORS: &[ActorSpec] = &[
    ActorSpec {
        kind: ActorKind::Init,
        phase: CyclePhase::InitialUpdate,
        first_id: 0,
        threads: data_files,
        pages: sweep_pages,
        body: sweep::initial_update,
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::Checkpoint,
        phase: CyclePhase::InitialCheckpoint,
        first_id: 0,
        threads: one,
        pages: gather_pages,
        body: |w, _| {
            checkpoint::checkpoint(w);
        },
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::RandomUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.random.users,
        pages: |p| p.random.max_chain.max(1) as usize,
        body: |w, _| random::run(w),
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::AuditUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.audit.users,
        pages: |p| batch_pages(p.audit.max_pages),
        body: |w, _| {
            let run = w.run;
            batch::audit(w, &run.plan.audit);
        },
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::ReadAheadUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.read_ahead.users,
        pages: |p| batch_pages(p.read_ahead.max_pages.min(p.caps.read_ahead_pages)),
        body: |w, _| {
            let run = w.run;
            batch::read_ahead(w, &run.plan.read_ahead);
        },
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::BulkUpdateUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.bulk.users,
        pages: |p| batch_pages(p.bulk.max_pages.min(p.caps.gather_pages)),
        body: |w, _| {
            let run = w.run;
            batch::bulk_update(w, &run.plan.bulk);
        },
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::BackupUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.backup.threads(),
        pages: |p| batch_pages(p.backup.transfer_pages),
        body: |w, i| match i {
            0 => backup::run(w),
            _ => log_backup::run(w),
        },
        owns: backup::owns,
    },
    ActorSpec {
        kind: ActorKind::SortUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.sections.sort.user_count as usize,
        pages: one,
        body: sort::run,
        owns: sort::owns,
    },
    ActorSpec {
        kind: ActorKind::DbccUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| p.sections.check_db.user_count as usize,
        pages: one,
        body: checkdb::run,
        owns: checkdb::owns,
    },
    ActorSpec {
        kind: ActorKind::ShrinkUser,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: one,
        pages: one,
        body: |w, _| shrink::run(w),
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::Checkpoint,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: one,
        pages: gather_pages,
        body: |w, _| checkpoint::checkpointer(w),
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::RecoveryWriter,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: |p| usize::from(p.sections.general.target_recovery_time_s > 0),
        pages: gather_pages,
        body: |w, _| recovery_writer::run(w),
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::LazyWriter,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: one,
        pages: gather_pages,
        body: |w, _| lazy_writer::lazy_writer(w),
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::LogWriter,
        phase: CyclePhase::Main,
        first_id: 0,
        threads: one,
        pages: one,
        body: |w, _| log_writer::log_writer(w),
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::Checkpoint,
        phase: CyclePhase::FinalCheckpoint,
        first_id: 0,
        threads: one,
        pages: gather_pages,
        body: |w, _| {
            checkpoint::checkpoint(w);
        },
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::AuditUser,
        phase: CyclePhase::Audit,
        first_id: 1000,
        threads: data_files,
        pages: sweep_pages,
        body: sweep::audit,
        owns: nothing,
    },
    ActorSpec {
        kind: ActorKind::LogWriter,
        phase: CyclePhase::Audit,
        first_id: 1000,
        threads: one,
        pages: one,
        body: sweep::log_chains,
        owns: nothing,
    },
];

/// The run's manifest: the set's files and the journal, then the files of each actor the
/// plan gives a thread, in table order. Setup, the previous-run guard and the planted-name
/// check read it (`sim::engine::manifest`).
pub fn manifest(plan: &SimPlan) -> Manifest {
    let mut m = Manifest::of_set(plan);
    for a in ACTORS.iter().filter(|a| (a.threads)(plan) > 0) {
        (a.owns)(plan, &mut m);
    }
    m
}

/// The actors of `phase`, in table order.
pub fn of_phase(phase: CyclePhase) -> impl Iterator<Item = &'static ActorSpec> {
    ACTORS.iter().filter(move |a| a.phase == phase)
}

/// Threads `phase` runs under `plan`.
pub fn threads_in(plan: &SimPlan, phase: CyclePhase) -> usize {
    of_phase(phase).map(|a| (a.threads)(plan)).sum()
}

fn nothing(_: &SimPlan, _: &mut Manifest) {}

fn one(_: &SimPlan) -> usize {
    1
}

fn sweep_pages(_: &SimPlan) -> usize {
    SWEEP_PAGES
}

/// The checkpoint's and lazy writer's buffer: the generation's gather cap (their runs of
/// dirty pages are split at it).
fn gather_pages(plan: &SimPlan) -> usize {
    plan.caps.gather_pages.clamp(1, 1024) as usize
}

fn data_files(plan: &SimPlan) -> usize {
    plan.data_files().len()
}

/// A batch user's buffer: its largest request, at most 1,024 pages.
fn batch_pages(max_pages: u64) -> usize {
    max_pages.clamp(1, 1024) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::engine::manifest::{Keep, Role, Rule};
    use crate::sim::plan::FilePlan;
    use std::path::PathBuf;

    fn plan() -> SimPlan {
        let mut plan = SimPlan::builder(1)
            .file(FilePlan::data("/d/a.mdx", 16))
            .file(FilePlan::data("/d/b.mdx", 16))
            .file(FilePlan::log("/d/a.ldx", 16))
            .build();
        plan.backup.users = 1;
        plan.backup.restore = true;
        plan.backup.log_interval = Some(std::time::Duration::from_millis(100));
        plan.sections.sort.user_count = 1;
        plan.sections.check_db.user_count = 2;
        plan
    }

    #[test]
    fn every_file_a_run_may_own_is_listed_once_with_its_rule() {
        let plan = plan();
        let m = manifest(&plan);
        let mut paths: Vec<&PathBuf> = m.entries.iter().map(|e| &e.path).collect();
        let n = paths.len();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), n, "each path once: {paths:?}");
        let count = |r: Role| m.entries.iter().filter(|e| e.role == r).count();
        let data = plan.data_files().len();
        assert_eq!(data, 2);
        assert_eq!(count(Role::Stream { log: false }), 1);
        assert_eq!(count(Role::Partial { log: true }), 1);
        assert_eq!(count(Role::Copy), data);
        assert_eq!(count(Role::Scratch), 1 + 2 * data);
        assert_eq!(count(Role::Journal), 2);
        let streams = m
            .entries
            .iter()
            .filter(|e| matches!(e.rule, Rule::Stream { .. }));
        assert!(streams.clone().all(|e| e.keep == Keep::Always));
        assert_eq!(
            streams.filter(|e| e.durable).count(),
            2,
            "the finished streams are owed"
        );
        assert!(m
            .entries
            .iter()
            .filter(|e| e.role == Role::Scratch)
            .all(|e| !e.durable && e.keep == Keep::WhenErrors));
    }

    #[test]
    fn an_actor_the_plan_gives_no_thread_owns_nothing() {
        let mut plan = plan();
        plan.backup.users = 0;
        plan.sections.sort.user_count = 0;
        plan.sections.check_db.user_count = 0;
        let m = manifest(&plan);
        assert_eq!(m.beside_the_set().count(), 2, "{:?}", m.entries);
        assert!(m.beside_the_set().all(|e| e.role == Role::Journal));
        plan.backup.users = 1;
        plan.backup.restore = false;
        plan.backup.log_interval = None;
        let m = manifest(&plan);
        let roles: Vec<Role> = m.beside_the_set().map(|e| e.role).collect();
        assert_eq!(
            roles,
            [
                Role::Journal,
                Role::Journal,
                Role::Stream { log: false },
                Role::Partial { log: false }
            ]
        );
    }
}
