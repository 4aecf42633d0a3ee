//! The log writer (pending log blocks flushed every few milliseconds), the log reader that
//! walks the chain back after a checkpoint and at the audit, and the controls and statistics
//! every log request goes through.

use std::time::Duration;

use super::evidence;
use super::worker::Worker;
use crate::findings::FindingClass;
use crate::sim::engine::logforward::read_forward;
use crate::sim::engine::logscan::{check_block, scan_chain, ChainSpec, LogProblem};
use crate::sim::engine::retry::RetryPolicy;
use crate::sim::engine::wal::{LogGate, LogIo, MAX_GROUP};

/// How often the log writer flushes what is pending.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(20);

/// The log writer: flushes whatever is pending every few milliseconds (group commit of
/// records whose users did not wait).
pub fn log_writer(w: &mut Worker<'_>) {
    while w.pause(FLUSH_INTERVAL) {
        for i in 0..w.run.files.logs.len() {
            w.flush_log_index(i);
        }
    }
}

/// What a reader of log `log` (file `file`) expects of its chain now, reading at most
/// `max_blocks` blocks.
pub(super) fn chain_spec(w: &Worker<'_>, log: usize, file: usize, max_blocks: usize) -> ChainSpec {
    let wal = &w.run.files.logs[log].wal;
    ChainSpec {
        run_id: w.run.files.run_id,
        file_id: file as u32,
        area_len: wal.area_len(),
        last_block: wal.last_block(),
        durable_end: wal.durable_end(),
        max_blocks,
        unit: wal.unit(),
    }
}

/// Reads back up to `max_blocks` log blocks along the chain and reports a broken chain.
pub fn check_log_chain(w: &mut Worker<'_>, log: usize, file: usize, max_blocks: usize) {
    let spec = chain_spec(w, log, file, max_blocks);
    let wal = &w.run.files.logs[log].wal;
    let storage = wal.storage().as_ref();
    let gate = w.log_gate(file);
    let problem = match scan_chain(storage, &spec, &gate) {
        Ok(report) => {
            w.record_log_ios(file, w.kind, &report.reads);
            report.problem
        }
        Err(e) => {
            log_read_failed(w, file, &e);
            return;
        }
    };
    if let Some(p) = problem {
        report_log_problem(w, log, file, &spec, &p);
    }
}

/// Reads forward, in reads of up to 120 KB, what the log wrote since the last forward read
/// (what a log backup reads; see `sim::engine::logforward`) and reports a broken chain. When
/// the writer has lapped the mark meanwhile, the read starts over from the durable end.
pub fn read_log_forward(w: &mut Worker<'_>, log: usize, file: usize) {
    let spec = chain_spec(w, log, file, usize::MAX);
    let wal = &w.run.files.logs[log].wal;
    let (after, from) = wal.forward_mark();
    if forward_overtaken(from, spec.area_len, spec.durable_end) {
        wal.set_forward_mark(crate::sim::engine::logblock::NO_PREV, spec.durable_end);
        return;
    }
    let storage = wal.storage().as_ref();
    let gate = w.log_gate(file);
    match read_forward(storage, &spec, after, from, &gate, |_, _| {}) {
        Ok(report) => {
            w.record_log_ios(file, w.kind, &report.reads);
            let reached = report
                .blocks
                .last()
                .map(|b| (b.lsn, b.lsn + u64::from(b.len)));
            match &report.problem {
                Some(p) => report_log_problem(w, log, file, &spec, p),
                None => {
                    if let Some((last, end)) = reached {
                        w.run.files.logs[log].wal.set_forward_mark(last, end);
                    }
                }
            }
        }
        Err(e) => log_read_failed(w, file, &e),
    }
}

/// Whether a forward read from `from` would race the writer round a circular area of
/// `area_len` bytes whose durable end is `durable_end`: the writer has lapped the mark, or
/// would within the margin it may reach while the read goes on (two groups). Then the read
/// is not made and starts over from the durable end.
pub fn forward_overtaken(from: u64, area_len: u64, durable_end: u64) -> bool {
    from + area_len < durable_end + 2 * MAX_GROUP
}

/// Whether the block at `lsn` that read wrong may have been overwritten legitimately: the
/// writer, having appended up to `appended_end` (and a group more since it looked), has come
/// round the circular area of `area_len` bytes over it. Such a block is gone, not damaged.
pub fn lapped(lsn: u64, area_len: u64, appended_end: u64) -> bool {
    lsn + area_len <= appended_end + MAX_GROUP
}

