//! The actors without a configuration section: checkpoint, lazy writer and log writer, and
//! the end-of-cycle audit pass that reads back every page and the log chain.

use std::time::Duration;

use super::evidence;
use super::flight::{After, Flight};
use super::worker::Worker;
use crate::findings::FindingClass;
use crate::sim::engine::logscan::{check_block, scan_chain, ChainSpec};
use crate::sim::engine::pool::PageKey;
use crate::sim::engine::retry::RetryPolicy;
use crate::sim::engine::wal::{LogGate, LogIo, MAX_GROUP};

/// How often the checkpoint runs during the main phase.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(5);
/// Log blocks read back after each checkpoint (the log reader).
const RECENT_LOG_BLOCKS: usize = 64;

/// Groups sorted dirty pages into runs of consecutive pages of one file, at most `max` long;
/// each run carries the highest LSN among its pages. Lazily: a checkpoint of tens of thousands
/// of single-page runs allocates no second list beside the dirty pages (issue #15 §4).
pub fn runs(
    dirty: &[(PageKey, u64)],
    max: u64,
) -> impl Iterator<Item = (usize, u64, u64, u64)> + '_ {
    let mut rest = dirty.iter().peekable();
    std::iter::from_fn(move || {
        let &(k, lsn) = rest.next()?;
        let (mut n, mut l) = (1, lsn);
        while let Some(&&(next, lsn)) = rest.peek() {
            if next.file != k.file || k.page + n != next.page || n >= max {
                break;
            }
            (n, l) = (n + 1, l.max(lsn));
            rest.next();
        }
        Some((k.file, k.page, n, l))
    })
}

/// Posts writes of the given dirty pages without waiting for each (at most the run's
/// asynchronous depth in flight), marks each run clean as its write completes, and waits for
/// the last. Returns the pages written and the flight's figures.
fn write_dirty<'a>(w: &mut Worker<'a>, dirty: &[(PageKey, u64)]) -> Flight<'a> {
    let mut flight = Flight::new(w.run);
    for (file, first, n, lsn) in runs(dirty, w.max_pages() as u64) {
        if w.run.controls.stop.run_stopped() {
            break;
        }
        flight.write(w, file, first, n, lsn, After::Clean(lsn));
    }
    flight.drain(w);
    flight
}

/// One checkpoint: every dirty page written (log first, the writes posted asynchronously),
/// then the recent log read back.
pub fn checkpoint(w: &mut Worker<'_>) -> u64 {
    let dirty = w.run.files.pool.dirty_pages();
    let t = std::time::Instant::now();
    let flight = write_dirty(w, &dirty);
    let took = t.elapsed();
    if flight.posted > 0 {
        w.run.message(
            crate::findings::Severity::Info,
            "Checkpoint",
            "Checkpoint",
            format!("Checkpoint {}", flight.describe_writes(took)),
        );
    }
    let written = flight.pages;
    for i in 0..w.run.files.logs.len() {
        let file = w.run.files.logs[i].file;
        let _ = w.flush_log_index(i);
        check_log_chain(w, i, file, RECENT_LOG_BLOCKS);
    }
    let t = std::time::Instant::now();
    if super::durability::sync_point(w.run) {
        for &f in &w.run.files.data {
            w.stats.record(
                f,
                w.kind,
                crate::stats::OpKind::Sync,
                0,
                t.elapsed().as_nanos() as u64,
            );
        }
    }
    written
}

/// The checkpoint thread of the main phase.
pub fn checkpointer(w: &mut Worker<'_>) {
    while w.pause(CHECKPOINT_INTERVAL) {
        checkpoint(w);
    }
}

/// The lazy writer: when the pool is under pressure, writes dirty pages in clock order.
pub fn lazy_writer(w: &mut Worker<'_>) {
    while !w.run.controls.stop.phase_over() {
        if w.run.files.pool.under_pressure() {
            let victims = {
                let mut v = w.run.files.pool.lazy_victims(w.max_pages() * 4);
                v.sort_unstable();
                v
            };
            if !victims.is_empty() {
                write_dirty(w, &victims);
                continue;
            }
        }
        if !w.pause(Duration::from_millis(10)) {
            break;
        }
    }
}

/// The log writer: flushes whatever is pending every few milliseconds (group commit of
/// records whose users did not wait).
pub fn log_writer(w: &mut Worker<'_>) {
    while w.pause(Duration::from_millis(20)) {
        for i in 0..w.run.files.logs.len() {
            w.flush_log_index(i);
        }
    }
}

