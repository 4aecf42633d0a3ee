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

pub use client::{fetch, list, Sender, SenderOptions, WitnessSummary};
pub use proto::{Key, Msg, ProtoError, RunInfo};
