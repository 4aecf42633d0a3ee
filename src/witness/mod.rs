//! The off-host witness of a run's durable acknowledgements: its wire protocol ([`proto`]),
//! the sender a run's journal thread feeds ([`client::Sender`]) and the requests `verify`
//! makes ([`client::fetch`], [`client::list`]). The server is `sqliosim witness`
//! (`app::witness`).
//!
//! Why: the durability journal lives on the host under test. When the whole host loses power
//! its journal device loses its own unsynced batches too, and if its flushes lie it loses
//! acknowledged ones, so the local check weakens exactly when the hardware misbehaves. The
//! witness keeps the same records on another machine as they are made: every batch the
//! journal thread makes durable locally is also sent, numbered, and acknowledged by the
//! witness only once it is on the witness's disk (fdatasync'd). `verify --witness` judges the
//! set with whichever of the two records went further.
//!
//! A record on the witness is a sequence of journal records (the journal's own encoding), so
//! the journal's decoder reads it; a base (the journal's snapshot: at the start, after a
//! compaction, after the sender's buffer overflowed) starts it afresh.

pub mod client;
pub mod proto;

use std::path::PathBuf;

use crate::io::safefile::SafeFileError;

/// Why a request to the witness, or reading its token, failed; each names the address or the
/// switch.
#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    /// The witness could not be reached (the address, and why).
    #[error("witness {0}")]
    Unreachable(String),
    /// A frame could not be sent or read, or the answer was not the one asked for.
    #[error("witness {addr}: {what}")]
    Talk {
        /// The witness's address.
        addr: String,
        /// What went wrong.
        what: String,
    },
    /// The witness answered with an error.
    #[error("witness {addr} refused: {text}")]
    Refused {
        /// The witness's address.
        addr: String,
        /// Its message.
        text: String,
    },
    /// A fetched record outgrew the journal's own bound.
    #[error("witness {addr}: the record of run {run_id:016x} is larger than {max} bytes")]
    TooLarge {
        /// The witness's address.
        addr: String,
        /// The run asked for.
        run_id: u64,
        /// The bound, in bytes.
        max: usize,
    },
    /// The `--token-file` could not be read.
    #[error("--token-file: {0}")]
    Token(SafeFileError),
    /// The `--token-file` holds no token.
    #[error("--token-file {}: the token is empty", .0.display())]
    EmptyToken(PathBuf),
}

impl WitnessError {
    /// A failure talking to the witness at `addr`.
    pub fn talk(addr: &str, what: impl std::fmt::Display) -> WitnessError {
        WitnessError::Talk {
            addr: addr.to_string(),
            what: what.to_string(),
        }
    }
}

pub use client::{fetch, list, Base, Sender, SenderOptions, WitnessSummary};
pub use proto::{Key, Msg, ProtoError, RunInfo};
