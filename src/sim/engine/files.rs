//! The data and log files of a run: creating them (only over files that are ours), sizing,
//! growing and shrinking, and the ring of recent operations kept for evidence.
//!
//! Memory stays bounded however long the run: the ring holds at most `HISTORY_LEN` (4,096)
//! operations per file, and the map of persistent problems already reported at most one entry
//! per page of the file, only for pages found bad (empty on a clean run; 8 bytes of key and a
//! small state, less than the oracle's own per-page state).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::{Mutex, RwLock};

use super::ceiling::Ceiling;
use super::oracle::Oracle;
use crate::findings::HistoryEntry;
use crate::io::{AlignedBuf, Backend, FlushGate, OpenOptions, Storage};
use crate::page::{ExpectedState, FileHeader, FileRole, HeaderError, PAGE_SIZE};

/// Operations kept per file for the evidence of a finding (like SQL Server's ring of the
/// last 2,048 writes).
const HISTORY_LEN: usize = 4096;
/// Zero-stamping a data file writes this much per request.
const STAMP_CHUNK: usize = 1 << 20;
/// Stamping a log file writes this much per request: SQL Server stamps its log in about 4 MB
/// chunks (issue #24 §2).
const LOG_STAMP_CHUNK: usize = 4 << 20;

/// Why a file could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file is another sqliosim's: its header states a version this build does not read.
    #[error(transparent)]
    Foreign(crate::codec::ForeignFile),
    /// The file exists and was not created by this tool.
    #[error("{path}: the file exists and was not created by sqliosim ({why}); refusing to overwrite it. Remove it, choose another path, or pass --force to overwrite it")]
    NotOurs {
        /// The file.
        path: PathBuf,
        /// What its first page says.
        why: HeaderError,
    },
    /// The device needs direct I/O in units larger than a page.
    #[error("{path}: the device needs direct I/O in units of {unit} bytes, more than the {page}-byte page sqliosim reads and writes; put the files on a device with sectors of at most {page} bytes, or set NoBuffering=FALSE and UseScatterGather=FALSE in [CONFIG] to use buffered I/O")]
    SectorTooLarge {
        /// The file.
        path: PathBuf,
        /// The unit the device asks for.
        unit: u32,
        /// The page size.
        page: usize,
    },
    /// Opening, sizing or writing failed.
    #[error(transparent)]
    Io(#[from] crate::io::IoError),
    /// An OS error on a named file.
    #[error("{path}: {what}: {source}")]
    Os {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

/// How to prepare a file.
#[derive(Debug, Clone, Copy)]
pub struct Prepare {
    /// Run id to stamp into the header.
    pub run_id: u64,
    /// File id within the set.
    pub file_id: u32,
    /// Data or log.
    pub role: FileRole,
    /// Size at creation in pages, header included.
    pub pages: u64,
    /// Grow by writing zeros instead of allocating.
    pub stamp: bool,
    /// Leave holes instead of allocating.
    pub sparse: bool,
    /// Overwrite a file that is not ours.
    pub force: bool,
    /// Open options (direct, write-through).
    pub open: OpenOptions,
    /// A log file gets a 4096-byte log unit whatever the device says (`Force4KLogIO`).
    pub force_4k_log: bool,
}

/// The sector size recorded in the header of a file created at `path`: for a log file its log
/// unit (the device's physical sector, 4096 with `force_4k`; [`crate::io::DirectIoInfo::log_unit`]),
/// for a data file the direct-I/O unit.
pub fn created_unit(
    backend: &dyn Backend,
    storage: &dyn Storage,
    role: FileRole,
    force_4k: bool,
) -> u32 {
    match role {
        FileRole::Log => storage
            .dio_align()
            .max(backend.direct_io_info(storage.path()).log_unit(force_4k)),
        FileRole::Data => storage.dio_align(),
    }
}

/// Checks that `path` is absent, empty or ours; returns the header when ours.
pub fn check_ownership(
    backend: &dyn Backend,
    path: &Path,
    force: bool,
) -> Result<Option<FileHeader>, FileError> {
    if !backend.exists(path) {
        return Ok(None);
    }
    let storage = backend.open(
        path,
        OpenOptions {
            create: false,
            direct: false,
            write_through: false,
        },
    )?;
    let len = storage.len().map_err(|source| FileError::Os {
        path: path.into(),
        what: "stat",
        source,
    })?;
    if len == 0 {
        return Ok(None);
    }
    let mut page = AlignedBuf::new(PAGE_SIZE).map_err(|source| FileError::Os {
        path: path.into(),
        what: "allocate",
        source,
    })?;
    let n = storage
        .read_at(&mut page, 0)
        .map_err(|source| FileError::Os {
            path: path.into(),
            what: "read header page",
            source,
        })?;
    match FileHeader::decode(&page[..n]) {
        Ok(h) => Ok(Some(h)),
        Err(_) if force => Ok(None),
        Err(HeaderError::Version(v)) => Err(FileError::Foreign(v.at(path))),
        Err(why) => Err(FileError::NotOurs {
            path: path.into(),
            why,
        }),
    }
}

/// Creates (or recreates) a file of the set: header page, then the initial size.
pub fn create(
    backend: &dyn Backend,
    path: &Path,
    p: &Prepare,
) -> Result<Arc<dyn Storage>, FileError> {
    check_ownership(backend, path, p.force)?;
    let os = |what: &'static str| {
        move |source| FileError::Os {
            path: path.into(),
            what,
            source,
        }
    };
    let storage = backend.open(
        path,
        OpenOptions {
            create: true,
            ..p.open
        },
    )?;
    check_unit(storage.as_ref(), p.open.direct)?;
    storage.set_len(0).map_err(os("truncate"))?;
    let header = FileHeader {
        run_id: p.run_id,
        file_id: p.file_id,
        page_size: PAGE_SIZE as u32,
        role: p.role,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        created_us: crate::page::layout::now_us(),
        sector_size: created_unit(backend, storage.as_ref(), p.role, p.force_4k_log),
    };
    let mut buf = AlignedBuf::new(PAGE_SIZE).map_err(os("allocate"))?;
    buf.copy_from_slice(&header.encode());
    storage.write_at(&buf, 0).map_err(os("write header page"))?;
    extend(storage.as_ref(), 1, p.pages, p).map_err(os("extend"))?;
    storage.sync_data().map_err(os("fdatasync"))?;
    Ok(storage)
}

/// Refuses a file whose direct-I/O unit is larger than a page: no page-sized transfer of ours
/// could meet it (buffered I/O has no such limit).
pub fn check_unit(storage: &dyn Storage, direct: bool) -> Result<(), FileError> {
    let unit = storage.dio_align();
    if direct && unit as usize > PAGE_SIZE {
        return Err(FileError::SectorTooLarge {
            path: storage.path().to_path_buf(),
            unit,
            page: PAGE_SIZE,
        });
    }
    Ok(())
}

/// Grows a file from `from` to `to` pages: stamped (a data file with zeros in 1 MB writes, a
/// log with [`super::logblock::LOG_STAMP`] in 4 MB writes, as SQL Server stamps its log), space
/// allocated, or a hole.
pub fn extend(storage: &dyn Storage, from: u64, to: u64, p: &Prepare) -> std::io::Result<()> {
    if to <= from {
        return Ok(());
    }
    let (start, end) = (from * PAGE_SIZE as u64, to * PAGE_SIZE as u64);
    if p.stamp {
        let (byte, chunk) = match p.role {
            FileRole::Log => (super::logblock::LOG_STAMP, LOG_STAMP_CHUNK),
            FileRole::Data => (0, STAMP_CHUNK),
        };
        let mut stamp = AlignedBuf::new(chunk).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot allocate {chunk} bytes to stamp the file: {e}; raise the memory limit (ulimit -v)"),
            )
        })?;
        stamp.fill(byte);
        let mut at = start;
        while at < end {
            let n = (end - at).min(chunk as u64) as usize;
            storage.write_at(&stamp[..n], at)?;
            at += n as u64;
        }
        Ok(())
    } else if p.sparse {
        storage.set_len(end)
    } else {
        storage.allocate(end)
    }
}

