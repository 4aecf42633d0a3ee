//! The Display Monitor: ends the main phase when its time is up, reports I/Os outstanding
//! for more than 15 seconds (each once), and feeds the progress line.

use std::time::{Duration, Instant};

use crate::actors::shared::Shared;
use crate::findings::Severity;

/// An I/O outstanding longer than this is reported.
pub const LONG_IO: Duration = Duration::from_secs(15);
/// How often the monitor wakes.
const TICK: Duration = Duration::from_millis(250);

/// Runs until the main phase ends; calls `on_tick` with a progress line about once a second.
pub fn monitor(sh: &Shared, on_tick: &(dyn Fn(&str) + Sync)) {
    let start = Instant::now();
    let length = super::run::phase_length(sh);
    let mut last_line = Instant::now() - Duration::from_secs(1);
    let mut last_ops = sh.live.snapshot();
    while !sh.stop.phase_over() {
        if start.elapsed() >= length {
            sh.stop.end_phase();
            break;
        }
        std::thread::sleep(TICK);
        let long = sh.inflight.newly_long(LONG_IO);
        if long > 0 {
            sh.message(
                Severity::Warning,
                "Display Monitor",
                "CheckForLongIO",
                format!("{long} IO requests are outstanding for more than 15 sec."),
            );
        }
        if last_line.elapsed() >= Duration::from_secs(1) {
            let now = sh.live.snapshot();
            let secs = last_line.elapsed().as_secs_f64();
            let line = super::progress::line(&last_ops, &now, secs, start.elapsed(), length, sh.finding_count());
            on_tick(&line);
            last_ops = now;
            last_line = Instant::now();
        }
    }
}
