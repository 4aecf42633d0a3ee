//! `sqliosim witness`: the off-host witness's server (the protocol is `crate::witness`).
//!
//! It keeps, per run id, one append-only record file in `--dir` (`RUNID.witness`): a header
//! (magic, run id, host, gaps) and entries (batch number, flags, length, CRC-32, journal
//! records). A batch is appended and fdatasync'd before it is acknowledged; a base (the
//! journal's snapshot) is written to a fresh temporary, synced and renamed over the record,
//! so the record stays as small as the run's own journal and a crash leaves the old record or
//! the new one. Files are created and opened only through the safe-file door, relative to the
//! directory's descriptor, without following a planted name.
//!
//! What it refuses, without writing: a frame whose HMAC fails (a wrong token), one longer than
//! the protocol's bound, a message that is not one, records that are not whole journal
//! records, a base whose Start names another run, a Start outside a base, a batch that does
//! not follow the last one (without a base), a run id other than the one the connection said
//! Hello for, and a run id already reported by another host. Listening on anything but
//! loopback without `--token-file` is refused (exit 2).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::exit::Outcome;
use crate::io::safefile::{Create, Dir, Use};
use crate::sim::engine::journal::{decode, Record};
use crate::witness::proto::{
    read_msg, write_msg, Key, Msg, ProtoError, RunInfo, BASE, GAP, MAX_CHUNK, MORE, PART,
};

pub use crate::cli::WitnessArgs;

const MAGIC: [u8; 8] = *b"SQLSIMWT";
const VERSION: u32 = 1;
/// Entry header: seq u64, flags u8, len u32, crc u32.
const ENTRY: usize = 17;
/// Most bytes of a record file (the journal's bound, and the entries' headers).
const MAX_RECORD_FILE: u64 = 512 << 20;
/// Connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 1024;
/// A connection that says nothing for this long is closed.
const IDLE: Duration = Duration::from_secs(300);

/// Runs `sqliosim witness`.
pub fn run(a: &WitnessArgs) -> anyhow::Result<Outcome> {
    let dir = Dir::open(&a.dir).map_err(|e| anyhow::anyhow!("--dir: {e}"))?;
    if a.list {
        return list(&dir);
    }
    let key = match &a.token_file {
        Some(p) => Key::from_file(p)?,
        None => Key::none(),
    };
    let listen = a.listen.as_deref().unwrap_or_default();
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("--listen {listen}: {e} (give HOST:PORT)"))?
        .collect();
    let Some(addr) = addrs.first().copied() else {
        anyhow::bail!("--listen {listen}: no address");
    };
    if key.is_none() && !addr.ip().is_loopback() {
        anyhow::bail!(
            "--listen {listen}: listening on {} without --token-file is refused: anyone who reaches it could write a run's record. Give --token-file FILE (the same file to each run's --witness-token-file), or listen on 127.0.0.1",
            addr.ip()
        );
    }
    let listener =
        TcpListener::bind(addr).map_err(|e| anyhow::anyhow!("--listen {listen}: {e}"))?;
    let store = Arc::new(Store {
        dir,
        runs: Mutex::new(HashMap::new()),
    });
    crate::exit::outln!(
        "sqliosim witness: listening on {}, records in {}{}",
        listener.local_addr().map_or(addr, |a| a),
        a.dir.display(),
        if key.is_none() {
            " (no token: loopback only)"
        } else {
            ""
        }
    )?;
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
            say(&stream, "refused: too many connections");
            continue;
        }
        open.fetch_add(1, Ordering::Relaxed);
        let (store, key, count) = (Arc::clone(&store), key.clone(), Arc::clone(&open));
        let spawned = std::thread::Builder::new()
            .name("witness-conn".into())
            .spawn(move || {
                serve(stream, &store, &key);
                count.fetch_sub(1, Ordering::Relaxed);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::Relaxed);
        }
    }
    Ok(Outcome::Clean)
}

fn say(stream: &TcpStream, what: &str) {
    let peer = stream
        .peer_addr()
        .map_or_else(|_| "?".to_string(), |p| p.to_string());
    crate::exit::errln!("sqliosim witness: {peer}: {what}");
}

/// The records, and the runs being written.
struct Store {
    dir: Dir,
    runs: Mutex<HashMap<u64, Arc<Mutex<RunRec>>>>,
}

/// One run's record.
struct RunRec {
    run_id: u64,
    host: String,
    /// The committed record (none before its first base).
    file: Option<File>,
    len: u64,
    last_seq: u64,
    gaps: u64,
    /// The gaps a base being received records.
    base_gaps: u64,
    /// A base being received: its temporary's name and file, last chunk, bytes.
    temp: Option<(OsString, File, u64)>,
}

