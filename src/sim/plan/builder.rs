//! A builder for [`SimPlan`], for the tests and the self-test, which build plans without an
//! INI file: it starts from SQLIOSim's defaults (the plan an INI file that names only its
//! files gives on one CPU with 64 MB of memory; a test below holds it to that), and a setter
//! per field changes what a caller needs, so a field added to the plan is not spelled out
//! again in every test.

use std::path::PathBuf;
use std::time::Duration;

use super::from_settings::READ_RETRIES;
use super::{BackupPlan, BatchPlan, FilePlan, RandomPlan, ShrinkPlan, SimPlan};
use crate::page::FileRole;

impl FilePlan {
    /// A fixed-size data file of `pages` pages (page 0, the header, included).
    pub fn data(path: impl Into<PathBuf>, pages: u64) -> FilePlan {
        FilePlan::fixed(path.into(), FileRole::Data, pages)
    }

    /// A fixed-size log file of `pages` pages.
    pub fn log(path: impl Into<PathBuf>, pages: u64) -> FilePlan {
        FilePlan::fixed(path.into(), FileRole::Log, pages)
    }

    /// The same file, shrinkable: the shrink user grows it up to `max_pages` and shrinks it
    /// back, `increment_pages` at a time.
    pub fn growing(self, max_pages: u64, increment_pages: u64) -> FilePlan {
        FilePlan {
            max_pages,
            increment_pages,
            shrinkable: true,
            ..self
        }
    }

    fn fixed(path: PathBuf, role: FileRole, pages: u64) -> FilePlan {
        FilePlan {
            path,
            role,
            initial_pages: pages,
            max_pages: pages,
            increment_pages: 0,
            shrinkable: false,
            sparse: false,
        }
    }
}

/// `[RandomUser]`'s defaults, with `UserCount=-1` resolved for one CPU (2 users).
impl Default for RandomPlan {
    fn default() -> Self {
        RandomPlan {
            users: 2,
            jump: 0.05,
            min_chain: 1,
            max_chain: 100,
            write_ratio: 0.9,
            min_log: 64,
            max_log: 8192,
            rollback: 0.01,
            sleep_after: Duration::from_millis(5),
        }
    }
}

/// `[ShrinkUser]`'s defaults.
impl Default for ShrinkPlan {
    fn default() -> Self {
        ShrinkPlan {
            min_interval: Duration::from_secs(120),
            max_interval: Duration::from_secs(600),
            min_extends: 1,
            max_extends: 20,
        }
    }
}

/// `[BackupUser]`'s defaults: off; 1 MB transfers, 6 buffers, 5 s between backups, the
/// stream beside the first data file (set by [`PlanBuilder::build`] when left empty), checked
/// by a verify-only pass; a restore (when on) in 64 KB writes, 6 in flight, into copies zeroed
/// first.
impl Default for BackupPlan {
    fn default() -> Self {
        BackupPlan {
            users: 0,
            transfer_pages: 128,
            buffer_count: 6,
            delay: Duration::from_secs(5),
            file: PathBuf::new(),
            verify_only: true,
            restore: false,
            restore_transfer_pages: 8,
            restore_buffers: 6,
            instant_file_init: false,
            log_interval: None,
        }
    }
}

impl BatchPlan {
    /// `[AuditUser]`'s defaults: 2 users, 64 pages, 200 ms after every 2 cycles.
    pub const AUDIT: BatchPlan = BatchPlan::defaults(64, 64, 200);
    /// `[ReadAheadUser]`'s defaults: 2 users, 32 to 64 pages, 200 ms after every 2 cycles.
    pub const READ_AHEAD: BatchPlan = BatchPlan::defaults(32, 64, 200);
    /// `[BulkUpdateUser]`'s defaults: 2 users (`UserCount=-1` on one CPU), 64 to 128 pages,
    /// 10 ms after every 2 cycles.
    pub const BULK: BatchPlan = BatchPlan::defaults(64, 128, 10);

    const fn defaults(min_pages: u64, max_pages: u64, delay_ms: u64) -> BatchPlan {
        BatchPlan {
            users: 2,
            min_pages,
            max_pages,
            delay_after_cycles: 2,
            delay: Duration::from_millis(delay_ms),
        }
    }
}

/// Builds a [`SimPlan`]: [`SimPlan::builder`], the setters, then [`PlanBuilder::build`].
#[derive(Debug, Clone)]
pub struct PlanBuilder {
    plan: SimPlan,
}

/// The machine the defaults are SQLIOSim's for: one CPU, 64 MB of memory.
const DEFAULT_HOST: crate::config::Host = crate::config::Host {
    cpus: 1,
    mem_available_mb: 64,
    mem_total_mb: 64,
};

