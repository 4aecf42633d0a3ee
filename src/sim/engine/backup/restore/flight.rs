//! The restore's writes in flight: each write of a copy is posted through the copy's storage
//! (`Storage::post`: the run's I/O service for a service-backed copy, as the backup's reads
//! are) from one of `buffers` frames of one transfer each, and the restore goes on reading the
//! stream while at most `buffers` writes are in flight, as SQL Server's restore keeps
//! BUFFERCOUNT buffers moving. Writes are posted in stream order, so each copy is posted in
//! file order; they may complete in any order. The first write that fails is what the restore
//! reports; the writes already in flight are waited for before it does.

use std::sync::Arc;

use super::{Failed, Target};
use crate::io::{BufPool, Completion, Completions, PostOp};
use crate::page::PAGE_SIZE;

/// Writes of the restore's copies in flight.
pub(super) struct Flight {
    pool: Arc<BufPool>,
    queue: Arc<Completions>,
    /// For each token: the target, its first page and the bytes asked for.
    slots: Vec<Option<(usize, u64, usize)>>,
    free: Vec<usize>,
    live: usize,
    /// Most writes in flight at once.
    pub max_live: usize,
    failed: Option<Failed>,
}

impl Flight {
    /// A flight of at most `buffers` writes of at most `transfer_pages` pages each.
    pub fn new(buffers: usize, transfer_pages: usize) -> std::io::Result<Flight> {
        let buffers = buffers.max(1);
        Ok(Flight {
            pool: BufPool::new(buffers, transfer_pages.max(1) * PAGE_SIZE)?,
            queue: Arc::new(Completions::default()),
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            max_live: 0,
            failed: None,
        })
    }

    /// Most bytes one write carries.
    pub fn transfer(&self) -> usize {
        self.pool.frame_size()
    }

    /// Posts a write of `bytes` (whole pages, at most one transfer) at page `first` of
    /// `targets[ti]`, once a buffer is free; `Err` when a write already failed.
    pub fn write(
        &mut self,
        targets: &mut [Target],
        ti: usize,
        first: u64,
        bytes: &[u8],
    ) -> Result<(), Failed> {
        let mut frame = loop {
            self.reap(false);
            if let Some(f) = self.failed.take() {
                return Err(f);
            }
            if let Some(frame) = self.pool.take() {
                break frame;
            }
            // Every buffer is in a write in flight: wait for one.
            self.reap(true);
        };
        frame[..bytes.len()].copy_from_slice(bytes);
        let op = PostOp::write(first * PAGE_SIZE as u64, vec![frame], bytes.len());
        let token = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        self.slots[token] = Some((ti, first, bytes.len()));
        self.live += 1;
        self.max_live = self.max_live.max(self.live);
        targets[ti].writes += 1;
        targets[ti].storage.post(op, &self.queue, token as u64);
        Ok(())
    }

    /// Waits for every write in flight; `Err` with the first that failed.
    pub fn drain(&mut self) -> Result<(), Failed> {
        while self.live > 0 {
            self.reap(true);
        }
        self.failed.take().map_or(Ok(()), Err)
    }

    /// Handles the completions already back, or (`wait`) at least one.
    fn reap(&mut self, wait: bool) {
        if wait && self.live > 0 {
            let c = self.queue.wait();
            self.complete(c);
        }
        while let Some(c) = self.queue.try_take() {
            self.complete(c);
        }
    }

    /// One write completed: its buffer is free again (the frames go back to the pool as they
    /// drop); a failed or short write is kept, the first one only.
    fn complete(&mut self, c: Completion) {
        let Ok(token) = usize::try_from(c.token) else {
            return;
        };
        let Some((ti, first, len)) = self.slots.get_mut(token).and_then(Option::take) else {
            return;
        };
        self.free.push(token);
        self.live -= 1;
        let error = match c.result {
            Ok(n) if n == len => return,
            Ok(n) => std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                format!("a write of {len} bytes wrote {n}"),
            ),
            Err(e) => e,
        };
        self.failed.get_or_insert(Failed::write(ti, first, error));
    }
}

impl Drop for Flight {
    /// A restore that ends early (the stream unreadable, the phase over) still waits for the
    /// writes it posted, so none lands after the caller removed or reported the copy.
    fn drop(&mut self) {
        while self.live > 0 {
            self.reap(true);
        }
    }
}
