//! The SQL Server-like actors. Each actor decides its next operation from its plan and its
//! random generator, and performs it through a [`worker::Worker`], which verifies every read;
//! the checkpoint, lazy writer, read-ahead, bulk update and initial update post theirs through a
//! [`outstanding::Outstanding`] without waiting for each. They share one [`context::Run`], and keep the
//! durability journal through [`journaling`].
//!
//! Two cycles of files stay. `context` with `failure` and `journaling`: the run's shared
//! [`context::Run`] holds the journal slot and the environment errors, and the functions of those
//! modules take the `Run` they are part of. `worker` with `checkdb` and `evidence`: a worker
//! preserves a page in CHECKDB's snapshot before it overwrites it and files the evidence of a bad
//! read, while CHECKDB and the evidence work through a `Worker`.

pub mod backup;
pub mod batch;
pub mod checkdb;
pub mod checkpoint;
pub mod context;
mod cursor;
pub mod evidence;
pub mod failure;
pub mod journaling;
pub mod lazy_writer;
mod log_backup;
pub mod log_writer;
pub mod outstanding;
mod poster;
pub mod random;
pub mod recovery_writer;
mod request_pages;
mod restore;
pub mod shrink;
mod sort;
mod stream_failure;
mod sweep;
pub mod table;
pub mod worker;
