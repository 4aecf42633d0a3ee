//! Forced flush with SQL Server's economy (issue #39): one `fdatasync` of a file covers every
//! write of it that had completed when the flush started, so writes completed together, or
//! by threads that ask while a flush runs, share one flush instead of paying one each.
//!
//! The rule it keeps is the one the journal's verdict rests on: a write counts as durable only
//! after an `fdatasync` of its file that **started after the write completed** returned
//! successfully. A flush that began before the write completed may or may not carry it to the
//! medium; acknowledging the write on it would, after a power cut, hold the device to a write
//! nobody had made durable (a false `lost_write`).
//!
//! Order is kept by a process-wide [`Ticket`] clock under a mutex: whoever saw a write complete
//! takes a ticket afterwards, and every flush takes a mark from the same clock before it calls
//! `fdatasync`. A flush whose mark is above a ticket took its mark after the ticket was taken
//! (the mutex orders them), so it started after the write completed. One clock for every file
//! lets a single ticket, taken once for all the completions of an I/O service's reap pass,
//! stand for each of them whatever file and queue they belong to.
//!
//! A [`FlushGate`] runs one flush of its file at a time. [`FlushGate::cover`] returns once a
//! flush marked after the ticket has ended: it starts one if none runs, waits for the running
//! one if it is marked after the ticket, and otherwise waits for it to end and then for (or
//! starts) the next. A flush that failed covers nobody who waited on it: each reports the error
//! and none of their writes is acknowledged (after a failed `fdatasync` a later success says
//! nothing of the writes before it, so a waiter is covered only when every flush ended since
//! its ticket succeeded). In per-write mode (`ForcedFlushPerWrite=TRUE`) every call runs its
//! own flush, as before the economy.

use std::io;
use std::sync::Arc;

use crate::sync::{const_mutex, Condvar, Mutex};

use super::Storage;

/// The process-wide clock tickets and flush marks are read from.
static CLOCK: Mutex<u64> = const_mutex(0);

/// A point in the flush order, taken once a write was seen completed: a flush marked later
/// started after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket(u64);

impl Ticket {
    /// A ticket for every write seen completed before this call.
    pub fn now() -> Ticket {
        Ticket(*CLOCK.lock())
    }
}

/// The mark of a flush about to start: above every ticket taken before it.
fn next_mark() -> u64 {
    let mut clock = CLOCK.lock();
    *clock += 1;
    *clock
}

#[derive(Debug, Default)]
struct State {
    /// A flush is running.
    running: bool,
    /// The mark of the last flush that ended (0: none yet).
    done: u64,
    /// The mark of the last flush that failed, and its error.
    failed: u64,
    error: Option<(io::ErrorKind, String)>,
    /// Flushes run, for the tests and the figures.
    flushes: u64,
}

/// One file's flushes, shared by the writes they cover.
#[derive(Debug)]
pub struct FlushGate {
    storage: Arc<dyn Storage>,
    per_write: bool,
    state: Mutex<State>,
    ended: Condvar,
}

impl FlushGate {
    /// The gate of `storage`'s file; with `per_write`, every call flushes on its own.
    pub fn new(storage: Arc<dyn Storage>, per_write: bool) -> FlushGate {
        FlushGate {
            storage,
            per_write,
            state: Mutex::new(State::default()),
            ended: Condvar::new(),
        }
    }

    /// True when each write gets a flush of its own (the old behaviour).
    pub fn per_write(&self) -> bool {
        self.per_write
    }

    /// Flushes run so far.
    pub fn flushes(&self) -> u64 {
        self.state.lock().flushes
    }

    /// Returns once the writes seen completed before `ticket` are durable: `Ok` after a flush
    /// that started after the ticket returned successfully, the error when it (or any flush
    /// ended since the ticket) failed.
    pub fn cover(&self, ticket: Ticket) -> io::Result<()> {
        if self.per_write {
            return self.flush();
        }
        let mut st = self.state.lock();
        loop {
            if st.done > ticket.0 {
                return match &st.error {
                    Some((kind, text)) if st.failed > ticket.0 => {
                        Err(io::Error::new(*kind, text.clone()))
                    }
                    _ => Ok(()),
                };
            }
            if !st.running {
                break;
            }
            // A running flush: one marked after the ticket covers it when it ends; one marked
            // before does not, and the next is started (or joined) once it has ended.
            self.ended.wait(&mut st);
        }
        st.running = true;
        drop(st);
        self.flush()
    }

    /// Runs one flush (the caller has set `running`, unless per write) and records its end.
    fn flush(&self) -> io::Result<()> {
        let mark = next_mark();
        let result = self.storage.sync_data();
        let mut st = self.state.lock();
        st.flushes += 1;
        if !self.per_write {
            st.running = false;
            st.done = mark;
            if let Err(e) = &result {
                st.failed = mark;
                st.error = Some((e.kind(), e.to_string()));
            }
            self.ended.notify_all();
        }
        result
    }
}

#[cfg(test)]
#[path = "flush_gate_tests.rs"]
mod tests;
