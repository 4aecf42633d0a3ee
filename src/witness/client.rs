//! The run's side of the witness: a [`Sender`] the journal thread hands each durable batch
//! to (a push into a bounded buffer: the run never waits for the witness), a thread that
//! connects, sends in order, reconnects and resends from the witness's last acknowledged
//! batch; and the one-shot requests of `verify` ([`fetch`], [`list`]).
//!
//! The buffer holds the batches the witness has not acknowledged. When it would overflow, its
//! batches are dropped and the journal thread is asked for a base (its snapshot, which holds
//! everything they held): the witness records the gap, the run counts it, nothing is lost
//! silently. The same happens when the witness's last batch is behind the oldest one held
//! (its directory was emptied).

mod requests;
mod thread;

pub use requests::{fetch, list};

use std::collections::VecDeque;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};
use serde::{Deserialize, Serialize};

use super::proto::{Key, BASE, GAP, MAX_CHUNK, MORE, PART};
use thread::run;

/// How long a connection attempt, a Hello and a request may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Batches written before acknowledgements are read again.
const WINDOW: usize = 64;

/// A witness base being built: encoded journal records gathered into chunks of at most
/// [`MAX_CHUNK`] bytes (a record longer than that is a chunk of its own), in order.
#[derive(Debug)]
pub struct Base {
    chunks: Vec<Vec<u8>>,
}

impl Default for Base {
    fn default() -> Base {
        Base {
            chunks: vec![Vec::new()],
        }
    }
}

impl Base {
    /// The base's bytes, its chunks joined (what the witness's record rebuilds).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    /// Appends one encoded record.
    pub fn add(&mut self, record: Vec<u8>) {
        let last = self.chunks.last_mut().expect("one chunk at least");
        if last.is_empty() {
            *last = record;
        } else if last.len() + record.len() > MAX_CHUNK {
            self.chunks.push(record);
        } else {
            last.extend_from_slice(&record);
        }
    }
}

/// Where the run's witness is and how the sender behaves.
#[derive(Debug, Clone)]
pub struct SenderOptions {
    /// `HOST:PORT` of `sqliosim witness`.
    pub addr: String,
    /// The shared token.
    pub key: Key,
    /// This host's name, as the witness records it.
    pub host: String,
    /// The run's id.
    pub run_id: u64,
    /// Most bytes of unacknowledged batches held.
    pub buffer_bytes: usize,
    /// How long the end of the run waits for the witness to acknowledge what it holds.
    pub wait_at_end: Duration,
}

/// What the witness was told and acknowledged, for the summary, the status line and the
/// metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WitnessSummary {
    /// The witness's address.
    pub addr: String,
    /// Batches handed to the sender (numbered from 1).
    pub batches: u64,
    /// The last batch the witness acknowledged as durable.
    pub acked: u64,
    /// Batches not acknowledged (at the end: what the witness never got).
    pub unacked: u64,
    /// Age of the oldest unacknowledged batch, milliseconds (the witness lag now).
    pub lag_ms: u64,
    /// Largest lag seen, milliseconds.
    pub max_lag_ms: u64,
    /// Times the buffer overflowed and a base was sent in place of the dropped batches.
    pub gaps: u64,
    /// Connections made after the first.
    pub reconnects: u64,
    /// The last error (connection, refusal), if any.
    pub error: Option<String>,
}

struct Item {
    seq: u64,
    flags: u8,
    data: Arc<Vec<u8>>,
    at: Instant,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Item>,
    bytes: usize,
    next_seq: u64,
    acked: u64,
    /// The last batch written on the current connection.
    sent: u64,
    /// The connection the reader saw die (compared with `epoch`).
    dead: u64,
    epoch: u64,
    base_wanted: bool,
    gap_pending: bool,
    stop_at: Option<Instant>,
    summary: WitnessSummary,
}

impl Queue {
    fn ack(&mut self, seq: u64) {
        self.acked = self.acked.max(seq);
        while self.pending.front().is_some_and(|i| i.seq <= seq) {
            if let Some(i) = self.pending.pop_front() {
                self.bytes -= i.data.len();
                // From the batch made durable locally to the witness's acknowledgement.
                let took = ms(i.at.elapsed());
                self.summary.max_lag_ms = self.summary.max_lag_ms.max(took);
            }
        }
        self.lag();
    }

    fn lag(&mut self) {
        let lag = self.pending.front().map_or(0, |i| ms(i.at.elapsed()));
        self.summary.lag_ms = lag;
        self.summary.max_lag_ms = self.summary.max_lag_ms.max(lag);
    }

    /// Drops every batch held and asks for a base (counted as a gap).
    fn overflow(&mut self) {
        self.pending.clear();
        self.bytes = 0;
        self.base_wanted = true;
        self.gap_pending = true;
        self.summary.gaps += 1;
    }

