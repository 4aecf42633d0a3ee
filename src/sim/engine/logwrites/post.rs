//! One flusher's own writes: a block posted (a frame and a throttle permit first, its own
//! completions collected while none is to be had) and each completion marked in the ledger.

use std::io;
use std::time::Duration;

use super::{Entry, Flush, LogWrites, Mine, State};
use crate::io::{Completion, PostOp, Storage};
use crate::page::layout::now_us;
use crate::sim::engine::logblock::{self, LogBlock};
use crate::sim::engine::logio::LogGate;

impl LogWrites {
    /// Posts one block (`new`: a new entry in the ledger, else the failed one again): a frame
    /// and a throttle permit first, collecting own completions when none is to be had.
    pub(super) fn post<'a>(
        &self,
        storage: &dyn Storage,
        block: &LogBlock,
        offset: u64,
        gate: &LogGate<'a>,
        f: &mut Flush<'a>,
        new: bool,
    ) {
        let len = block.len as usize;
        let mut frame = loop {
            if let Some(frame) = self.frames.take() {
                break frame;
            }
            if f.in_flight > 0 {
                let c = f.queue.wait();
                self.completed(c, f);
                continue;
            }
            // Every frame is another flusher's: it gives one back under the ledger's lock,
            // which the wait releases.
            let mut l = self.ledger.lock();
            if let Some(frame) = self.frames.take() {
                break frame;
            }
            crate::clock::wait_for(&self.changed, &mut l, Duration::from_millis(5));
        };
        logblock::encode(
            &mut frame[..len],
            &LogBlock {
                time_us: now_us(),
                ..*block
            },
        );
        let begun = loop {
            if f.in_flight == 0 {
                break gate.begin(len as u64, false);
            }
            if let Some(b) = gate.try_begin(len as u64, false) {
                break b;
            }
            let c = f.queue.wait();
            self.completed(c, f);
        };
        if new {
            self.ledger.lock().entries.push_back(Entry {
                block: *block,
                state: State::InFlight,
            });
        }
        let token = f.mine.len() as u64;
        f.mine.push(Some(Mine {
            begun,
            lsn: block.lsn,
            len,
        }));
        f.in_flight += 1;
        storage.post(PostOp::write(offset, vec![frame], len), &f.queue, token);
    }

    /// One of this flusher's writes completed: its permit back, its entry marked, its frame
    /// back to the pool.
    pub(super) fn completed(&self, c: Completion, f: &mut Flush<'_>) {
        let Some(mine) = usize::try_from(c.token)
            .ok()
            .and_then(|t| f.mine.get_mut(t))
            .and_then(Option::take)
        else {
            return;
        };
        f.in_flight -= 1;
        f.ios.push(mine.begun.end(c.done_at));
        let outcome = match c.result {
            Ok(n) if n == mine.len => Ok(()),
            Ok(n) => Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("short log write: {n} of {} bytes", mine.len),
            )),
            Err(e) => Err(e),
        };
        {
            let mut l = self.ledger.lock();
            if let Ok(i) = l.entries.binary_search_by_key(&mine.lsn, |e| e.block.lsn) {
                l.entries[i].state = if outcome.is_ok() {
                    State::Written
                } else {
                    State::Failed
                };
            }
            drop(c.frames);
        }
        self.changed.notify_all();
        if let Err(e) = outcome {
            f.failed.get_or_insert(e);
        }
    }
}
