//! The faulty backend: files in memory that misbehave on command, for tests and the self-test.
//!
//! One seed drives every random choice (which fault, which page, which sector or bit), so a
//! failing run is reproduced from its seed. Faults are armed with [`FaultyBackend::inject`]
//! (fires once, on the request its [`Trigger`] names) or drawn with a probability per request
//! ([`FaultyBackend::set_random`]). Every fault that actually did something is logged
//! ([`FaultyBackend::fired`]); one that found nothing to do (a stale read of a page with no
//! previous version, say) is consumed and logged in [`FaultyBackend::skipped`] instead, so a
//! test can check that every fired fault was reported and nothing else was.

mod append;
mod cache;
pub mod classes;
mod cut;
mod helper;
mod memfile;
mod plan;
mod post;
mod storage;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::{Mutex, RwLock};

pub use append::MemAppend;
pub use cache::{Keep, Lost};
pub use classes::{FaultClass, CLASSES};
pub use cut::PowerCut;
pub use plan::{Access, Detail, Fault, FiredFault, Misdirect, Tear, Trigger};
pub use storage::FaultyStorage;

use super::{AppendFile, Backend, DirectIoInfo, IoError, OpenOptions, Storage};
use memfile::MemFile;
use plan::Plan;

/// State shared by the backend and every file it opened.
#[derive(Debug)]
pub(crate) struct FaultyState {
    pub(crate) files: Mutex<HashMap<PathBuf, Arc<MemFile>>>,
    pub(crate) plan: Mutex<Plan>,
    /// The direct-I/O unit the files enforce (0: none, and 512 reported), as a device of
    /// that logical sector would: a misaligned offset or length fails with EINVAL.
    pub(crate) dio_align: AtomicU32,
    /// The physical sector size reported (0: none), as on a 512e disk.
    pub(crate) physical_sector: AtomicU32,
    /// The helper thread carrying posted requests.
    pub(crate) helpers: post::Helpers,
    /// Held shared by every write, sync and resize, exclusively by a power cut: a cut falls
    /// between two of them, never inside one.
    pub(crate) power: RwLock<()>,
    /// The volatile write cache is on ([`FaultyBackend::enable_volatile_cache`]).
    pub(crate) cache_on: AtomicBool,
    /// Whose flushes lie.
    pub(crate) lies: Mutex<cut::Lies>,
    /// Writes completed (appends included), which cuts are armed at.
    pub(crate) writes: AtomicU64,
    /// Cuts armed and taken.
    pub(crate) cuts: Mutex<cut::Cuts>,
    /// A cut keeps the unsynced appends of an append file as a prefix.
    pub(crate) appends_in_order: AtomicBool,
    /// The clock its simulations run on; a stepped one charges each transfer its
    /// [`service_time`].
    pub(crate) clock: crate::clock::Clock,
}

/// What a transfer of `len` bytes takes on a stepped clock: 50 µs a request and 1 ns a byte
/// (about 1 GB/s), a fast SSD's order of magnitude. Only the stepped clock charges it: on the
/// real clock memory answers at once, as before.
pub fn service_time(len: usize) -> std::time::Duration {
    std::time::Duration::from_micros(50) + std::time::Duration::from_nanos(len as u64)
}

impl FaultyState {
    /// The service time a transfer of `len` bytes is charged: on a stepped clock only.
    pub(crate) fn service(&self, len: usize) -> Option<std::time::Duration> {
        self.clock.as_stepped().map(|_| service_time(len))
    }

    /// Logs a write fault that fired on `path` (an append: the journal).
    pub(crate) fn log_write(&self, path: &Path, fault: Fault, page: u64, detail: Detail) {
        let mut plan = self.plan.lock();
        let seq = plan.fired.len() as u64 + 1;
        plan.fired.push(FiredFault {
            seq,
            fault,
            path: path.to_path_buf(),
            page,
            op: Access::Write,
            detail,
            time_us: crate::page::layout::now_us(),
        });
    }
}

