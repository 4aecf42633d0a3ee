//! The Display Monitor: ends the main phase when its time is up, reports I/Os outstanding
//! for more than 15 seconds (each once), and emits a [`Tick`] of every phase about once a
//! second (the progress line and the status line are sinks of them), and the running
//! statistics every [`STATS_EVERY`] and as the phase ends (the JSON heartbeat and the metrics
//! file).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::events::{Event, Phase, Tick};
use crate::findings::{Message, Severity};
use crate::sim::actors::context::Run;
use crate::stats::LiveSnapshot;

/// How often the monitor wakes.
const TICK: Duration = Duration::from_millis(250);

/// How often the running statistics are summarised and sent, while a phase runs.
pub const STATS_EVERY: Duration = Duration::from_secs(2);

/// The phase the monitor's ticks describe, and its cycle (the main phase also ends on time).
#[derive(Clone, Copy)]
pub struct Ticker {
    /// The test cycle (1-based).
    pub cycle: u32,
    /// The phase running.
    pub phase: Phase,
}

/// Watches the I/O of a phase until its workers are done: reports I/Os outstanding for longer
/// than the limit, each once; ends the main phase on time; and emits a tick of the phase about
/// once a second, and a closing one.
pub fn monitor(run: &Run<'_>, workers_done: &AtomicBool, ticker: Option<Ticker>) {
    let start = crate::clock::now();
    let mut last_line = crate::clock::now();
    let at_start = run.reporting.live.snapshot();
    let mut last_ops = at_start;
    let mut first = true;
    let mut last_stats = crate::clock::now();
    while !workers_done.load(Ordering::Acquire) {
        if let Some(Ticker {
            phase: Phase::Main { length },
            ..
        }) = ticker
        {
            if crate::clock::since(start) >= length {
                run.controls.stop.end_phase();
            }
        }
        crate::clock::sleep(TICK);
        report_long_io(run);
        let Some(t) = ticker else { continue };
        // The first line comes after one tick, so that even a short phase is named.
        if first || crate::clock::since(last_line) >= Duration::from_secs(1) {
            last_ops = tick(run, &t, start, (&at_start, &last_ops), last_line, false);
            last_line = crate::clock::now();
            first = false;
        }
        if crate::clock::since(last_stats) >= STATS_EVERY {
            send_stats(run);
            last_stats = crate::clock::now();
        }
    }
    // A closing line per phase: the display (and a log of the lines) shows each phase ran.
    if let Some(t) = ticker {
        send_stats(run);
        tick(run, &t, start, (&at_start, &last_ops), last_line, true);
    }
}

/// Emits the running statistics of the run so far.
fn send_stats(run: &Run<'_>) {
    let summary = std::sync::Arc::new(super::running_summary(run));
    run.reporting.sink.emit(Event::Stats(summary));
}

/// Emits one tick of `t`'s phase; `(at_start, last)` are the snapshots at the start of the
/// phase and at the previous tick, taken `since` then. Returns the snapshot now.
fn tick(
    run: &Run<'_>,
    t: &Ticker,
    start: Instant,
    (at_start, last): (&LiveSnapshot, &LiveSnapshot),
    since: Instant,
    finished: bool,
) -> LiveSnapshot {
    let now = run.reporting.live.snapshot();
    // The initial update writes each page once, the audit reads each once.
    let done_bytes = match t.phase {
        Phase::Audit { .. } => now.bytes_read.saturating_sub(at_start.bytes_read),
        _ => now.bytes_written.saturating_sub(at_start.bytes_written),
    };
    let planned = (run.plan.cycles > 0).then(|| run.plan.cycle_duration * run.plan.cycles);
    let tick = Tick {
        cycle: t.cycle,
        cycles: run.plan.cycles,
        phase: t.phase,
        elapsed: crate::clock::since(start),
        run_elapsed: crate::clock::since(run.reporting.start),
        planned,
        done_bytes,
        finished,
        before: *last,
        now,
        interval: crate::clock::since(since),
        findings: run.finding_count(),
        in_flight: run.controls.depth.reading().inflight,
        allowed: run
            .controls
            .throttles
            .iter()
            .map(|t| t.allowed() as u64)
            .sum(),
        long_ios: run.controls.io_ages.long_total(),
        witness_lag: run.journal.as_ref().and_then(|j| j.service.witness_lag()),
    };
    run.reporting.sink.emit(Event::Tick(Box::new(tick)));
    now
}

fn report_long_io(run: &Run<'_>) {
    let long = run.controls.io_ages.newly_long(run.plan.long_io);
    if long > 0 {
        let text = format!(
            "{long} IO requests are outstanding for more than {} sec.",
            run.plan.long_io.as_secs_f64()
        );
        // SQLIOSim's view shows these as `Error: 0x00000000`.
        let m = Message::new(Severity::Warning, "Display Monitor", "CheckForLongIO", text);
        run.send(m.with_errno(0));
    }
}