fn name_of(run_id: u64) -> OsString {
    format!("{run_id:016x}.witness").into()
}

fn header(run_id: u64, host: &str, gaps: u64) -> Vec<u8> {
    let mut v = MAGIC.to_vec();
    v.extend_from_slice(&VERSION.to_le_bytes());
    v.extend_from_slice(&run_id.to_le_bytes());
    v.extend_from_slice(&gaps.to_le_bytes());
    let h = &host.as_bytes()[..host.len().min(255)];
    v.push(h.len() as u8);
    v.extend_from_slice(h);
    v
}

fn entry(seq: u64, flags: u8, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(ENTRY + data.len());
    v.extend_from_slice(&seq.to_le_bytes());
    v.push(flags);
    // A chunk is at most MAX_CHUNK bytes (the frame's bound).
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&v);
    h.update(data);
    v.extend_from_slice(&h.finalize().to_le_bytes());
    v.extend_from_slice(data);
    v
}

/// A record file, read: header fields, the entries' journal bytes, the last batch and the
/// length of what is whole (a torn last entry, a crash while appending, is after it).
struct Parsed {
    run_id: u64,
    host: String,
    gaps: u64,
    data: Vec<u8>,
    last_seq: u64,
    whole: u64,
}

fn parse(b: &[u8]) -> Option<Parsed> {
    if b.len() < 29 || b[..8] != MAGIC || b[8..12] != VERSION.to_le_bytes() {
        return None;
    }
    let u64_at = |i: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(a)
    };
    let run_id = u64_at(12);
    let gaps = u64_at(20);
    let hl = usize::from(b[28]);
    let host = String::from_utf8(b.get(29..29 + hl)?.to_vec()).ok()?;
    let mut at = 29 + hl;
    let mut p = Parsed {
        run_id,
        host,
        gaps,
        data: Vec::new(),
        last_seq: 0,
        whole: at as u64,
    };
    while let Some(h) = b.get(at..at + ENTRY) {
        let seq = u64_at(at);
        let len = u32::from_le_bytes([h[9], h[10], h[11], h[12]]) as usize;
        let crc = u32::from_le_bytes([h[13], h[14], h[15], h[16]]);
        let Some(data) = b.get(at + ENTRY..at + ENTRY + len) else {
            break;
        };
        let mut c = crc32fast::Hasher::new();
        c.update(&h[..13]);
        c.update(data);
        if c.finalize() != crc {
            break;
        }
        p.data.extend_from_slice(data);
        p.last_seq = seq;
        at += ENTRY + len;
        p.whole = at as u64;
    }
    Some(p)
}

/// Reads the record file `name` (bounded).
fn read_record(dir: &Dir, name: &OsStr) -> anyhow::Result<Option<Parsed>> {
    let Some(f) = dir.open_read(name, Use::Own)? else {
        return Ok(None);
    };
    let len = f.metadata()?.len();
    if len > MAX_RECORD_FILE {
        anyhow::bail!(
            "{}: {len} bytes, more than a record may hold ({MAX_RECORD_FILE})",
            dir.join(name).display()
        );
    }
    let mut b = Vec::new();
    f.take(MAX_RECORD_FILE).read_to_end(&mut b)?;
    parse(&b)
        .map(Some)
        .ok_or_else(|| anyhow::anyhow!("{}: not a witness record", dir.join(name).display()))
}

/// A run is written only by the host that reported it first.
fn same_host(run_id: u64, recorded: &str, host: Option<&str>) -> anyhow::Result<()> {
    match host {
        Some(h) if h != recorded => {
            anyhow::bail!("run {run_id:016x} is reported by host {recorded}; refusing it from {h}")
        }
        _ => Ok(()),
    }
}

impl Store {
    /// The record of `run_id`, loaded (cut after its last whole entry) or new.
    fn get(&self, run_id: u64, host: Option<&str>) -> anyhow::Result<Arc<Mutex<RunRec>>> {
        let mut runs = self.runs.lock();
        if let Some(r) = runs.get(&run_id) {
            let r = Arc::clone(r);
            drop(runs);
            same_host(run_id, &r.lock().host, host)?;
            return Ok(r);
        }
        let name = name_of(run_id);
        let rec = match read_record(&self.dir, &name)? {
            Some(p) => {
                if p.run_id != run_id {
                    anyhow::bail!(
                        "{}: holds run {:016x}",
                        self.dir.join(&name).display(),
                        p.run_id
                    );
                }
                same_host(run_id, &p.host, host)?;
                let file = self.dir.open_file(&name, Create::Existing, Use::Own)?;
                if file.metadata()?.len() > p.whole {
                    file.set_len(p.whole)?;
                    file.sync_data()?;
                }
                RunRec {
                    run_id,
                    host: p.host,
                    file: Some(file),
                    len: p.whole,
                    last_seq: p.last_seq,
                    gaps: p.gaps,
                    base_gaps: p.gaps,
                    temp: None,
                }
            }
            None => {
                let Some(h) = host else {
                    anyhow::bail!("no record of run {run_id:016x}");
                };
                RunRec {
                    run_id,
                    host: h.to_string(),
                    file: None,
                    len: 0,
                    last_seq: 0,
                    gaps: 0,
                    base_gaps: 0,
                    temp: None,
                }
            }
        };
        let r = Arc::new(Mutex::new(rec));
        runs.insert(run_id, Arc::clone(&r));
        Ok(r)
    }
}