/// In-memory backend that injects faults; cheap to clone (clones share files and faults).
#[derive(Debug, Clone)]
pub struct FaultyBackend {
    shared: Arc<FaultyState>,
}

impl FaultyBackend {
    /// An empty backend whose random choices all derive from `seed`, on the real clock.
    pub fn new(seed: u64) -> FaultyBackend {
        FaultyBackend::with_clock(seed, crate::clock::Clock::Real)
    }

    /// An empty backend on a stepped clock of its own (`crate::clock`): a simulation on it
    /// runs in stepped time, each transfer charged its [`service_time`], and what it measures
    /// does not depend on the machine's load (`sim::control::stepping`). Only a simulation
    /// steps the clock: a request made on it outside one waits for ever.
    pub fn stepped(seed: u64) -> FaultyBackend {
        FaultyBackend::with_clock(seed, crate::clock::Clock::stepped())
    }

    /// [`FaultyBackend::stepped`] on a clock whose runs take turns on one CPU, so that a seed
    /// replays event for event where the process may use real-time scheduling
    /// (`sim::control::stepping`).
    pub fn stepped_in_turns(seed: u64) -> FaultyBackend {
        FaultyBackend::with_clock(seed, crate::clock::Clock::stepped_in_turns())
    }

    fn with_clock(seed: u64, clock: crate::clock::Clock) -> FaultyBackend {
        FaultyBackend {
            shared: Arc::new(FaultyState {
                files: Mutex::new(HashMap::new()),
                plan: Mutex::new(Plan::new(seed)),
                dio_align: AtomicU32::new(0),
                physical_sector: AtomicU32::new(0),
                helpers: post::Helpers::new(seed, clock.clone()),
                power: RwLock::new(()),
                cache_on: AtomicBool::new(false),
                lies: Mutex::default(),
                writes: AtomicU64::new(0),
                cuts: Mutex::default(),
                appends_in_order: AtomicBool::new(true),
                clock,
            }),
        }
    }

    /// From now on every file behaves as if on a device of `unit`-byte logical sectors (4096
    /// for a 4Kn disk): it reports that unit and refuses a read or write whose offset or length
    /// is not a multiple of it with EINVAL.
    pub fn set_dio_align(&self, unit: u32) {
        self.shared.dio_align.store(unit, Ordering::Relaxed);
    }

    /// From now on the device reports `size`-byte physical sectors (4096 over 512-byte logical
    /// ones for a 512e disk); transfers are still checked against the logical unit only.
    pub fn set_physical_sector(&self, size: u32) {
        self.shared.physical_sector.store(size, Ordering::Relaxed);
    }

    /// Arms `fault` to fire once on the next request matching `target`.
    pub fn inject(&self, fault: Fault, target: Trigger) {
        self.shared.plan.lock().arm(fault, target);
    }

    /// From now on each request draws, with `probability`, one of `faults` that applies to it.
    pub fn set_random(&self, probability: f64, faults: Vec<Fault>) {
        self.shared
            .plan
            .lock()
            .set_random(probability, faults, None);
    }

    /// As [`FaultyBackend::set_random`], but only requests to the file `path` draw faults.
    pub fn set_random_on(&self, path: impl Into<PathBuf>, probability: f64, faults: Vec<Fault>) {
        let only = Some(path.into());
        self.shared
            .plan
            .lock()
            .set_random(probability, faults, only);
    }

    /// Disarms every armed fault and stops random faults (the logs are kept).
    pub fn clear_faults(&self) {
        self.shared.plan.lock().clear();
    }

    /// Number of armed faults not fired yet.
    pub fn armed(&self) -> usize {
        self.shared.plan.lock().armed()
    }

    /// Every fault that fired, in order.
    pub fn fired(&self) -> Vec<FiredFault> {
        self.shared.plan.lock().fired.clone()
    }

    /// Removes and returns the log of fired faults.
    pub fn take_fired(&self) -> Vec<FiredFault> {
        std::mem::take(&mut self.shared.plan.lock().fired)
    }

