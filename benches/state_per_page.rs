//! Per-page state of a 1 TiB file set (issue #39): builds the oracle of 134,217,728 pages
//! (`STATE_PAGES` to change), writes every page, journals them all as a sync point and the
//! journal thread do (the durable generations go into the same words), writes every page once
//! more, and prints the resident memory this added, per page, with the peak. Then the states a
//! DBCC check's snapshot adds over the same pages, each case in a fresh process of this bench:
//! 0.1 % and 10 % of the pages written while the check is open (captured by their writers, at
//! pages spread over the file), and every page (the dense worst case).
//!
//! `cargo bench --bench state_per_page`. Not a criterion bench: what it measures is memory,
//! read from `/proc/self/status`, not time.

use sqliosim::page::ExpectedState;
use sqliosim::sim::engine::oracle::Oracle;
use sqliosim::sim::engine::snapshot::PageStates;

/// The environment variable that makes this process one snapshot case: pages captured per
/// million.
const SNAPSHOT_CASE: &str = "STATE_SNAPSHOT_PPM";

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

/// Captures `ppm` pages a million of a snapshot of `pages` pages, spread by a stride prime to
/// `pages - 1`, and prints what the states added.
fn snapshot_case(pages: u64, ppm: u64) {
    let (before, _) = rss_kb();
    let states = PageStates::new(pages);
    let n = (pages - 1) * ppm / 1_000_000;
    // 2,654,435,761 is prime and above every factor of 2^27 - 1 (7, 73, 262,657).
    let stride = 2_654_435_761 % (pages - 1);
    let mut page = 0;
    for i in 0..n {
        states.capture(1 + page, ExpectedState::Written { generation: i + 1 });
        page = (page + stride) % (pages - 1);
    }
    let (after, peak) = rss_kb();
    let added = (after.saturating_sub(before)) * 1024;
    println!(
        "snapshot, {n} pages written during the check ({:.1} %): resident memory added {:.1} MiB, {:.3} bytes a page of the files; counted {:.3} bytes a page, {} of {} shards dense; VmHWM {} MiB",
        ppm as f64 / 10_000.0,
        added as f64 / 1048576.0,
        added as f64 / pages as f64,
        states.memory_bytes() as f64 / pages as f64,
        states.dense_shards(),
        sqliosim::sim::engine::snapshot::shards_for(pages),
        peak / 1024
    );
}

fn main() {
    let pages: u64 = std::env::var("STATE_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 27);
    if let Some(ppm) = std::env::var(SNAPSHOT_CASE)
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return snapshot_case(pages, ppm);
    }
    oracle_case(pages);
    // Each snapshot case in a process of its own: memory freed by one would be reused by the
    // next and not counted.
    let exe = std::env::current_exe().expect("this bench's path");
    for ppm in [1_000, 100_000, 1_000_000] {
        let out = std::process::Command::new(&exe)
            .env(SNAPSHOT_CASE, ppm.to_string())
            .output()
            .expect("run a snapshot case");
        print!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
    }
}

fn oracle_case(pages: u64) {
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
