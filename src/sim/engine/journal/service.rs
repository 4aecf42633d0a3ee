//! The journal thread: acknowledgements of durable writes arrive on a bounded channel (a push
//! is all the I/O path pays) and are appended in batches, each made durable with one
//! `fdatasync`, a few milliseconds after the device acknowledged them. The thread keeps the
//! replayed state of what it wrote, so it journals only news and can compact the file into a
//! snapshot of that state when the file outgrows twice the snapshot.
//!
//! When the journal cannot be written, the durability check is void from then on: the thread
//! says so once (through `warn`), tries to record it, and keeps draining the channel so
//! that no writer ever waits on a dead journal.
//!
//! This file is the service's side (the channel, its options, its summary); the thread's own
//! loop, its batches, its void and its compaction are in `thread`.

mod live;
mod thread;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::sync::Mutex;
use crossbeam::channel::{bounded, Sender};

use super::summary::Status;
use super::{JournalState, JournalSummary, JournalWriter, Record};
use crate::sim::engine::oracle::Oracle;
use crate::witness::Sender as WitnessSender;
use live::Live;
use thread::Thread;

/// How a void journal's reason says that its device or mount went away.
pub const GONE: &str = "went away";

/// Acknowledgements in the channel before a writer waits for the journal thread.
const CHANNEL: usize = 1 << 16;

/// Checks that the channel's slots (a few MiB, allocated at once by crossbeam, which cannot
/// fail softly) can be allocated: under a memory limit the run then says which allocation
/// the limit refused (exit 2) instead of aborting in the allocation-failure handler (134).
fn room_for_the_channel() -> std::io::Result<()> {
    let bytes = CHANNEL * (std::mem::size_of::<Ack>() + std::mem::size_of::<usize>());
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!(
                "cannot allocate its queue of {CHANNEL} acknowledgements ({bytes} bytes): raise the memory limit (ulimit -v)"
            ),
        )
    })
}

/// Something the journal must record.
#[derive(Debug)]
pub enum Ack {
    /// `O_DSYNC` writes of pages `first..` completed with these generations.
    Pages {
        /// File id.
        file_id: u32,
        /// First page.
        first: u64,
        /// Generation of each page from `first`.
        gens: Vec<u64>,
    },
    /// The log is durable up to here.
    Log {
        /// File id of the log.
        file_id: u32,
        /// LSN of the last durable block.
        last_block: u64,
        /// End of the durable log.
        durable_end: u64,
    },
    /// Records to append in order (sync points, resizes, the end); `done` hears whether they
    /// are durable.
    Records {
        /// The records.
        records: Vec<Record>,
        /// Told true once they are durable, false when the journal is void.
        done: Sender<bool>,
    },
    /// Write what is pending and end the thread.
    Stop,
}

/// How the journal thread batches and compacts.
#[derive(Debug, Clone, Copy)]
pub struct JournalOptions {
    /// Longest time an acknowledgement waits before its batch is written.
    pub interval: Duration,
    /// A batch is written as soon as this many acknowledgements are pending.
    pub max_pending: usize,
    /// The journal is never compacted below this size.
    pub compact_min_bytes: u64,
}

impl Default for JournalOptions {
    fn default() -> JournalOptions {
        JournalOptions {
            interval: Duration::from_millis(10),
            max_pending: 4096,
            compact_min_bytes: 1 << 20,
        }
    }
}

/// The running journal: a channel into its thread.
#[derive(Debug)]
pub struct JournalService {
    tx: Sender<Ack>,
    thread: Mutex<Option<JoinHandle<()>>>,
    status: Arc<Status>,
    path: String,
    interval: Duration,
    witness: Option<Arc<WitnessSender>>,
}

/// Told, with a sentence, when the journal stops being written (once) or cannot be compacted.
pub type Warn = Box<dyn Fn(&str) + Send>;

