//! What a request takes before it is posted (the file's size, its pages' latches, a throttle
//! permit, frames): tried while the flight has requests of its own in flight, whose
//! completions are handled on a refusal, and waited for only with none.

use std::time::Duration;

use super::{Held, Latch, Outstanding};
use crate::sim::actors::worker::Worker;
use crate::sim::control::throttle::Refusal;

impl<'a> Outstanding<'a> {
    /// Takes what a request needs, handling own completions while something is refused;
    /// waits only with nothing in flight. `None` when the run stopped while waiting.
    pub(super) fn acquire(
        &mut self,
        w: &mut Worker<'a>,
        file: usize,
        first: u64,
        n: u64,
        read: bool,
    ) -> Option<Held<'a>> {
        let mut counted = false;
        loop {
            if self.live >= self.limit {
                self.reap_one(w);
                continue;
            }
            match self.try_acquire(file, first, n, read) {
                Ok(held) => return Some(held),
                Err(Refusal::Throttled) if !counted => {
                    counted = true;
                    self.run.controls.throttles[file].count_throttled();
                    w.stats.throttled(file);
                }
                Err(_) => {}
            }
            if self.live > 0 {
                self.reap_one(w);
            } else {
                return self.acquire_waiting(file, first, n, read);
            }
        }
    }

    /// Tries to take everything without waiting; what refused it (a busy latch or size, or
    /// no frames, counts as the gate: nothing the throttle decided).
    fn try_acquire(
        &self,
        file: usize,
        first: u64,
        n: u64,
        read: bool,
    ) -> Result<Held<'a>, Refusal> {
        let run = self.run;
        let f = &run.files[file];
        let size = f.pages.try_read().ok_or(Refusal::Gate)?;
        let (first, n) = clamp(*size, first, n);
        let latch = if read {
            f.oracle.try_read_latch_range(first, n).map(Latch::Read)
        } else {
            f.oracle.try_write_latch_range(first, n).map(Latch::Write)
        }
        .ok_or(Refusal::Gate)?;
        let permit =
            run.controls.throttles[file].try_enter(&run.controls.gate, run.controls.bursting())?;
        let frames = run
            .controls
            .io_frames
            .take_many(n.max(1) as usize)
            .ok_or(Refusal::Gate)?;
        Ok(Held {
            size,
            latch,
            permit,
            frames,
        })
    }

    /// Takes everything, waiting as a synchronous actor does (nothing of ours in flight).
    fn acquire_waiting(&self, file: usize, first: u64, n: u64, read: bool) -> Option<Held<'a>> {
        let run = self.run;
        let f = &run.files[file];
        let size = f.pages.read();
        let (first, n) = clamp(*size, first, n);
        let latch = if read {
            Latch::Read(f.oracle.read_latch_range(first, n))
        } else {
            Latch::Write(f.oracle.write_latch_range(first, n))
        };
        let permit =
            run.controls.throttles[file].enter(&run.controls.gate, run.controls.bursting());
        // Frames in use belong to other actors' requests in flight, which complete on
        // their own: poll for them rather than hold a wake-up in every frame's drop.
        let frames = loop {
            if let Some(fr) = run.controls.io_frames.take_many(n.max(1) as usize) {
                break fr;
            }
            if run.controls.stop.run_stopped() {
                return None;
            }
            crate::clock::sleep(Duration::from_millis(1));
        };
        Some(Held {
            size,
            latch,
            permit,
            frames,
        })
    }
}

/// The page range a request covers in a file of `size` pages (page 0 is the header).
fn clamp(size: u64, first: u64, n: u64) -> (u64, u64) {
    let first = first.max(1);
    (first, n.min(size.saturating_sub(first)))
}
