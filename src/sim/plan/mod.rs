//! The run plan: everything the simulation needs, already validated and resolved.
//!
//! The configuration layer builds it from the INI file and the command line (`from_settings`);
//! tests and the self-test build it with [`SimPlan::builder`] (`builder`). Counts are final (automatic user counts resolved), sizes are in pages, ratios are
//! fractions.

mod builder;
pub mod from_settings;

pub use builder::PlanBuilder;

use std::path::PathBuf;
use std::time::Duration;

use crate::config::{DurabilityMode, IoCaps, Sections};
use crate::page::FileRole;

/// One file of the set.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePlan {
    /// Where the file lives.
    pub path: PathBuf,
    /// Data or log.
    pub role: FileRole,
    /// Pages at creation (page 0, the header, included).
    pub initial_pages: u64,
    /// Largest size the shrink user may grow it to, in pages.
    pub max_pages: u64,
    /// Grow/shrink step in pages (0: fixed size).
    pub increment_pages: u64,
    /// Whether the shrink user may grow and shrink it.
    pub shrinkable: bool,
    /// Create with holes instead of allocating.
    pub sparse: bool,
}

/// `[RandomUser]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomPlan {
    /// Number of random users.
    pub users: usize,
    /// Chance of jumping to a new region per cycle (0..1).
    pub jump: f64,
    /// Region length in pages, min.
    pub min_chain: u64,
    /// Region length in pages, max.
    pub max_chain: u64,
    /// Share of a chain's pages that are updated (0..1).
    pub write_ratio: f64,
    /// Log record size, min bytes.
    pub min_log: u32,
    /// Log record size, max bytes.
    pub max_log: u32,
    /// Chance that an update is rolled back in memory (0..1).
    pub rollback: f64,
    /// Sleep after each cycle.
    pub sleep_after: Duration,
}

/// `[AuditUser]`, `[ReadAheadUser]` and `[BulkUpdateUser]` share this shape.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchPlan {
    /// Number of users.
    pub users: usize,
    /// Pages per cycle, min.
    pub min_pages: u64,
    /// Pages per cycle, max.
    pub max_pages: u64,
    /// Pause after this many cycles.
    pub delay_after_cycles: u32,
    /// The pause.
    pub delay: Duration,
}

/// `[ShrinkUser]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ShrinkPlan {
    /// Shortest gap between operations.
    pub min_interval: Duration,
    /// Longest gap between operations.
    pub max_interval: Duration,
    /// Fewest Increment steps per operation.
    pub min_extends: u64,
    /// Most Increment steps per operation.
    pub max_extends: u64,
}

/// `[BackupUser]` settings (issue #25 §1).
#[derive(Debug, Clone, PartialEq)]
pub struct BackupPlan {
    /// Backup users (0 or 1).
    pub users: usize,
    /// Pages per read of a data file and per stream block (MaxTransferSize / 8 KB).
    pub transfer_pages: u64,
    /// Reads in flight (BufferCount).
    pub buffer_count: usize,
    /// Pause after each backup.
    pub delay: Duration,
    /// The backup stream (absolute).
    pub file: PathBuf,
    /// Read the stream back and check it after each backup.
    pub verify_only: bool,
    /// Write a restored copy of the data files from the stream after each backup.
    pub restore: bool,
    /// Pages per write of a restored copy (RestoreMaxTransferSize / 8 KB).
    pub restore_transfer_pages: u64,
    /// Writes of a restored copy in flight (RestoreBufferCount).
    pub restore_buffers: usize,
    /// Instant file initialization: a restored copy is allocated, not zeroed, before its pages
    /// are written.
    pub instant_file_init: bool,
    /// Time between log backups (`None`: no log backups, the log is not held for them).
    pub log_interval: Option<Duration>,
}

impl BackupPlan {
    /// Where a backup in progress is written (the stream's name and `.partial`): renamed over
    /// the stream only once it is finished and durable, so that a backup that does not finish
    /// (stopped at a bad page, a failed write, a kill) never destroys the last finished one.
    pub fn partial(&self) -> PathBuf {
        let mut name = self.file.clone().into_os_string();
        name.push(".partial");
        PathBuf::from(name)
    }

    /// The log backup stream: the backup stream's name with `.trn` for its extension.
    pub fn log_file(&self) -> PathBuf {
        self.file.with_extension("trn")
    }

