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

use std::collections::VecDeque;
use std::io::BufWriter;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde::{Deserialize, Serialize};

use super::proto::{read_msg, write_msg, Key, Msg, RunInfo, BASE, GAP, MAX_CHUNK, MORE, PART};

/// How long a connection attempt, a Hello and a request may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Batches written before acknowledgements are read again.
const WINDOW: usize = 64;
/// Most bytes of a fetched record (the journal's own bound).
const MAX_RECORD: usize = 256 << 20;

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
        let mut chunks: Vec<Vec<u8>> = vec![Vec::new()];
        for r in records {
            let last = chunks.last_mut().expect("one chunk at least");
            if !last.is_empty() && last.len() + r.len() > MAX_CHUNK {
                chunks.push(r);
            } else {
                last.extend_from_slice(&r);
            }
        }
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

/// The sender thread: connect, send what the witness has not got, let the reader take the
/// acknowledgements; on any failure, reconnect with a growing pause.
fn run(s: &Arc<Shared>) {
    let mut conn: Option<(BufWriter<TcpStream>, u64)> = None;
    let mut backoff = Duration::from_millis(50);
    let mut connected_once = false;
    loop {
        let batch: Vec<(u64, u8, Arc<Vec<u8>>)> = {
            let mut q = s.q.lock();
            loop {
                if let Some(at) = q.stop_at {
                    if q.pending.is_empty() || Instant::now() >= at {
                        if let Some((w, _)) = &conn {
                            let _ = w.get_ref().shutdown(Shutdown::Both);
                        }
                        return;
                    }
                }
                if conn.as_ref().is_some_and(|(_, e)| q.dead >= *e) {
                    conn = None;
                }
                let unsent = q.pending.back().is_some_and(|i| i.seq > q.sent);
                if conn.is_none() && !q.pending.is_empty() || conn.is_some() && unsent {
                    break;
                }
                s.cv.wait_for(&mut q, Duration::from_millis(100));
            }
            if conn.is_some() {
                let sent = q.sent;
                q.pending
                    .iter()
                    .filter(|i| i.seq > sent)
                    .take(WINDOW)
                    .map(|i| (i.seq, i.flags, Arc::clone(&i.data)))
                    .collect()
            } else {
                Vec::new()
            }
        };
        let Some((w, _)) = conn.as_mut() else {
            match connect(s) {
                Ok(c) => {
                    if connected_once {
                        s.q.lock().summary.reconnects += 1;
                    }
                    connected_once = true;
                    backoff = Duration::from_millis(50);
                    conn = Some(c);
                }
                Err(e) => {
                    let mut q = s.q.lock();
                    q.summary.error = Some(e);
                    s.cv.wait_for(&mut q, backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
            continue;
        };
        let key = &s.opts.key;
        let mut failed = None;
        let mut last = None;
        for (seq, flags, data) in &batch {
            let m = Msg::Batch {
                run_id: s.opts.run_id,
                seq: *seq,
                flags: *flags,
                data: data.to_vec(),
            };
            if let Err(e) = write_msg(w, key, &m) {
                failed = Some(e.to_string());
                break;
            }
            last = Some(*seq);
        }
        let mut q = s.q.lock();
        if let Some(seq) = last {
            q.sent = q.sent.max(seq);
        }
        if let Some(e) = failed {
            q.summary.error = Some(format!("{}: {e}", s.opts.addr));
            conn = None;
        }
    }
}

/// Connects, says Hello, and starts the reader of acknowledgements; returns the writer and
/// the connection's number.
fn connect(s: &Arc<Shared>) -> Result<(BufWriter<TcpStream>, u64), String> {
    let o = &s.opts;
    let stream = open(&o.addr)?;
    let mut w = BufWriter::new(stream.try_clone().map_err(|e| e.to_string())?);
    let mut r = stream;
    write_msg(
        &mut w,
        &o.key,
        &Msg::Hello {
            run_id: o.run_id,
            host: o.host.clone(),
        },
    )
    .map_err(|e| format!("{}: {e}", o.addr))?;
    let last = match read_msg(&mut r, &o.key) {
        Ok(Msg::Ack { seq }) => seq,
        Ok(Msg::Error { text }) => return Err(format!("{}: refused: {text}", o.addr)),
        Ok(other) => return Err(format!("{}: not a witness's answer: {other:?}", o.addr)),
        Err(e) => return Err(format!("{}: {e}", o.addr)),
    };
    let _ = r.set_read_timeout(None);
    let epoch = {
        let mut q = s.q.lock();
        if q.epoch == 0 && last > 0 {
            // The witness already holds this run (a resumed run, a restarted host): this
            // sender's numbers go on after its record's last, and its first batch is a base.
            for i in &mut q.pending {
                i.seq += last;
            }
            q.next_seq += last;
        }
        q.ack(last);
        // The witness holds less than the oldest batch held here (its directory was emptied,
        // or it is another witness): only a base can make its record whole again.
        let first = q.pending.front().map(|i| (i.seq, i.flags));
        if let Some((seq, flags)) = first {
            if seq > last + 1 && flags & BASE == 0 && !q.base_wanted {
                q.overflow();
            }
        }
        q.sent = last;
        q.epoch += 1;
        q.epoch
    };
    let sh = Arc::clone(s);
    std::thread::Builder::new()
        .name("witness-acks".into())
        .spawn(move || loop {
            match read_msg(&mut r, &sh.opts.key) {
                Ok(Msg::Ack { seq }) => {
                    sh.q.lock().ack(seq);
                    sh.cv.notify_all();
                }
                other => {
                    let mut q = sh.q.lock();
                    let ended = q.stop_at.is_some() && q.pending.is_empty();
                    q.dead = q.dead.max(epoch);
                    if ended {
                        // The sender closed the connection at the end: not an error.
                        return;
                    }
                    q.summary.error = Some(match other {
                        Ok(Msg::Error { text }) => format!("{}: refused: {text}", sh.opts.addr),
                        Ok(m) => format!("{}: unexpected {m:?}", sh.opts.addr),
                        Err(e) => format!("{}: {e}", sh.opts.addr),
                    });
                    drop(q);
                    let _ = r.shutdown(Shutdown::Both);
                    sh.cv.notify_all();
                    return;
                }
            }
        })
        .map_err(|e| format!("cannot start the witness reader thread: {e}"))?;
    Ok((w, epoch))
}

/// A connection to `addr`, with the request timeouts set.
fn open(addr: &str) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .collect();
    let mut last = format!("{addr}: no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, TIMEOUT) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                let _ = s.set_read_timeout(Some(TIMEOUT));
                let _ = s.set_write_timeout(Some(TIMEOUT));
                return Ok(s);
            }
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    Err(last)
}

/// The witness's record of `run_id` (journal records; `None`: it holds none) and its last
/// batch.
pub fn fetch(addr: &str, key: &Key, run_id: u64) -> anyhow::Result<Option<(Vec<u8>, u64)>> {
    let mut s = open(addr).map_err(|e| anyhow::anyhow!("witness {e}"))?;
    // Each read waits at most TIMEOUT; a record of many chunks takes longer in all.
    write_msg(&mut s, key, &Msg::Fetch { run_id })
        .map_err(|e| anyhow::anyhow!("witness {addr}: {e}"))?;
    let mut data = Vec::new();
    loop {
        match read_msg(&mut s, key) {
            Ok(Msg::Data { data: d }) => {
                if data.len() + d.len() > MAX_RECORD {
                    anyhow::bail!(
                        "witness {addr}: the record of run {run_id:016x} is larger than {MAX_RECORD} bytes"
                    );
                }
                data.extend_from_slice(&d);
            }
            Ok(Msg::Ack { seq }) => {
                return Ok((seq != 0 || !data.is_empty()).then_some((data, seq)));
            }
            Ok(Msg::Error { text }) => anyhow::bail!("witness {addr} refused: {text}"),
            Ok(m) => anyhow::bail!("witness {addr}: unexpected answer {m:?}"),
            Err(e) => anyhow::bail!("witness {addr}: {e}"),
        }
    }
}

/// The runs the witness holds.
pub fn list(addr: &str, key: &Key) -> anyhow::Result<Vec<RunInfo>> {
    let mut s = open(addr).map_err(|e| anyhow::anyhow!("witness {e}"))?;
    write_msg(&mut s, key, &Msg::List).map_err(|e| anyhow::anyhow!("witness {addr}: {e}"))?;
    match read_msg(&mut s, key) {
        Ok(Msg::Listed { runs }) => Ok(runs),
        Ok(Msg::Error { text }) => anyhow::bail!("witness {addr} refused: {text}"),
        Ok(m) => anyhow::bail!("witness {addr}: unexpected answer {m:?}"),
        Err(e) => anyhow::bail!("witness {addr}: {e}"),
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
