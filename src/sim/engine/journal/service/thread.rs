//! The journal thread itself: acknowledgements gathered into a batch (only news kept, each
//! log's newest position), the batch appended with its numbered mark and made durable, handed
//! to the witness, the journal made void when it cannot be written, and compacted when it
//! outgrows twice its snapshot.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crossbeam::channel::{Receiver, RecvTimeoutError, Sender};

use super::live::Live;
use super::{Ack, JournalOptions, Warn, GONE};
use crate::page::layout::now_us;
use crate::sim::engine::journal::summary::Status;
use crate::sim::engine::journal::{encode, record, JournalWriter, Record};
use crate::witness::Sender as WitnessSender;

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
pub(super) struct Thread {
    writer: JournalWriter,
    state: Live,
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
    /// The thread's state over `writer` and the replayed `state` it holds, started now.
    pub(super) fn new(
        writer: JournalWriter,
        state: Live,
        opts: JournalOptions,
        status: Arc<Status>,
        warn: Warn,
        witness: Option<Arc<WitnessSender>>,
    ) -> Thread {
        Thread {
            writer,
            state,
            opts,
            status,
            warn,
            started: crate::clock::now(),
            next_check: opts.compact_min_bytes,
            witness,
        }
    }

    pub(super) fn run(&mut self, rx: &Receiver<Ack>) {
        loop {
            let Ok(first) = rx.recv() else {
                return;
            };
            let deadline = crate::clock::now() + self.opts.interval;
            let mut batch = Batch::default();
            self.add(&mut batch, first);
            while batch.waiting.is_empty() && !batch.stop && batch.acks < self.opts.max_pending {
                match crate::clock::recv_deadline(rx, deadline) {
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
            let known = self
                .state
                .state
                .log
                .get(file_id as usize)
                .copied()
                .flatten();
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
        let ok = self.write(record::coalesce_durable(b.records));
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
            batch: self.state.state.last_batch + 1,
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
                        w.send_base(self.state.base());
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
            crate::clock::since(self.started).as_secs_f64()
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
        let t = crate::clock::now();
        let state = &self.state;
        match self
            .writer
            .compact_from(&mut |emit| state.each_snapshot_record(&mut |r| emit(&r)))
        {
            Ok(written) => {
                if let Some(w) = &self.witness {
                    w.send_base(self.state.base());
                }
                let s = &self.status;
                s.snapshot_bytes.store(written, Ordering::Relaxed);
                s.compactions.fetch_add(1, Ordering::Relaxed);
                s.compaction_ns.fetch_add(
                    u64::try_from(crate::clock::since(t).as_nanos()).unwrap_or(u64::MAX),
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
