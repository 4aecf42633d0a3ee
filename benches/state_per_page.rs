//! Per-page state of a 1 TiB file set (issue #39): builds the oracle of 134,217,728 pages
//! (`STATE_PAGES` to change), writes every page, journals them all as a sync point and the
//! journal thread do (the durable generations go into the same words), writes every page once
//! more, and prints the resident memory this added, per page, with the peak.
//!
//! `cargo bench --bench state_per_page`. Not a criterion bench: what it measures is memory,
//! read from `/proc/self/status`, not time.

use sqliosim::sim::engine::oracle::Oracle;

/// `VmRSS` and `VmHWM` of this process, kB.
fn rss_kb() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn write_all(o: &Oracle, pages: u64) {
    for p in 0..pages {
        let g = o.begin_write(p);
        o.complete_write(p, g, true);
    }
}

fn main() {
    let pages: u64 = std::env::var("STATE_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 27);
    let (before, _) = rss_kb();
    let o = Oracle::new(1, 0, pages).with_latches_for(pages);
    write_all(&o, pages);
    o.snap_changed(pages);
    let mut journaled = 0u64;
    o.take_snapped(pages, |p, g| {
        o.raise_durable(p, g);
        journaled += 1;
    });
    write_all(&o, pages);
    let (after, peak) = rss_kb();
    let added = (after.saturating_sub(before)) * 1024;
    println!(
        "pages {pages} ({} GiB of files), journaled {journaled}, spilled {}",
        (pages * 8192) >> 30,
        o.spilled()
    );
    println!(
        "resident memory added {:.1} MiB, {:.2} bytes a page; VmHWM {} MiB; latch stripes {}",
        added as f64 / 1048576.0,
        added as f64 / pages as f64,
        peak / 1024,
        o.stripe_count()
    );
}