impl RunRec {
    /// Takes a batch; the sequence number to acknowledge, if any (a base's chunks before
    /// its last are not acknowledged). Nothing is written for a refused batch.
    fn take(&mut self, dir: &Dir, seq: u64, flags: u8, data: &[u8]) -> anyhow::Result<Option<u64>> {
        if flags & (BASE | PART) == 0 && seq <= self.last_seq {
            return Ok(Some(self.last_seq));
        }
        check_records(self.run_id, flags, data)?;
        if flags & BASE != 0 {
            if seq <= self.last_seq {
                anyhow::bail!(
                    "a base numbered {seq}, not after the last batch {}",
                    self.last_seq
                );
            }
            if let Some((name, _, _)) = self.temp.take() {
                let _ = dir.unlink(&name);
            }
            let gaps = self.gaps + u64::from(flags & GAP != 0);
            self.base_gaps = gaps;
            let (name, mut f) = dir.new_temp(
                &OsString::from(format!(".{:016x}.witness.", self.run_id)),
                "",
                0o600,
            )?;
            f.write_all(&header(self.run_id, &self.host, gaps))?;
            f.write_all(&entry(seq, flags, data))?;
            self.temp = Some((name, f, seq));
        } else if flags & PART != 0 {
            match &mut self.temp {
                Some((_, f, last)) if *last + 1 == seq => {
                    f.write_all(&entry(seq, flags, data))?;
                    *last = seq;
                }
                _ => anyhow::bail!("part {seq} of a base whose start was not received"),
            }
        } else {
            let Some(f) = self.file.as_mut() else {
                anyhow::bail!("batch {seq} before the run's first base");
            };
            if seq != self.last_seq + 1 {
                anyhow::bail!("batch {seq} after batch {} without a base", self.last_seq);
            }
            let e = entry(seq, flags, data);
            f.seek(SeekFrom::Start(self.len))?;
            f.write_all(&e)?;
            f.sync_data()?;
            self.len += e.len() as u64;
            self.last_seq = seq;
            return Ok(Some(seq));
        }
        if flags & MORE != 0 {
            return Ok(None);
        }
        // The base's last chunk: durable, then in place of the record.
        let Some((name, f, last)) = self.temp.take() else {
            anyhow::bail!("a base without its start");
        };
        f.sync_all()?;
        dir.rename(&name, &name_of(self.run_id))?;
        dir.sync()?;
        self.len = f.metadata()?.len();
        self.file = Some(f);
        self.last_seq = last;
        self.gaps = self.base_gaps;
        Ok(Some(last))
    }
}

/// The batch's bytes must be whole journal records; a base's first chunk begins with the
/// Start of this run, and no other batch holds a Start.
fn check_records(run_id: u64, flags: u8, data: &[u8]) -> anyhow::Result<()> {
    let d = decode(data);
    if let Some(dmg) = d.damage {
        anyhow::bail!("records that are not whole journal records ({dmg})");
    }
    let first_start = flags & BASE != 0;
    for (i, r) in d.records.iter().enumerate() {
        if let Record::Start { run_id: id, .. } = r {
            if !(first_start && i == 0) {
                anyhow::bail!("a Start record outside the start of a base");
            }
            if *id != run_id {
                anyhow::bail!("a base of run {id:016x} sent for run {run_id:016x}");
            }
        }
    }
    if first_start && !matches!(d.records.first(), Some(Record::Start { .. })) {
        anyhow::bail!("a base that does not begin with its Start record");
    }
    Ok(())
}

