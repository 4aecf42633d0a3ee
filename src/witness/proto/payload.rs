//! A message's payload: its kind byte and fields (integers little-endian, strings with a
//! 16-bit length) encoded, and decoded from authenticated bytes, refusing what is not a whole
//! message.

use super::{Msg, ProtoError, RunInfo, MAX_HOST};
use crate::codec::Reader;

fn put_str(v: &mut Vec<u8>, s: &str) {
    let b = &s.as_bytes()[..s.len().min(usize::from(u16::MAX))];
    // The slice is at most u16::MAX long.
    v.extend_from_slice(&(b.len() as u16).to_le_bytes());
    v.extend_from_slice(b);
}

/// The payload of `msg`.
pub(super) fn encode(msg: &Msg) -> Vec<u8> {
    let mut v = Vec::new();
    match msg {
        Msg::Hello { run_id, host } => {
            v.push(1);
            v.extend_from_slice(&run_id.to_le_bytes());
            put_str(&mut v, host);
        }
        Msg::Batch {
            run_id,
            seq,
            flags,
            data,
        } => {
            v.push(2);
            v.extend_from_slice(&run_id.to_le_bytes());
            v.extend_from_slice(&seq.to_le_bytes());
            v.push(*flags);
            v.extend_from_slice(data);
        }
        Msg::Fetch { run_id } => {
            v.push(3);
            v.extend_from_slice(&run_id.to_le_bytes());
        }
        Msg::List => v.push(4),
        Msg::Ack { seq } => {
            v.push(10);
            v.extend_from_slice(&seq.to_le_bytes());
        }
        Msg::Data { data } => {
            v.push(11);
            v.extend_from_slice(data);
        }
        Msg::Listed { runs } => {
            v.push(12);
            // A listing longer than u32::MAX runs cannot be held by a witness.
            v.extend_from_slice(&(runs.len() as u32).to_le_bytes());
            for r in runs {
                for n in [r.run_id, r.last_seq, r.bytes, r.gaps, r.time_us] {
                    v.extend_from_slice(&n.to_le_bytes());
                }
                put_str(&mut v, &r.host);
            }
        }
        Msg::Error { text } => {
            v.push(13);
            put_str(&mut v, text);
        }
    }
    v
}

/// A cursor over an authenticated payload: the codec's reader, its `None` (the bytes ran out)
/// said as a message cut short.
struct Cur<'a>(Reader<'a>);

/// The field read, or the refusal of a message cut short.
fn whole<T>(field: Option<T>) -> Result<T, ProtoError> {
    field.ok_or(ProtoError::Malformed("cut short"))
}

impl Cur<'_> {
    fn u8(&mut self) -> Result<u8, ProtoError> {
        whole(self.0.u8())
    }

    fn u32(&mut self) -> Result<u32, ProtoError> {
        whole(self.0.u32())
    }

    fn u64(&mut self) -> Result<u64, ProtoError> {
        whole(self.0.u64())
    }

    fn str(&mut self) -> Result<String, ProtoError> {
        let n = usize::from(whole(self.0.u16())?);
        String::from_utf8(whole(self.0.take(n))?.to_vec())
            .map_err(|_| ProtoError::Malformed("a name that is not UTF-8"))
    }

    fn rest(&mut self) -> Vec<u8> {
        let rest = self.0.rest();
        *self = Cur(Reader::new(&[]));
        rest.to_vec()
    }

    fn end(&self) -> Result<(), ProtoError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ProtoError::Malformed("bytes after the message"))
        }
    }
}

/// The message an authenticated `payload` holds.
pub(super) fn decode(payload: &[u8]) -> Result<Msg, ProtoError> {
    let mut c = Cur(Reader::new(payload));
    let msg = match c.u8()? {
        1 => {
            let run_id = c.u64()?;
            let host = c.str()?;
            if host.is_empty() || host.len() > MAX_HOST || host.chars().any(char::is_control) {
                return Err(ProtoError::Malformed(
                    "a host name that is empty, too long or has control characters",
                ));
            }
            Msg::Hello { run_id, host }
        }
        2 => Msg::Batch {
            run_id: c.u64()?,
            seq: c.u64()?,
            flags: c.u8()?,
            data: c.rest(),
        },
        3 => Msg::Fetch { run_id: c.u64()? },
        4 => Msg::List,
        10 => Msg::Ack { seq: c.u64()? },
        11 => Msg::Data { data: c.rest() },
        12 => {
            let n = c.u32()?;
            let mut runs = Vec::new();
            for _ in 0..n {
                let (run_id, last_seq, bytes, gaps, time_us) =
                    (c.u64()?, c.u64()?, c.u64()?, c.u64()?, c.u64()?);
                runs.push(RunInfo {
                    run_id,
                    host: c.str()?,
                    last_seq,
                    bytes,
                    gaps,
                    time_us,
                });
            }
            Msg::Listed { runs }
        }
        13 => Msg::Error { text: c.str()? },
        _ => return Err(ProtoError::Malformed("an unknown message kind")),
    };
    c.end()?;
    Ok(msg)
}