/// Reads back up to `max_blocks` log blocks along the chain and reports a broken chain.
pub fn check_log_chain(w: &mut Worker<'_>, log: usize, file: usize, max_blocks: usize) {
    let wal = &w.run.files.logs[log].wal;
    let spec = ChainSpec {
        run_id: w.run.files.run_id,
        file_id: file as u32,
        area_len: wal.area_len(),
        last_block: wal.last_block(),
        durable_end: wal.durable_end(),
        max_blocks,
        unit: wal.unit(),
    };
    let storage = wal.storage().as_ref();
    let gate = w.log_gate(file);
    let problem = match scan_chain(storage, &spec, &gate) {
        Ok(report) => {
            w.record_log_ios(file, w.kind, &report.reads);
            report.problem
        }
        Err(e) => {
            let failed = super::failure::Failed {
                file,
                what: "log read",
                offset: None,
                len: 0,
                error: &e,
            };
            if !super::failure::handled(w.run, &failed) {
                evidence::report_write_error(w, file, 0, 0, &e);
            }
            return;
        }
    };
    let Some(p) = problem else {
        return;
    };
    // The log writer may have come round the circular area while the walk read an old block:
    // such a block is gone legitimately, not damaged.
    if p.lsn + spec.area_len <= wal.appended_end() + MAX_GROUP {
        return;
    }
    // Re-read, by the same rule as a data page: a block that is right on a later look was a
    // transient read problem.
    let policy = RetryPolicy::live(&w.run.plan);
    let mut reads = Vec::new();
    let transient = policy.reread_until(|| {
        matches!(
            check_block(storage, &spec, p.lsn, &gate, &mut reads),
            Ok(Ok(()))
        )
    });
    w.record_log_ios(file, w.kind, &reads);
    let what = format!(
        "log block at LSN {} (offset 0x{:X}): {}{}",
        p.lsn,
        p.offset,
        p.error,
        if transient {
            " (transient: a re-read was right)"
        } else {
            ""
        }
    );
    let mut f = evidence::log_finding(w, file, FindingClass::LogCorruption, p.offset, what);
    f.persistent = !transient;
    w.run.report(f);
}

/// The end-of-cycle audit: every page of every data file read and verified, and the whole
/// retained log chain checked.
pub fn audit_pass(w: &mut Worker<'_>, file: usize) -> u64 {
    let pages = *w.run.files[file].pages.read();
    let mut page = 1;
    let mut verified = 0;
    while page < pages && !w.run.controls.stop.run_stopped() {
        let n = (w.max_pages() as u64).min(pages - page);
        verified += w.read_run(file, page, n).pages;
        page += n;
    }
    verified
}

impl Worker<'_> {
    /// Flushes log number `i` completely.
    pub fn flush_log_index(&mut self, i: usize) -> bool {
        let log = &self.run.files.logs[i];
        match log.wal.flush_all(&self.log_gate(log.file)) {
            Ok(ios) => {
                self.record_log_ios(log.file, crate::page::ActorKind::LogWriter, &ios);
                true
            }
            Err(e) => {
                let file = log.file;
                evidence::report_write_error(self, file, 0, 0, &e);
                false
            }
        }
    }
}

impl<'a> Worker<'a> {
    /// The controls log file `file`'s requests pass through: its throttle, the gate and the
    /// in-flight table, as a data page's do.
    pub fn log_gate(&self, file: usize) -> LogGate<'a> {
        let c = &self.run.controls;
        LogGate {
            throttle: &c.throttles[file],
            gate: &c.gate,
            inflight: &c.inflight,
            burst: c.bursting(),
        }
    }

    /// Records the log's requests in this thread's statistics of file `file`.
    pub fn record_log_ios(&mut self, file: usize, kind: crate::page::ActorKind, ios: &[LogIo]) {
        use crate::stats::OpKind;
        for io in ios {
            let op = match (io.is_sync, io.is_read) {
                (true, _) => OpKind::Sync,
                (false, true) => OpKind::Read,
                (false, false) => OpKind::Write,
            };
            if io.throttled {
                self.stats.throttled(file);
            }
            self.stats.record(file, kind, op, io.bytes, io.latency_ns);
        }
        if !ios.is_empty() {
            let most = self.run.controls.throttles[file].max_outstanding() as u64;
            self.stats.outstanding(file, most);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(file: usize, page: u64) -> (PageKey, u64) {
        (PageKey { file, page }, page * 10)
    }

    #[test]
    fn runs_split_on_gaps_files_and_length() {
        let dirty = [k(0, 1), k(0, 2), k(0, 3), k(0, 5), k(1, 6), k(1, 7)];
        assert_eq!(
            runs(&dirty, 2).collect::<Vec<_>>(),
            vec![(0, 1, 2, 20), (0, 3, 1, 30), (0, 5, 1, 50), (1, 6, 2, 70)]
        );
    }
}