/// A read of the log failed (the backward walk or the forward read): a `read_error` finding
/// on the log file, unless the platform refused the request (an environment error, said as
/// such by `failure::handled`). It was filed as a `write_error` ("log write or flush").
pub(super) fn log_read_failed(w: &mut Worker<'_>, file: usize, e: &std::io::Error) {
    let failed = super::failure::Failed {
        file,
        what: "log read",
        offset: None,
        len: 0,
        error: e,
    };
    if super::failure::handled(w.run, &failed) {
        return;
    }
    let errno = e.raw_os_error().unwrap_or(libc::EIO);
    let mut finding = evidence::log_finding(
        w,
        file,
        FindingClass::ReadError,
        0,
        format!("a read of the log failed: {e}"),
    );
    finding.verdict = crate::page::Verdict::IoError { errno };
    finding.errno = Some(errno);
    w.run.report(finding);
}

/// Reports a log block that is not what the chain says, unless the writer lapped it
/// meanwhile; re-read first, by the rule of a data page.
fn report_log_problem(
    w: &mut Worker<'_>,
    log: usize,
    file: usize,
    spec: &ChainSpec,
    p: &LogProblem,
) {
    let wal = &w.run.files.logs[log].wal;
    if lapped(p.lsn, spec.area_len, wal.appended_end()) {
        return;
    }
    report_bad_block(w, log, file, spec, p, "");
}

/// Reports a log block read wrong as a `log_corruption` finding on log file `file` (`what`
/// leads its detail), after re-reads by the rule of a data page: a block that is right on a
/// later look was a transient read problem. The caller has ruled out a block the writer
/// lapped (the log backup's reads cannot have been: the log is held for it).
pub(super) fn report_bad_block(
    w: &mut Worker<'_>,
    log: usize,
    file: usize,
    spec: &ChainSpec,
    p: &LogProblem,
    what: &str,
) {
    let wal = &w.run.files.logs[log].wal;
    let storage = wal.storage().as_ref();
    let gate = w.log_gate(file);
    let policy = RetryPolicy::live(&w.run.plan);
    let mut reads = Vec::new();
    let transient = policy.reread_until(|| {
        matches!(
            check_block(storage, spec, p.lsn, &gate, &mut reads),
            Ok(Ok(()))
        )
    });
    w.record_log_ios(file, w.kind, &reads);
    let what = format!(
        "{what}log block at LSN {} (offset 0x{:X}): {}{}",
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
    /// The controls log file `file`'s requests pass through: its throttle and the in-flight
    /// table, as a data page's do (not the MaxOutstandingIO gate: see `sim::engine::logio`).
    pub fn log_gate(&self, file: usize) -> LogGate<'a> {
        let c = &self.run.controls;
        LogGate {
            throttle: &c.throttles[file],
            io_ages: &c.io_ages,
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

    const AREA: u64 = 64 << 20;

    #[test]
    fn a_forward_read_starts_over_when_the_writer_may_lap_its_mark() {
        // A mark well within a lap of the durable end: read.
        assert!(!forward_overtaken(10 << 20, AREA, 20 << 20));
        // The boundary: a mark exactly two groups clear of a lap is read, one byte less is not.
        let durable = 100 << 20;
        let edge = durable + 2 * MAX_GROUP - AREA;
        assert!(!forward_overtaken(edge, AREA, durable));
        assert!(forward_overtaken(edge - 1, AREA, durable));
        // A mark a whole lap behind: long overwritten.
        assert!(forward_overtaken(0, AREA, AREA + 1));
        // A fresh log: nothing durable yet, nothing to race.
        assert!(!forward_overtaken(0, AREA, 0));
    }

    #[test]
    fn a_bad_block_a_lap_behind_the_writer_is_not_damage() {
        let appended = 200 << 20;
        // The newest lap's blocks are judged.
        assert!(!lapped(appended - (1 << 20), AREA, appended));
        // A block the writer (and a group of slack) has come round over is spared.
        let edge = appended + MAX_GROUP - AREA;
        assert!(lapped(edge, AREA, appended));
        assert!(!lapped(edge + 1, AREA, appended));
        assert!(lapped(0, AREA, appended));
    }
}
