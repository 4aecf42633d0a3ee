//! The journal thread: acknowledgements of durable writes arrive on a bounded channel (a push
//! is all the I/O path pays) and are appended in batches, each made durable with one
//! `fdatasync`, a few milliseconds after the device acknowledged them. The thread keeps the
//! replayed state of what it wrote, so it journals only news and can compact the file into a
//! snapshot of that state when the file outgrows twice the snapshot.
//!
//! When the journal cannot be written, the durability check is void from then on: the thread
//! says so once (through `warn`), tries to record it, and keeps draining the channel so
//! that no writer ever waits on a dead journal.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{bounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;

use super::summary::Status;
use super::{encode, JournalState, JournalSummary, JournalWriter, Record};
use crate::page::layout::now_us;
use crate::witness::Sender as WitnessSender;

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
    pub fn start(
        writer: JournalWriter,
        state: JournalState,
        opts: JournalOptions,
        warn: Warn,
        witness: Option<WitnessSender>,
    ) -> std::io::Result<JournalService> {
        let witness = witness.map(Arc::new);
        if let Some(w) = &witness {
            w.push_base(state.snapshot().iter().map(Record::encode));
        }
        room_for_the_channel()?;
        let (tx, rx) = bounded(CHANNEL);
        let status = Arc::new(Status::default());
        let path = writer.path().display().to_string();
        let bytes = writer.len();
        status.bytes.store(bytes, Ordering::Relaxed);
        status.max_bytes.store(bytes, Ordering::Relaxed);
        let mut t = Thread {
            writer,
            state,
            opts,
            status: Arc::clone(&status),
            warn,
            started: Instant::now(),
            next_check: opts.compact_min_bytes,
            witness: witness.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("journal".into())
            .spawn(move || t.run(&rx))?;
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

/// One batch being gathered.
#[derive(Default)]
struct Batch {
    records: Vec<Record>,
    logs: Vec<(u32, u64, u64)>,
    waiting: Vec<Sender<bool>>,
    acks: usize,
    stop: bool,
}

/// The journal thread's own state.
struct Thread {
    writer: JournalWriter,
    state: JournalState,
    opts: JournalOptions,
    status: Arc<Status>,
    warn: Warn,
    started: Instant,
    /// Size above which the snapshot size is computed again to decide on a compaction.
    next_check: u64,
    /// Where each durable batch also goes.
    witness: Option<Arc<WitnessSender>>,
}

impl Thread {
    fn run(&mut self, rx: &Receiver<Ack>) {
        loop {
            let Ok(first) = rx.recv() else {
                return;
            };
            let deadline = Instant::now() + self.opts.interval;
            let mut batch = Batch::default();
            self.add(&mut batch, first);
            while batch.waiting.is_empty() && !batch.stop && batch.acks < self.opts.max_pending {
                match rx.recv_deadline(deadline) {
                    Ok(a) => self.add(&mut batch, a),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => batch.stop = true,
                }
            }
            let stop = batch.stop;
            self.commit(batch);
            if stop {
                return;
            }
        }
    }

    /// Turns an acknowledgement into records, keeping only news (and applying them to the
    /// state, so that a later duplicate is not news).
    fn add(&mut self, b: &mut Batch, ack: Ack) {
        b.acks += 1;
        match ack {
            Ack::Pages {
                file_id,
                first,
                gens,
            } => {
                let pages: Vec<(u64, u64)> = (first..).zip(gens).collect();
                self.push(b, Record::Durable { file_id, pages });
            }
            Ack::Log {
                file_id,
                last_block,
                durable_end,
            } => Self::log(b, file_id, last_block, durable_end),
            Ack::Records { records, done } => {
                for r in records {
                    self.push(b, r);
                }
                b.waiting.push(done);
            }
            Ack::Stop => b.stop = true,
        }
    }

    /// Keeps the newest position of each log in the batch.
    fn log(b: &mut Batch, file_id: u32, last_block: u64, durable_end: u64) {
        match b.logs.iter_mut().find(|l| l.0 == file_id) {
            Some(l) => *l = (file_id, last_block, durable_end),
            None => b.logs.push((file_id, last_block, durable_end)),
        }
    }

    fn push(&mut self, b: &mut Batch, r: Record) {
        let r = match r {
            Record::Durable { file_id, pages } => {
                let pages = self.state.news(file_id, &pages);
                if pages.is_empty() {
                    return;
                }
                Record::Durable { file_id, pages }
            }
            Record::Log {
                file_id,
                last_block,
                durable_end,
            } => {
                // Log positions from a sync point go with the batch's own, in flush order.
                Self::log(b, file_id, last_block, durable_end);
                return;
            }
            other => other,
        };
        self.state.apply(&r);
        b.records.push(r);
    }

    fn commit(&mut self, mut b: Batch) {
        for (file_id, last_block, durable_end) in std::mem::take(&mut b.logs) {
            let known = self.state.log.get(file_id as usize).copied().flatten();
            // A position behind the one journaled (a flush reported late) says nothing new.
            if known.is_none_or(|(_, end)| durable_end > end) {
                let r = Record::Log {
                    file_id,
                    last_block,
                    durable_end,
                };
                self.state.apply(&r);
                b.records.push(r);
            }
        }
        let ok = self.write(super::record::coalesce_durable(b.records));
        for w in b.waiting {
            let _ = w.send(ok);
        }
        if ok {
            self.maybe_compact();
        }
    }

    /// Appends records and a mark; false when the journal is (or just became) void.
    fn write(&mut self, mut records: Vec<Record>) -> bool {
        if self.status.void.lock().is_some() {
            return false;
        }
        if records.is_empty() {
            return true;
        }
        let mark = Record::Mark {
            time_us: now_us(),
            interval_ms: u32::try_from(self.opts.interval.as_millis()).unwrap_or(u32::MAX),
            batch: self.state.last_batch + 1,
        };
        self.state.apply(&mark);
        records.push(mark);
        let bytes = encode(&records);
        match self.writer.append_bytes(&bytes) {
            Ok(()) => {
                self.status.batches.fetch_add(1, Ordering::Relaxed);
                self.sizes();
                if let Some(w) = &self.witness {
                    if w.wants_base() {
                        w.push_base(self.state.snapshot().iter().map(Record::encode));
                    } else {
                        w.push(bytes);
                    }
                }
                true
            }
            Err(e) => {
                self.void(&e);
                false
            }
        }
    }

    fn sizes(&self) {
        let len = self.writer.len();
        self.status.bytes.store(len, Ordering::Relaxed);
        self.status.max_bytes.fetch_max(len, Ordering::Relaxed);
    }

    fn void(&mut self, e: &std::io::Error) {
        let path = self.writer.path().display();
        // A journal whose device or mount went away is not a journal problem of its own: say
        // it in those terms (the run says the same of its data files when they went too).
        let reason = if crate::io::oserr::classify(e) == crate::io::oserr::ErrorClass::Gone {
            format!("the device or mount holding the journal {path} {GONE} ({e})")
        } else {
            format!("cannot write the journal {path}: {e}")
        };
        let text = format!(
            "{reason} ({:.1} s into the run): the durability check is void from now on; writes acknowledged after the last journal batch are not held to account",
            self.started.elapsed().as_secs_f64()
        );
        // Recorded if the journal still takes a small write: after ENOSPC, once the partial
        // append is cut off, the last block usually has room.
        let _ = self.writer.rollback();
        let _ = self.writer.append(&[Record::Void {
            time_us: now_us(),
            reason: reason.clone(),
        }]);
        *self.status.void.lock() = Some(text.clone());
        (self.warn)(&text);
    }

    /// Rewrites the journal as a snapshot when it grew past twice the snapshot's size.
    fn maybe_compact(&mut self) {
        let len = self.writer.len();
        if len <= self.next_check {
            return;
        }
        let snap = self.state.snapshot_len();
        let limit = (2 * snap).max(self.opts.compact_min_bytes);
        if len <= limit {
            self.next_check = limit;
            return;
        }
        let t = Instant::now();
        let snapshot = self.state.snapshot();
        match self.writer.compact(&snapshot) {
            Ok(written) => {
                if let Some(w) = &self.witness {
                    w.push_base(snapshot.iter().map(Record::encode));
                }
                let s = &self.status;
                s.snapshot_bytes.store(written, Ordering::Relaxed);
                s.compactions.fetch_add(1, Ordering::Relaxed);
                s.compaction_ns.fetch_add(
                    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX),
                    Ordering::Relaxed,
                );
                self.sizes();
                self.next_check = (2 * written).max(self.opts.compact_min_bytes);
            }
            Err(e) => {
                // The old journal is intact and still appended to; try again when it has
                // doubled, so a full disk is not hammered with snapshots.
                self.next_check = 2 * len;
                (self.warn)(&format!(
                    "cannot compact the journal {}: {e}; it keeps growing",
                    self.writer.path().display()
                ));
            }
        }
    }
}