/// One file of a running simulation.
#[derive(Debug)]
pub struct SimFile {
    /// Index in the plan.
    pub index: usize,
    /// Path.
    pub path: PathBuf,
    /// Data or log.
    pub role: FileRole,
    /// The open file.
    pub storage: Arc<dyn Storage>,
    /// Current size in pages. I/O holds it shared; growing and shrinking hold it exclusive.
    pub pages: RwLock<u64>,
    /// Expected state of every page (data files).
    pub oracle: Arc<Oracle>,
    /// The durable generation ceiling in the header (data files; see [`Ceiling`]).
    pub ceiling: Option<Ceiling>,
    /// The unit this run writes the file's log blocks in and reports tears in: the device's
    /// direct-I/O unit, or a larger one the file's header recorded when it was created.
    pub sector_size: u32,
    history: Mutex<VecDeque<(u64, HistoryEntry)>>,
    reported: Mutex<HashMap<u64, ExpectedState>>,
    /// Largest size in pages the file may still grow to (`u64::MAX`: no limit met yet); set
    /// when the filesystem ran out of space for a growth.
    grow_cap: AtomicU64,
    /// Each completed write-through write is covered by an fdatasync that started after it
    /// completed before it counts as durable, through this gate (shared by the writes it
    /// covers, or one each with `ForcedFlushPerWrite`): in forced-flush mode
    /// (`DurabilityMode=ForcedFlush`), and in FUA mode on a filesystem that gets no flush for
    /// an `O_DSYNC` write (FUSE). `None`: a completed write needs no flush of its own.
    pub flush_gate: Option<Arc<FlushGate>>,
}

impl SimFile {
    /// True when a completed write-through write counts as durable only after a flush
    /// ([`SimFile::flush_gate`]).
    pub fn flush_after_write(&self) -> bool {
        self.flush_gate.is_some()
    }

