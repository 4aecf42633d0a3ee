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

mod list;
mod record;
mod store;

use std::collections::HashMap;
use std::io::{BufReader, BufWriter};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sync::Mutex;

use crate::exit::Outcome;
use crate::io::safefile::Dir;
use crate::witness::proto::{read_msg, write_msg, Key, Msg, ProtoError, MAX_CHUNK};
use list::{list, list_runs};
use record::{name_of, parse};
use store::{RunRec, Store};

pub use crate::cli::WitnessArgs;

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
    let p = parse(&b).map_err(|_| {
        anyhow::anyhow!("the record of {run_id:016x} is damaged or of another version")
    })?;
    let mut out: Vec<Msg> = p
        .data
        .chunks(MAX_CHUNK)
        .map(|c| Msg::Data { data: c.to_vec() })
        .collect();
    out.push(Msg::Ack { seq: p.last_seq });
    Ok(out)
}
