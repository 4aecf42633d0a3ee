//! The flight's completions: reaped as they come, or waited for, and each accounted (latency
//! to the throttle and the statistics, the write's outcome to the oracle, the read's pages to
//! the verifier, the pages to the buffer pool).

use super::{After, Kept, Outstanding};
use crate::io::Completion;
use crate::page::PAGE_SIZE;
use crate::sim::actors::request_pages;
use crate::sim::actors::worker::Worker;
use crate::sim::engine::pool::PageKey;
use crate::stats::OpKind;

impl<'a> Outstanding<'a> {
    /// Handles the completions that have already come back.
    pub fn reap_ready(&mut self, w: &mut Worker<'a>) {
        while let Some(c) = self.poster.take() {
            self.handle(w, c);
        }
    }

    /// Waits for one completion and handles it.
    pub(super) fn reap_one(&mut self, w: &mut Worker<'a>) {
        if self.live > 0 {
            let c = self.poster.wait();
            self.handle(w, c);
        }
    }

    /// Waits for every request in flight and handles each.
    pub fn drain(&mut self, w: &mut Worker<'a>) {
        while self.live > 0 {
            self.reap_one(w);
        }
    }

    /// Accounts a completion: latency to the throttle and the statistics, then the write's
    /// outcome to the oracle or the read's pages to the verifier.
    fn handle(&mut self, w: &mut Worker<'a>, c: Completion) {
        let token = c.token as usize;
        let Some(mut p) = self.slots.get_mut(token).and_then(Option::take) else {
            panic!("a completion for request {token}, which is not in flight");
        };
        self.free.push(token);
        self.live -= 1;
        let took = c.done_at.saturating_duration_since(p.started);
        if let Some(permit) = p.permit.take() {
            self.run.controls.throttles[p.file].complete(permit, took);
        }
        let read = p.gens.is_empty();
        let op = match (read, p.n > 1) {
            (true, false) => OpKind::Read,
            (true, true) => OpKind::ScatterRead,
            (false, false) => OpKind::Write,
            (false, true) => OpKind::GatherWrite,
        };
        let bytes = p.n * PAGE_SIZE as u64;
        match &c.result {
            Ok(_) => w
                .stats
                .record(p.file, w.kind, op, bytes, took.as_nanos() as u64),
            Err(_) => w.stats.record_error(p.file, w.kind, op),
        }
        let done = request_pages::PageRequest {
            file: p.file,
            first: p.first,
            n: p.n,
            gens: &p.gens,
            frames: &c.frames,
        };
        let ok = c.result.is_ok();
        self.pages += if read {
            request_pages::verify_read(w, &done, c.result)
        } else {
            request_pages::finish_write(w, &done, c.result)
        };
        if let (Some(book), false) = (&self.acks, read) {
            // Still under the size guard: a resize is journaled after this acknowledgement.
            book.settle(c.token, ok);
        }
        let pool = &self.run.files.pool;
        let keys = (p.first..p.first + p.n).map(|page| PageKey { file: p.file, page });
        match p.after {
            After::Nothing => {}
            After::Clean(lsn) => keys.for_each(|k| pool.mark_clean(k, lsn)),
            After::Cache => keys.for_each(|k| {
                pool.insert_clean(k);
            }),
            After::Keep => self.kept.push(Kept {
                file: p.file,
                first: p.first,
                bytes: if ok {
                    c.frames
                        .iter()
                        .flat_map(|f| f[..PAGE_SIZE].iter().copied())
                        .collect()
                } else {
                    Vec::new()
                },
            }),
        }
    }
}