impl SimPlan {
    /// A builder of a plan seeded with `seed`, with SQLIOSim's defaults and no files.
    pub fn builder(seed: u64) -> PlanBuilder {
        PlanBuilder {
            plan: SimPlan {
                seed,
                files: Vec::new(),
                cycles: 1,
                cycle_duration: Duration::from_secs(300),
                stop_on_error: true,
                cache_hit_ratio: 0.1,
                direct: true,
                write_through: true,
                durability: crate::config::DurabilityMode::default(),
                flush_per_write: false,
                max_outstanding_io: 0,
                target_io: Duration::from_millis(100),
                allow_io_bursts: true,
                scatter_gather: true,
                force_read_ahead: true,
                delete_at_startup: true,
                delete_at_shutdown: false,
                stamp_files: false,
                force_4k_log_io: false,
                iovec_4k: false,
                max_memory_mb: 64,
                read_retries: READ_RETRIES,
                force: false,
                journal: true,
                journal_dir: None,
                witness: None,
                resume: false,
                run_id: None,
                judged: None,
                long_io: crate::sim::control::io_ages::LONG_IO,
                random: RandomPlan::default(),
                audit: BatchPlan::AUDIT,
                read_ahead: BatchPlan::READ_AHEAD,
                bulk: BatchPlan::BULK,
                shrink: ShrinkPlan::default(),
                backup: BackupPlan::default(),
                sections: crate::config::Sections::defaults(&DEFAULT_HOST),
                caps: crate::config::IoGeneration::default().caps(),
                affinity: 0,
                io_affinity: 0,
            },
        }
    }
}

/// One setter per field of [`SimPlan`], each replacing that field.
macro_rules! setters {
    ($( $field:ident: $ty:ty, )*) => {
        $(
            #[doc = concat!("Sets [`SimPlan::", stringify!($field), "`].")]
            pub fn $field(mut self, value: $ty) -> Self {
                self.plan.$field = value;
                self
            }
        )*
    };
}

impl PlanBuilder {
    /// Adds a file after those already given.
    pub fn file(mut self, file: FilePlan) -> Self {
        self.plan.files.push(file);
        self
    }

    setters! {
        seed: u64,
        files: Vec<FilePlan>,
        cycles: u32,
        cycle_duration: Duration,
        stop_on_error: bool,
        cache_hit_ratio: f64,
        direct: bool,
        write_through: bool,
        durability: crate::config::DurabilityMode,
        flush_per_write: bool,
        max_outstanding_io: usize,
        target_io: Duration,
        allow_io_bursts: bool,
        scatter_gather: bool,
        force_read_ahead: bool,
        delete_at_startup: bool,
        delete_at_shutdown: bool,
        stamp_files: bool,
        force_4k_log_io: bool,
        iovec_4k: bool,
        max_memory_mb: u64,
        read_retries: u32,
        force: bool,
        journal: bool,
        journal_dir: Option<PathBuf>,
        resume: bool,
        run_id: Option<u64>,
        long_io: Duration,
        random: RandomPlan,
        audit: BatchPlan,
        read_ahead: BatchPlan,
        bulk: BatchPlan,
        shrink: ShrinkPlan,
        backup: BackupPlan,
        sections: crate::config::Sections,
        caps: crate::config::IoCaps,
        affinity: u64,
        io_affinity: u64,
    }

    /// The plan (a backup stream left unnamed goes beside the first data file).
    pub fn build(mut self) -> SimPlan {
        if self.plan.backup.file.as_os_str().is_empty() {
            let data = self
                .plan
                .data_files()
                .first()
                .map(|&i| self.plan.files[i].path.clone());
            self.plan.backup.file = super::from_settings::stream_path(data.as_deref(), "");
        }
        self.plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Host, RunSettings};
    use crate::sim::plan::from_settings::plan_from;
    use std::path::Path;

    /// The builder's defaults are SQLIOSim's: the plan of an INI file that gives only its
    /// files, resolved on one CPU with 64 MB available.
    #[test]
    fn defaults_are_those_of_an_ini_file_with_only_its_files() {
        let dir = Path::new("/plans");
        let ini = "[File1]\nFileName=d.mdx\nInitialSize=1\n\
                   [File2]\nFileName=l.ldx\nInitialSize=1\nLogFile=TRUE\n";
        let host = Host {
            cpus: 1,
            mem_available_mb: 64,
            mem_total_mb: 64,
        };
        let (settings, _) = RunSettings::from_ini(ini, dir, host, 9).expect("valid");
        let mut built = SimPlan::builder(9)
            .file(FilePlan::data(dir.join("d.mdx"), 128))
            .file(FilePlan::log(dir.join("l.ldx"), 128))
            .build();
        // The one difference: the settings resolve the error log's path against the
        // directory, and the builder knows no directory.
        assert_eq!(built.sections.general.error_file, "sqliosim.log.xml");
        built.sections.general.error_file = "/plans/sqliosim.log.xml".into();
        assert_eq!(plan_from(&settings), built);
    }

    #[test]
    fn setters_change_only_their_field() {
        let plan = SimPlan::builder(1)
            .file(FilePlan::data("/x/d.mdx", 256).growing(512, 32))
            .cycles(3)
            .journal(false)
            .audit(BatchPlan {
                users: 0,
                ..BatchPlan::AUDIT
            })
            .build();
        let mut want = SimPlan::builder(1).build();
        want.files = vec![FilePlan {
            path: "/x/d.mdx".into(),
            role: FileRole::Data,
            initial_pages: 256,
            max_pages: 512,
            increment_pages: 32,
            shrinkable: true,
            sparse: false,
        }];
        want.backup.file = "/x/d.bak".into();
        want.cycles = 3;
        want.journal = false;
        want.audit.users = 0;
        assert_eq!(plan, want);
    }
}