/// Serves one connection until it closes or is refused.
fn serve(stream: TcpStream, store: &Store, key: &Key) {
    let _ = stream.set_read_timeout(Some(IDLE));
    let _ = stream.set_write_timeout(Some(IDLE));
    let _ = stream.set_nodelay(true);
    let Ok(r) = stream.try_clone() else { return };
    let mut r = BufReader::new(r);
    let mut w = BufWriter::new(&stream);
    let mut bound: Option<(u64, Arc<Mutex<RunRec>>)> = None;
    loop {
        let msg = match read_msg(&mut r, key) {
            Ok(m) => m,
            Err(ProtoError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return,
            Err(e) => {
                say(
                    &stream,
                    &format!("refused: {e}; connection closed, nothing written"),
                );
                return;
            }
        };
        let answer: anyhow::Result<Vec<Msg>> = match msg {
            Msg::Hello { run_id, host } => store.get(run_id, Some(&host)).map(|rec| {
                let last = rec.lock().last_seq;
                bound = Some((run_id, rec));
                vec![Msg::Ack { seq: last }]
            }),
            Msg::Batch {
                run_id,
                seq,
                flags,
                data,
            } => match &bound {
                Some((id, rec)) if *id == run_id => rec
                    .lock()
                    .take(&store.dir, seq, flags, &data)
                    .map(|a| a.map(|seq| Msg::Ack { seq }).into_iter().collect()),
                Some((id, _)) => Err(anyhow::anyhow!(
                    "a batch for run {run_id:016x} on the connection of run {id:016x}"
                )),
                None => Err(anyhow::anyhow!("a batch before Hello")),
            },
            Msg::Fetch { run_id } => fetch(store, run_id),
            Msg::List => list_runs(&store.dir).map(|runs| vec![Msg::Listed { runs }]),
            other => Err(anyhow::anyhow!(
                "a message a witness does not take ({})",
                kind(&other)
            )),
        };
        match answer {
            Ok(msgs) => {
                for m in msgs {
                    if write_msg(&mut w, key, &m).is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                let text = format!("{e:#}");
                say(&stream, &format!("refused: {text}; connection closed"));
                let _ = write_msg(&mut w, key, &Msg::Error { text });
                return;
            }
        }
    }
}

fn kind(m: &Msg) -> &'static str {
    match m {
        Msg::Ack { .. } => "Ack",
        Msg::Data { .. } => "Data",
        Msg::Listed { .. } => "Listed",
        Msg::Error { .. } => "Error",
        _ => "request",
    }
}

/// A run's record as Data frames, then an Ack of its last batch.
fn fetch(store: &Store, run_id: u64) -> anyhow::Result<Vec<Msg>> {
    let rec = match store.get(run_id, None) {
        Ok(r) => r,
        Err(_) if store.dir.stat(&name_of(run_id))?.is_none() => {
            return Ok(vec![Msg::Ack { seq: 0 }]);
        }
        Err(e) => return Err(e),
    };
    let rec = rec.lock();
    let Some(f) = &rec.file else {
        return Ok(vec![Msg::Ack { seq: 0 }]);
    };
    let mut b = vec![0u8; usize::try_from(rec.len)?];
    f.read_exact_at(&mut b, 0)?;
    let p = parse(&b).ok_or_else(|| anyhow::anyhow!("the record of {run_id:016x} is damaged"))?;
    let mut out: Vec<Msg> = p
        .data
        .chunks(MAX_CHUNK)
        .map(|c| Msg::Data { data: c.to_vec() })
        .collect();
    out.push(Msg::Ack { seq: p.last_seq });
    Ok(out)
}

/// What the directory holds.
fn list_runs(dir: &Dir) -> anyhow::Result<Vec<RunInfo>> {
    let mut runs = Vec::new();
    for name in dir.names()? {
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".witness"))
            .filter(|n| n.len() == 16)
            .and_then(|n| u64::from_str_radix(n, 16).ok())
        else {
            continue;
        };
        let Ok(Some(p)) = read_record(dir, &name) else {
            continue;
        };
        let time_us = dir
            .stat(&name)?
            .map_or(0, |st| u64::try_from(st.st_mtime).unwrap_or(0) * 1_000_000);
        runs.push(RunInfo {
            run_id: id,
            host: p.host,
            last_seq: p.last_seq,
            bytes: p.data.len() as u64,
            gaps: p.gaps,
            time_us,
        });
    }
    runs.sort_by_key(|r| (r.host.clone(), r.time_us));
    Ok(runs)
}

/// `--list`: the runs, one line each.
fn list(dir: &Dir) -> anyhow::Result<Outcome> {
    let runs = list_runs(dir)?;
    crate::exit::outln!(
        "{:<16}  {:<24}  {:>10}  {:>12}  {:>5}  last record",
        "run",
        "host",
        "last batch",
        "bytes",
        "gaps"
    )?;
    for r in &runs {
        let when = time::OffsetDateTime::from_unix_timestamp(
            i64::try_from(r.time_us / 1_000_000).unwrap_or(0),
        )
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
        crate::exit::outln!(
            "{:016x}  {:<24}  {:>10}  {:>12}  {:>5}  {when}",
            r.run_id,
            crate::report::views::printable::printable(&r.host),
            r.last_seq,
            r.bytes,
            r.gaps
        )?;
    }
    Ok(Outcome::Clean)
}
