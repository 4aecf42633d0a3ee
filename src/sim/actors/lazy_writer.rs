//! The lazy writer: when the buffer pool is under pressure, dirty pages written in clock
//! order, as the checkpoint writes them.

use std::time::Duration;

use super::checkpoint::write_dirty;
use super::worker::Worker;

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