    /// Where a log backup in progress is written: the log backup stream's name and `.partial`.
    pub fn log_partial(&self) -> PathBuf {
        let mut name = self.log_file().into_os_string();
        name.push(".partial");
        PathBuf::from(name)
    }

    /// Threads of the Backup User: the full backups' and, with log backups, the log backups'.
    pub fn threads(&self) -> usize {
        self.users * (1 + usize::from(self.log_interval.is_some()))
    }

    /// Where `RestoreAfterBackup` restores the copy of the data file at `data`: beside it, its
    /// name and `.restored`, on the device under test.
    pub fn restored(data: &std::path::Path) -> PathBuf {
        let mut name = data.to_path_buf().into_os_string();
        name.push(".restored");
        PathBuf::from(name)
    }
}

/// The whole simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct SimPlan {
    /// Seed of every random choice.
    pub seed: u64,
    /// The files, data and log.
    pub files: Vec<FilePlan>,
    /// Test cycles (0: until stopped).
    pub cycles: u32,
    /// Main-phase length of each cycle.
    pub cycle_duration: Duration,
    /// Stop at the first integrity error.
    pub stop_on_error: bool,
    /// Share of random-user reads served from the buffer pool (0..1).
    pub cache_hit_ratio: f64,
    /// O_DIRECT.
    pub direct: bool,
    /// `WriteThrough`: every data and log write is write-through (durable once done, the way
    /// `durability` makes it so).
    pub write_through: bool,
    /// `DurabilityMode`: how a write-through write is made durable (forced flush, FUA, none).
    pub durability: DurabilityMode,
    /// `ForcedFlushPerWrite`: each write-through write gets an `fdatasync` of its own, instead
    /// of one shared by the writes of a file completed before it started (the economy).
    pub flush_per_write: bool,
    /// Cap on outstanding I/O for the whole process (0: no cap beyond the thread count).
    pub max_outstanding_io: usize,
    /// Throttling target.
    pub target_io: Duration,
    /// Lift throttling during the initial update and checkpoints.
    pub allow_io_bursts: bool,
    /// Multi-page runs as one vectored request.
    pub scatter_gather: bool,
    /// Read-ahead reads pages even when they are cached.
    pub force_read_ahead: bool,
    /// Delete existing test files at start.
    pub delete_at_startup: bool,
    /// Delete the files at the end.
    pub delete_at_shutdown: bool,
    /// Grow files by writing zeros instead of allocating.
    pub stamp_files: bool,
    /// Log files are created with a 4096-byte log unit whatever the device says
    /// (`Force4KLogIO`, SQL Server's trace flag 1800).
    pub force_4k_log_io: bool,
    /// Scatter/gather requests carry 4 KiB iovec entries, two per page (`IoVec4K`).
    pub iovec_4k: bool,
    /// Buffer pool size in MB.
    pub max_memory_mb: u64,
    /// Re-reads of a page that failed verification.
    pub read_retries: u32,
    /// Overwrite files that were not created by this tool.
    pub force: bool,
    /// Keep the durability journal beside the first data file.
    pub journal: bool,
    /// `--journal-dir`: keep the journal there instead of beside the first data file.
    pub journal_dir: Option<std::path::PathBuf>,
    /// `--witness`: the off-host witness the journal's batches also go to.
    pub witness: Option<crate::config::WitnessTarget>,
    /// Open the existing file set, verify it, and carry on (instead of creating files).
    pub resume: bool,
    /// Run id of the file set to create, chosen before the run so that its evidence (dumps)
    /// can carry it; `None`: drawn when the files are created.
    pub run_id: Option<u64>,
    /// A resume's judgement of the set it opens, made before anything was touched by the
    /// judgement `verify` makes (`app::judge`): its findings, which the resume reports as its
    /// own instead of its own scan's. `None`: the resume judges by its scan (in-process runs).
    pub judged: Option<Vec<crate::findings::Finding>>,
    /// An I/O outstanding longer than this is reported once (SQLIOSim: 15 s).
    pub long_io: Duration,
    /// `[RandomUser]`.
    pub random: RandomPlan,
    /// `[AuditUser]` (min_pages = max_pages = BuffersValidated).
    pub audit: BatchPlan,
    /// `[ReadAheadUser]`.
    pub read_ahead: BatchPlan,
    /// `[BulkUpdateUser]`.
    pub bulk: BatchPlan,
    /// `[ShrinkUser]`.
    pub shrink: ShrinkPlan,
    /// `[BackupUser]`.
    pub backup: BackupPlan,
    /// Every fixed INI section as read. The actors above read their typed plans; an actor
    /// with a section of its own reads its settings here, so adding one needs no plan type
    /// (ARCHITECTURE.md, "Adding things").
    pub sections: Sections,
    /// `IoGeneration`'s largest requests: gathers (checkpoint, lazy writer, bulk update) and
    /// read-ahead; larger runs are split into requests of these.
    pub caps: IoCaps,
    /// `Affinity`: CPU mask of the worker threads (0: not pinned).
    pub affinity: u64,
    /// `IOAffinity`: CPU mask of the I/O service thread (0: not pinned).
    pub io_affinity: u64,
}