impl JournalService {
    /// Starts the thread over a journal just created (its Start record written). With a
    /// witness, every batch made durable also goes to it, after a base (the state as it is
    /// now, what the journal was created with); a compaction's snapshot goes as a new base,
    /// so the witness's record stays as small as the journal.
    ///
    /// The state's durable generations move into `oracles` (the run's, by file id), where the
    /// thread keeps them from then on (see `live`).
    pub fn start(
        writer: JournalWriter,
        state: JournalState,
        oracles: Vec<Arc<Oracle>>,
        opts: JournalOptions,
        warn: Warn,
        witness: Option<WitnessSender>,
    ) -> std::io::Result<JournalService> {
        let state = Live::new(state, oracles);
        let witness = witness.map(Arc::new);
        if let Some(w) = &witness {
            w.send_base(state.base());
        }
        room_for_the_channel()?;
        let (tx, rx) = bounded(CHANNEL);
        let status = Arc::new(Status::default());
        let path = writer.path().display().to_string();
        let bytes = writer.len();
        status.bytes.store(bytes, Ordering::Relaxed);
        status.max_bytes.store(bytes, Ordering::Relaxed);
        let mut t = Thread::new(
            writer,
            state,
            opts,
            Arc::clone(&status),
            warn,
            witness.clone(),
        );
        let clock = crate::clock::hand_on();
        let thread = std::thread::Builder::new()
            .name("journal".into())
            .spawn(move || {
                let _clock = clock.enter();
                t.run(&rx)
            })?;
        Ok(JournalService {
            tx,
            thread: Mutex::new(Some(thread)),
            status,
            path,
            interval: opts.interval,
            witness,
        })
    }

    /// A sender for hooks (the log's flush hook).
    pub fn sender(&self) -> Sender<Ack> {
        self.tx.clone()
    }

    /// Queues an acknowledgement (never fails: after the end it is dropped).
    pub fn ack(&self, ack: Ack) {
        let _ = self.tx.send(ack);
    }

    /// Appends `records` after every acknowledgement queued before them and waits until
    /// they are durable; false when the journal is void (or gone).
    pub fn commit(&self, records: Vec<Record>) -> bool {
        let (done, wait) = bounded(1);
        if self.tx.send(Ack::Records { records, done }).is_err() {
            return false;
        }
        wait.recv().unwrap_or(false)
    }

    /// Writes what is pending and ends the thread; then waits (bounded) for the witness to
    /// acknowledge what it was sent, and says what it never got (idempotent).
    pub fn finish(&self) {
        let _ = self.tx.send(Ack::Stop);
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
            // What the witness never got is in the summary (the console's journal line, the
            // JSON): the end of the run says it there.
            if let Some(w) = &self.witness {
                w.finish();
            }
        }
    }

    /// With a witness: the batches it has not acknowledged and the oldest one's age, ms.
    pub fn witness_lag(&self) -> Option<(u64, u64)> {
        self.witness.as_ref().map(|w| {
            let s = w.summary();
            (s.unacked, s.lag_ms)
        })
    }

    /// True once the journal could not be written.
    pub fn is_void(&self) -> bool {
        self.status.void.lock().is_some()
    }

    /// What the journal did so far.
    pub fn summary(&self) -> JournalSummary {
        let s = &self.status;
        JournalSummary {
            path: self.path.clone(),
            bytes: s.bytes.load(Ordering::Relaxed),
            max_bytes: s.max_bytes.load(Ordering::Relaxed),
            snapshot_bytes: s.snapshot_bytes.load(Ordering::Relaxed),
            compactions: s.compactions.load(Ordering::Relaxed),
            compaction_ms: s.compaction_ns.load(Ordering::Relaxed) as f64 / 1e6,
            batches: s.batches.load(Ordering::Relaxed),
            batch_interval_ms: u64::try_from(self.interval.as_millis()).unwrap_or(u64::MAX),
            void: s.void.lock().clone(),
            witness: self.witness.as_ref().map(|w| w.summary()),
        }
    }
}

impl Drop for JournalService {
    fn drop(&mut self) {
        self.finish();
    }
}