    /// Wraps an open file of `pages` pages.
    pub fn new(
        index: usize,
        path: PathBuf,
        role: FileRole,
        storage: Arc<dyn Storage>,
        run_id: u64,
        pages: u64,
    ) -> SimFile {
        let sector_size = storage.dio_align();
        SimFile {
            sector_size,
            index,
            path,
            role,
            storage,
            pages: RwLock::new(pages),
            oracle: Arc::new(Oracle::new(
                run_id,
                index as u32,
                if role == FileRole::Data { pages } else { 0 },
            )),
            ceiling: None,
            history: Mutex::new(VecDeque::with_capacity(HISTORY_LEN)),
            reported: Mutex::new(HashMap::new()),
            grow_cap: AtomicU64::new(u64::MAX),
            flush_gate: None,
        }
    }

    /// The largest size in pages the file may still grow to (`u64::MAX` when unlimited).
    pub fn grow_cap(&self) -> u64 {
        self.grow_cap.load(Ordering::Acquire)
    }

    /// Stops the file from growing past `pages` for the rest of the run.
    pub fn cap_growth(&self, pages: u64) {
        self.grow_cap.fetch_min(pages, Ordering::AcqRel);
    }

    /// Makes sure generation `gen` is covered by the file's durable ceiling before a write
    /// carries it (rewriting the header when it is not).
    pub fn reserve(&self, gen: u64) -> std::io::Result<()> {
        self.ceiling.as_ref().map_or(Ok(()), |c| c.reserve(gen))
    }

    /// Gives a data file latches for every page up to `max_pages` (its largest size), so its
    /// requests in flight wait only for requests that share a page (see the oracle's doc).
    pub fn with_max_pages(self, max_pages: u64) -> SimFile {
        if self.role != FileRole::Data {
            return self;
        }
        let pages = max_pages.max(self.oracle.pages());
        // Before the run starts nothing else holds the oracle.
        let oracle = match Arc::try_unwrap(self.oracle) {
            Ok(o) => Arc::new(o.with_latches_for(pages)),
            Err(shared) => shared,
        };
        SimFile { oracle, ..self }
    }

    /// The same file, using `recorded` (the sector size its header records) when that is
    /// larger than the device's unit: an existing log keeps its block unit.
    pub fn with_recorded_sector(self, recorded: u32) -> SimFile {
        SimFile {
            sector_size: self.sector_size.max(recorded),
            ..self
        }
    }

    /// Remembers an operation on `page` (`u64::MAX` for whole-file operations such as fsync).
    pub fn remember(&self, page: u64, entry: HistoryEntry) {
        let mut h = self.history.lock();
        if h.len() == HISTORY_LEN {
            h.pop_front();
        }
        h.push_back((page, entry));
    }

    /// True when a persistent problem of `page` was already reported while the page was
    /// expected to hold `state`.
    pub fn already_reported(&self, page: u64, state: Option<ExpectedState>) -> bool {
        let r = self.reported.lock();
        !r.is_empty() && state.is_some() && r.get(&page) == state.as_ref()
    }

    /// Notes a persistent problem of `page` reported while it was expected to hold `state`.
    pub fn mark_reported(&self, page: u64, state: Option<ExpectedState>) {
        if let Some(s) = state {
            self.reported.lock().insert(page, s);
        }
    }

    /// The remembered operations on `page` and the file-wide ones, oldest first (at most 16).
    pub fn history_of(&self, page: u64) -> Vec<HistoryEntry> {
        let h = self.history.lock();
        let v: Vec<HistoryEntry> = h
            .iter()
            .filter(|(p, _)| *p == page || *p == u64::MAX)
            .map(|(_, e)| e.clone())
            .collect();
        v[v.len().saturating_sub(16)..].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_header(physical: u32, force_4k_log: bool) -> u32 {
        let backend = crate::io::FaultyBackend::new(1);
        backend.set_physical_sector(physical);
        let prep = Prepare {
            run_id: 5,
            file_id: 1,
            role: FileRole::Log,
            pages: 9,
            stamp: true,
            sparse: false,
            force: false,
            open: OpenOptions::default(),
            force_4k_log,
        };
        let storage = create(&backend, Path::new("/l.ldx"), &prep).expect("create");
        let mut page = vec![0u8; PAGE_SIZE];
        storage.read_at(&mut page, 0).expect("read header");
        let recorded = FileHeader::decode(&page).expect("header").sector_size;
        assert_eq!(
            recorded,
            created_unit(&backend, storage.as_ref(), FileRole::Log, force_4k_log),
            "the run writes in the unit the header records"
        );
        recorded
    }

    #[test]
    fn a_log_created_on_a_512e_device_records_its_physical_sector() {
        assert_eq!(
            log_header(0, false),
            512,
            "nothing reported: the logical unit"
        );
        assert_eq!(log_header(512, false), 512);
        assert_eq!(log_header(4096, false), 4096, "512e: the physical sector");
        assert_eq!(log_header(512, true), 4096, "Force4KLogIO");
        assert_eq!(log_header(4096, true), 4096);
    }
}