    fn add(&mut self, flags: u8, data: Vec<u8>) {
        self.next_seq += 1;
        self.bytes += data.len();
        self.pending.push_back(Item {
            seq: self.next_seq,
            flags,
            data: Arc::new(data),
            at: Instant::now(),
        });
        self.summary.batches = self.next_seq;
    }
}

struct Shared {
    q: Mutex<Queue>,
    cv: Condvar,
    opts: SenderOptions,
}

/// A run's connection to its witness.
pub struct Sender {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sender({})", self.shared.opts.addr)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Sender {
    /// Starts the sender's thread (it connects in the background: a witness down at the
    /// start is retried, and the run goes on).
    pub fn start(opts: SenderOptions) -> std::io::Result<Sender> {
        let shared = Arc::new(Shared {
            q: Mutex::new(Queue {
                summary: WitnessSummary {
                    addr: opts.addr.clone(),
                    ..WitnessSummary::default()
                },
                ..Queue::default()
            }),
            cv: Condvar::new(),
            opts,
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("witness".into())
            .spawn(move || run(&s))?;
        Ok(Sender {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// True when the next thing to send must be a base (the buffer overflowed, or the witness
    /// lost what it held): [`Sender::push`] ignores batches until [`Sender::push_base`].
    pub fn wants_base(&self) -> bool {
        self.shared.q.lock().base_wanted
    }

    /// Hands over a batch made durable locally (its journal records, encoded).
    pub fn push(&self, data: Vec<u8>) {
        let mut q = self.shared.q.lock();
        if q.base_wanted || q.stop_at.is_some() {
            return;
        }
        if q.bytes + data.len() > self.shared.opts.buffer_bytes {
            q.overflow();
            return;
        }
        q.add(0, data);
        drop(q);
        self.shared.cv.notify_all();
    }

    /// Hands over a base: the journal's snapshot, encoded as `records` (whole records, sent
    /// in chunks of at most [`MAX_CHUNK`] bytes). It replaces every batch still held.
    pub fn push_base(&self, records: impl IntoIterator<Item = Vec<u8>>) {
        let mut base = Base::default();
        for r in records {
            base.add(r);
        }
        self.send_base(base);
    }

    /// Hands over a base built record by record ([`Base::add`]), as [`Sender::push_base`]
    /// does: the journal thread encodes its snapshot into one as it walks it, so that no list
    /// of the snapshot's records is held beside the encoded base (16 bytes a journaled page).
    pub fn send_base(&self, base: Base) {
        let chunks = base.chunks;
        let mut q = self.shared.q.lock();
        if q.stop_at.is_some() {
            return;
        }
        q.pending.clear();
        q.bytes = 0;
        let n = chunks.len();
        let gap = std::mem::take(&mut q.gap_pending);
        for (i, c) in chunks.into_iter().enumerate() {
            let mut flags = if i == 0 { BASE } else { PART };
            if i + 1 < n {
                flags |= MORE;
            }
            if i == 0 && gap {
                flags |= GAP;
            }
            q.add(flags, c);
        }
        q.base_wanted = false;
        drop(q);
        self.shared.cv.notify_all();
    }

    /// What was sent and acknowledged so far.
    pub fn summary(&self) -> WitnessSummary {
        let mut q = self.shared.q.lock();
        q.lag();
        q.summary.acked = q.acked;
        q.summary.unacked = q.pending.len() as u64;
        q.summary.clone()
    }

    /// Waits, at most the configured time, until the witness acknowledged everything, then
    /// ends the thread; the summary says what remains (idempotent).
    pub fn finish(&self) -> WitnessSummary {
        {
            let mut q = self.shared.q.lock();
            if q.stop_at.is_none() {
                q.stop_at = Some(Instant::now() + self.shared.opts.wait_at_end);
            }
        }
        self.shared.cv.notify_all();
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
        self.summary()
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.finish();
    }
}

/// This host's name (for the witness's record).
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .chars()
        .filter(|c| !c.is_control())
        .take(super::proto::MAX_HOST)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Base, MAX_CHUNK};

    #[test]
    fn a_base_packs_whole_records_into_chunks_of_at_most_max_chunk_bytes() {
        let mut b = Base::default();
        let third = MAX_CHUNK / 3;
        for fill in 0..4u8 {
            b.add(vec![fill; third]);
        }
        let big = vec![9u8; MAX_CHUNK + 1];
        b.add(big.clone());
        b.add(vec![7u8; 10]);
        let lens: Vec<usize> = b.chunks.iter().map(Vec::len).collect();
        assert_eq!(lens, [3 * third, third, MAX_CHUNK + 1, 10]);
        // In order, whole: the chunks joined are the records joined.
        let joined: Vec<u8> = b.chunks.concat();
        let mut want = Vec::new();
        for fill in 0..4u8 {
            want.extend(vec![fill; third]);
        }
        want.extend(big);
        want.extend([7u8; 10]);
        assert_eq!(joined, want);
    }
}
