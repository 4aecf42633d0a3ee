//! The Display Monitor: ends the main phase when its time is up, reports I/Os outstanding
//! for more than 15 seconds (each once), and feeds the progress line.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::run::Timed;

use crate::actors::shared::Shared;
use crate::findings::Severity;

/// How often the monitor wakes.
const TICK: Duration = Duration::from_millis(250);

/// Watches the I/O of a phase until its workers are done: reports I/Os outstanding for longer
/// than the limit, each once; for a timed phase also ends it on time and calls the progress
/// callback about once a second.
pub fn monitor(sh: &Shared, workers_done: &AtomicBool, timed: Option<Timed<'_>>) {
    let start = Instant::now();
    let mut last_line = Instant::now();
    let mut last_ops = sh.live.snapshot();
    while !workers_done.load(Ordering::Acquire) {
        if let Some((_, length)) = timed {
            if start.elapsed() >= length {
                sh.stop.end_phase();
            }
        }
        std::thread::sleep(TICK);
        report_long_io(sh);
        if let Some((on_tick, length)) = timed {
            if last_line.elapsed() >= Duration::from_secs(1) {
                let now = sh.live.snapshot();
                let secs = last_line.elapsed().as_secs_f64();
                on_tick(&super::progress::line(
                    &last_ops,
                    &now,
                    secs,
                    start.elapsed(),
                    length,
                    sh.finding_count(),
                ));
                last_ops = now;
                last_line = Instant::now();
            }
        }
    }
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
