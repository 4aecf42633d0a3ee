//! The sender's thread: it connects (a Hello, then a reader thread for the acknowledgements),
//! sends in order what the witness has not got, a window at a time, and on any failure
//! reconnects with a growing pause and resends from the witness's last acknowledged batch.

use std::io::BufWriter;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Shared, TIMEOUT, WINDOW};
use crate::witness::proto::{read_msg, write_msg, Msg, BASE};

/// The sender thread: connect, send what the witness has not got, let the reader take the
/// acknowledgements; on any failure, reconnect with a growing pause.
pub(super) fn run(s: &Arc<Shared>) {
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
pub(super) fn open(addr: &str) -> Result<TcpStream, String> {
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