impl SimPlan {
    /// Bytes of one iovec entry of a scatter/gather request: 4096 with `IoVec4K` (two per
    /// page, as SQL Server on Linux builds its requests), else a whole page.
    pub fn iovec_unit(&self) -> usize {
        if self.iovec_4k {
            4096
        } else {
            crate::page::PAGE_SIZE
        }
    }

    /// Sort User `i`'s tempdb file (`[SortUser]`): beside the first data file, its name and
    /// `.sort<i>` (`None` without a data file).
    pub fn tempdb_path(&self, i: usize) -> Option<PathBuf> {
        let first = self.data_files().first().map(|&f| &self.files[f].path)?;
        let mut name = first.clone().into_os_string();
        name.push(format!(".sort{i}"));
        Some(PathBuf::from(name))
    }

    /// DBCC User `i`'s snapshot file of file `file` (`[CheckDbUser]`): beside it, its name and
    /// `_MSSQL_DBCC<i>`, as SQL Server names the sparse files of CHECKDB's internal snapshot.
    pub fn snapshot_path(&self, file: usize, i: usize) -> PathBuf {
        let mut name = self.files[file].path.clone().into_os_string();
        name.push(format!("_MSSQL_DBCC{i}"));
        PathBuf::from(name)
    }

    /// Files opened O_DSYNC: write-through in FUA mode.
    pub fn open_dsync(&self) -> bool {
        self.write_through && self.durability == DurabilityMode::Fua
    }

    /// Each write-through write followed by an `fdatasync` of its file before it counts as
    /// done (forced flush).
    pub fn forced_flush(&self) -> bool {
        self.write_through && self.durability == DurabilityMode::ForcedFlush
    }

    /// Whether a file of `role` is opened `O_DSYNC`: every file in FUA mode, and the log in
    /// mode None under WriteThrough (that mode never syncs after a write, and its log counts a
    /// completed write as hardened, as SQL Server 2017 before CU6 did). In forced flush the
    /// log is opened without it and synced once per group commit, as the data files are after
    /// each write ([`SimPlan::forced_flush`]); its writer bounds how far past the
    /// durable end it writes (`engine::logwrites::unflushed_bound`), which the verify's log
    /// walk relies on (docs/durability.md, "Durability modes").
    pub fn opens_dsync(&self, role: FileRole) -> bool {
        self.open_dsync()
            || (self.write_through
                && self.durability == DurabilityMode::None
                && role == FileRole::Log)
    }

    /// Each completed data write acknowledged to the journal as durable (after its flush where
    /// it needs one): write-through, except in mode None, where only sync points make writes
    /// durable.
    pub fn acks_each_write(&self) -> bool {
        self.write_through && self.durability != DurabilityMode::None
    }

    /// The directories the files go in, each once, in the plan's order.
    pub fn dirs(&self) -> Vec<&std::path::Path> {
        let mut dirs: Vec<&std::path::Path> = Vec::new();
        for d in self.files.iter().filter_map(|f| f.path.parent()) {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        dirs
    }

    /// Indices of the data files.
    pub fn data_files(&self) -> Vec<usize> {
        self.indices(FileRole::Data)
    }

    /// Indices of the log files.
    pub fn log_files(&self) -> Vec<usize> {
        self.indices(FileRole::Log)
    }

    fn indices(&self, role: FileRole) -> Vec<usize> {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.role == role)
            .map(|(i, _)| i)
            .collect()
    }
}
