//! The Display Monitor: ends the main phase when its time is up, reports I/Os outstanding
//! for more than 15 seconds (each once), and emits a [`Tick`] of every phase about once a
//! second (the progress line and the periodic JSON rewrite are sinks of them).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::run::Ticker;

use crate::actors::shared::Shared;
use crate::events::{Event, Phase, Tick};
use crate::findings::Severity;
use crate::stats::LiveSnapshot;

/// How often the monitor wakes.
const TICK: Duration = Duration::from_millis(250);

/// Watches the I/O of a phase until its workers are done: reports I/Os outstanding for longer
/// than the limit, each once; ends the main phase on time; and emits a tick of the phase about
/// once a second, and a closing one.
pub fn monitor(sh: &Shared, workers_done: &AtomicBool, ticker: Option<Ticker>) {
    let start = Instant::now();
    let mut last_line = Instant::now();
    let at_start = sh.live.snapshot();
    let mut last_ops = at_start;
    let mut first = true;
    while !workers_done.load(Ordering::Acquire) {
        if let Some(Ticker {
            phase: Phase::Main { length },
            ..
        }) = ticker
        {
            if start.elapsed() >= length {
                sh.stop.end_phase();
            }
        }
        std::thread::sleep(TICK);
        report_long_io(sh);
        let Some(t) = ticker else { continue };
        // The first line comes after one tick, so that even a short phase is named.
        if first || last_line.elapsed() >= Duration::from_secs(1) {
            last_ops = tick(sh, &t, start, (&at_start, &last_ops), last_line, false);
            last_line = Instant::now();
            first = false;
        }
    }
    // A closing line per phase: the display (and a log of the lines) shows each phase ran.
    if let Some(t) = ticker {
        tick(sh, &t, start, (&at_start, &last_ops), last_line, true);
    }
}

/// Emits one tick of `t`'s phase; `(at_start, last)` are the snapshots at the start of the
/// phase and at the previous tick, taken `since` then. Returns the snapshot now.
fn tick(
    sh: &Shared,
    t: &Ticker,
    start: Instant,
    (at_start, last): (&LiveSnapshot, &LiveSnapshot),
    since: Instant,
    finished: bool,
) -> LiveSnapshot {
    let now = sh.live.snapshot();
    // The initial update writes each page once, the audit reads each once.
    let done_bytes = match t.phase {
        Phase::Audit { .. } => now.bytes_read.saturating_sub(at_start.bytes_read),
        _ => now.bytes_written.saturating_sub(at_start.bytes_written),
    };
    let planned = (sh.plan.cycles > 0).then(|| sh.plan.cycle_duration * sh.plan.cycles);
    let tick = Tick {
        cycle: t.cycle,
        phase: t.phase,
        elapsed: start.elapsed(),
        run_elapsed: sh.start.elapsed(),
        planned,
        done_bytes,
        finished,
        before: *last,
        now,
        interval: since.elapsed(),
        findings: sh.finding_count(),
        in_flight: sh.depth.reading().inflight,
        allowed: sh.throttles.iter().map(|t| t.allowed() as u64).sum(),
    };
    sh.sink.emit(Event::Tick(Box::new(tick)));
    now
}

fn report_long_io(sh: &Shared) {
    let long = sh.inflight.newly_long(sh.plan.long_io);
    if long > 0 {
        let text = format!(
            "{long} IO requests are outstanding for more than {} sec.",
            sh.plan.long_io.as_secs_f64()
        );
        sh.message(Severity::Warning, "Display Monitor", "CheckForLongIO", text);
    }
}
