//! The witness's wire protocol: length-prefixed frames over TCP, each carrying an
//! HMAC-SHA256 of its payload under the shared token (`--token-file`), so that nothing
//! unauthenticated is ever acted on. A frame is refused before it is read when its length is
//! over [`MAX_FRAME`], so a connection costs at most that much memory.
//!
//! ```text
//! frame   = len:u32le  mac:[u8;32]  payload          (len = 32 + payload length)
//! payload = kind:u8 fields…                           (integers little-endian)
//!   1 Hello  run_id:u64 host:str         → Ack (the witness's last durable seq, 0: none)
//!   2 Batch  run_id:u64 seq:u64 flags:u8 data…        → Ack once durable (cumulative)
//!   3 Fetch  run_id:u64                  → Data* (the record's journal bytes) then Ack
//!   4 List                               → Listed
//!  10 Ack    seq:u64
//!  11 Data   data…
//!  12 Listed count:u32 (run_id:u64 last_seq:u64 bytes:u64 gaps:u64 time_us:u64 host:str)*
//!  13 Error  text:str
//! str     = len:u16le utf-8 bytes
//! ```
//!
//! A Batch's `data` is whole journal records. Flags: [`BASE`] starts the record afresh (the
//! journal's snapshot), [`PART`] marks its later chunks and [`MORE`] says the base goes on in
//! the next Batch (the witness makes a base durable, and acknowledges it, only with its last
//! chunk), [`GAP`] says batches before this base were dropped by the sender (its buffer
//! overflowed). A record is fetched as Data frames of at most [`MAX_CHUNK`] bytes, ended by
//! an Ack of its last batch (none: 0).

mod payload;

use std::io::{self, Read, Write};
use std::path::Path;

use hmac::{Hmac, Mac};

use crate::io::safefile::{read_bounded, Kind, Use};
use crate::witness::WitnessError;
use payload::{decode, encode};
use sha2::Sha256;

/// Largest frame (MAC and payload), bytes.
pub const MAX_FRAME: usize = 8 << 20;
/// Largest `data` of a Batch, bytes: a larger base is sent in chunks.
pub const MAX_CHUNK: usize = 4 << 20;
/// Longest host name.
pub const MAX_HOST: usize = 255;
const MAC_LEN: usize = 32;

/// A Batch that starts the record afresh (a snapshot of the journal).
pub const BASE: u8 = 1;
/// The base goes on in the next Batch.
pub const MORE: u8 = 2;
/// Batches before this base were dropped by the sender.
pub const GAP: u8 = 4;
/// A later chunk of a base (the first one has [`BASE`]).
pub const PART: u8 = 8;

/// The shared secret every frame is authenticated with (empty: none, loopback only).
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({} bytes)", self.0.len())
    }
}

impl Key {
    /// No token: frames still carry a MAC (under the empty key), which only tells a frame
    /// that was damaged.
    pub fn none() -> Key {
        Key(Vec::new())
    }

    /// The token in `bytes` (a file's content, a trailing newline dropped).
    pub fn from_bytes(bytes: &[u8]) -> Key {
        let t = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let t = t.strip_suffix(b"\r").unwrap_or(t);
        Key(t.to_vec())
    }

    /// Reads the token file `path` through the safe-file door (a regular file of at most 4 KiB:
    /// a FIFO or device is refused at once, never waited on), not empty.
    pub fn from_file(path: &Path) -> Result<Key, WitnessError> {
        let bytes = read_bounded(path, Use::Input, Kind::Token).map_err(WitnessError::Token)?;
        let key = Key::from_bytes(&bytes);
        if key.0.is_empty() {
            return Err(WitnessError::EmptyToken(path.to_path_buf()));
        }
        Ok(key)
    }

    /// True without a token.
    pub fn is_none(&self) -> bool {
        self.0.is_empty()
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length, the empty one included.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC accepts any key length")
    }
}

/// Something a run, a verify or the witness says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// A sender (or reader) names the run it reports for.
    Hello {
        /// The run's id (the set's, from the data files' headers).
        run_id: u64,
        /// The host the run is on.
        host: String,
    },
    /// Journal records, numbered.
    Batch {
        /// The run's id.
        run_id: u64,
        /// The batch's number (from 1, one more each batch, across reconnects).
        seq: u64,
        /// [`BASE`], [`MORE`], [`GAP`].
        flags: u8,
        /// Whole journal records.
        data: Vec<u8>,
    },
    /// The record of a run, asked for.
    Fetch {
        /// The run's id.
        run_id: u64,
    },
    /// The runs the witness holds, asked for.
    List,
    /// Everything up to `seq` is durable on the witness.
    Ack {
        /// The last durable batch.
        seq: u64,
    },
    /// A run's record: journal records.
    Data {
        /// The bytes.
        data: Vec<u8>,
    },
    /// The runs the witness holds.
    Listed {
        /// One per run.
        runs: Vec<RunInfo>,
    },
    /// A refusal, said.
    Error {
        /// Why.
        text: String,
    },
}

/// What the witness holds of one run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunInfo {
    /// The run's id.
    pub run_id: u64,
    /// The host that reported it.
    pub host: String,
    /// Its last durable batch.
    pub last_seq: u64,
    /// Bytes of journal records held.
    pub bytes: u64,
    /// Times its sender dropped batches (its buffer overflowed) and sent a base instead.
    pub gaps: u64,
    /// When its last record was written, µs since the epoch.
    pub time_us: u64,
}

/// Why a frame was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// The connection failed or closed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The frame announced more than [`MAX_FRAME`] bytes (nothing of it was read).
    #[error("a frame of {0} bytes (at most {MAX_FRAME})")]
    TooBig(u64),
    /// The MAC does not match: a wrong token, or bytes changed on the way.
    #[error(
        "a frame whose HMAC does not match (a wrong --token-file, or not a sqliosim witness peer)"
    )]
    BadMac,
    /// Authenticated, but not a message.
    #[error("a malformed message ({0})")]
    Malformed(&'static str),
}

/// Writes `msg` as one frame.
pub fn write_msg(w: &mut impl Write, key: &Key, msg: &Msg) -> io::Result<()> {
    let payload = encode(msg);
    let mut mac = key.mac();
    mac.update(&payload);
    let tag = mac.finalize().into_bytes();
    let len = u32::try_from(MAC_LEN + payload.len())
        .ok()
        .filter(|&l| l as usize <= MAX_FRAME)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "witness frame too large"))?;
    let mut frame = Vec::with_capacity(4 + len as usize);
    frame.extend_from_slice(&len.to_le_bytes());
    frame.extend_from_slice(&tag);
    frame.extend_from_slice(&payload);
    w.write_all(&frame)?;
    w.flush()
}

/// Reads one frame, checks its MAC and decodes it.
pub fn read_msg(r: &mut impl Read, key: &Key) -> Result<Msg, ProtoError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(ProtoError::TooBig(len as u64));
    }
    if len <= MAC_LEN {
        return Err(ProtoError::Malformed(
            "a frame shorter than its MAC and a kind",
        ));
    }
    // Grown as the bytes arrive: a peer that announces 8 MiB and sends ten bytes costs ten.
    let mut body = Vec::new();
    r.take(len as u64).read_to_end(&mut body)?;
    if body.len() < len {
        return Err(ProtoError::Io(io::ErrorKind::UnexpectedEof.into()));
    }
    let (tag, payload) = body.split_at(MAC_LEN);
    let mut mac = key.mac();
    mac.update(payload);
    mac.verify_slice(tag).map_err(|_| ProtoError::BadMac)?;
    decode(payload)
}

#[cfg(test)]
mod tests;
