//! The durable end moved: the ledger's prefix of written blocks published (after an
//! `fdatasync` unless the log is written through), and a flusher's wait until it reaches its
//! target or meets a failed block.

use std::io;
use std::time::Duration;

use super::{LogWrites, Publish, State, Waited};
use crate::io::Storage;
use crate::sim::engine::logio::{LogGate, LogIo};

impl LogWrites {
    /// Moves the durable end (syncing when needed) until it reaches `target`, waiting for the
    /// other flushers' writes in flight; stops at a failed block.
    pub(super) fn wait_durable(
        &self,
        storage: &dyn Storage,
        write_through: bool,
        target: u64,
        wal: &dyn Publish,
        ios: &mut Vec<LogIo>,
    ) -> io::Result<Waited> {
        loop {
            self.advance(storage, write_through, wal, ios)?;
            let mut l = self.ledger.lock();
            if wal.durable_end() >= target {
                return Ok(Waited::Durable);
            }
            match l.entries.front().map(|e| e.state) {
                Some(State::Failed) => return Ok(Waited::Failed),
                Some(State::InFlight) => {
                    crate::clock::wait_for(&self.changed, &mut l, Duration::from_millis(50));
                }
                // Written (someone else's, not yet published): publish it ourselves.
                Some(State::Written) => {}
                None => {
                    // Nothing posted is left and the end was not reached: published by a
                    // racing advance between our look and the lock, or never to be.
                    if wal.durable_end() < target {
                        return Err(io::Error::other(format!(
                            "the log's blocks up to {target} left the ledger without being durable"
                        )));
                    }
                }
            }
        }
    }

    /// Publishes the ledger's prefix of written blocks as durable, after an `fdatasync`
    /// unless the log is written through (the sync's request is added to `ios`); a failed
    /// sync publishes nothing.
    fn advance(
        &self,
        storage: &dyn Storage,
        write_through: bool,
        wal: &dyn Publish,
        ios: &mut Vec<LogIo>,
    ) -> io::Result<()> {
        let _one = self.advancing.lock();
        let written = {
            let l = self.ledger.lock();
            l.entries
                .iter()
                .take_while(|e| e.state == State::Written)
                .count()
        };
        if written == 0 {
            return Ok(());
        }
        // Only this (serialized) advance takes entries, so the first `written` stay written
        // and in front while the sync runs; the sync covers them, all completed before it.
        if !write_through {
            ios.push(LogGate::sync(|| storage.sync_data())?);
        }
        let mut l = self.ledger.lock();
        let mut last = None;
        for _ in 0..written {
            last = l.entries.pop_front();
        }
        if let Some(e) = last {
            if e.end() > wal.durable_end() {
                wal.publish(e.block.lsn, e.end());
            }
        }
        drop(l);
        self.changed.notify_all();
        Ok(())
    }
}