    /// Posted requests that completed after a request posted later (out of order, as the
    /// helper thread completes them).
    pub fn reordered(&self) -> u64 {
        self.shared.helpers.reordered.load(Ordering::Relaxed)
    }

    /// Faults that were triggered but had nothing to act on: (fault, file, page).
    pub fn skipped(&self) -> Vec<(Fault, PathBuf, u64)> {
        self.shared.plan.lock().skipped.clone()
    }

    /// Opens a file and returns the concrete storage (for tests that need its extras).
    pub fn open_faulty(&self, path: &Path) -> Arc<FaultyStorage> {
        let file = self.file(path);
        Arc::new(FaultyStorage::new(file, Arc::clone(&self.shared)))
    }

    /// As [`FaultyBackend::open_faulty`], its writes durable at completion (`O_DSYNC`) when
    /// `write_through` (which only the volatile cache tells apart).
    pub fn open_through(&self, path: &Path, write_through: bool) -> Arc<FaultyStorage> {
        let file = self.file(path);
        let st = FaultyStorage::new(file, Arc::clone(&self.shared));
        Arc::new(st.write_through(write_through))
    }

    /// A copy of a stored file's content (`None` when it does not exist).
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let files = self.shared.files.lock();
        files.get(path).map(|f| f.data.read().clone())
    }

    fn file(&self, path: &Path) -> Arc<MemFile> {
        let mut files = self.shared.files.lock();
        // A new file's (empty) size is durable at once: the model loses data, not metadata.
        let f = files
            .entry(path.to_path_buf())
            .or_insert_with(|| Arc::new(MemFile::new(path)));
        Arc::clone(f)
    }
}

impl Backend for FaultyBackend {
    fn clock(&self) -> crate::clock::Clock {
        self.shared.clock.clone()
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError> {
        if !opts.create && !self.exists(path) {
            return Err(IoError::Os {
                path: path.to_path_buf(),
                what: "cannot open",
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        Ok(self.open_through(path, opts.write_through))
    }

    fn remove(&self, path: &Path) -> Result<(), IoError> {
        self.shared.files.lock().remove(path);
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        self.shared.files.lock().contains_key(path)
    }

    /// The file moves to its new name whole, at once and durably (the model loses data, not
    /// metadata); what it holds, durable or not, moves with it.
    fn rename(&self, from: &Path, to: &Path) -> Result<(), IoError> {
        let mut files = self.shared.files.lock();
        let file = files.remove(from).ok_or_else(|| IoError::Os {
            path: from.to_path_buf(),
            what: "cannot rename",
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
        files.insert(to.to_path_buf(), file);
        Ok(())
    }

    fn create_append(&self, path: &Path) -> Result<Box<dyn AppendFile>, IoError> {
        Ok(Box::new(MemAppend::new(
            self.file(path),
            Arc::clone(&self.shared),
        )))
    }

    fn open_append(&self, path: &Path) -> Result<Box<dyn AppendFile>, IoError> {
        Ok(Box::new(MemAppend::open(
            self.file(path),
            Arc::clone(&self.shared),
        )))
    }

    fn read_whole(&self, path: &Path, _use: crate::io::safefile::Use) -> Result<Vec<u8>, IoError> {
        self.contents(path).ok_or_else(|| IoError::Os {
            path: path.to_path_buf(),
            what: "cannot read",
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })
    }

    fn direct_io_info(&self, _path: &Path) -> DirectIoInfo {
        let unit = match self.shared.dio_align.load(Ordering::Relaxed) {
            0 => crate::io::DEFAULT_DIO_ALIGN,
            unit => unit,
        };
        DirectIoInfo {
            mem_align: Some(512),
            offset_align: Some(unit),
            filesystem: "faulty (in memory)".to_string(),
            honoured: true,
            logical_block: None,
            physical_block: match self.shared.physical_sector.load(Ordering::Relaxed) {
                0 => None,
                n => Some(n),
            },
        }
    }
}
