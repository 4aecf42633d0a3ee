//! The asynchronous actors' own io_uring (issue #15 §3), end to end through the kernel: on an
//! io_uring run with `SQLIOSIM_OWN_RINGS=1` the initial update's writes go through the writing
//! thread's own ring (its log message counts them, the run header says so), a write faultfs
//! drops on that path is caught as a lost write at its page and nothing else, and a clean run
//! through the same path has no finding. By default (the path switched off) the same fault is
//! caught through the shared service and no request is on an own ring: the switch really
//! changes the path. Skipped, with a SKIPPED line, where FUSE is unavailable (failing instead
//! when SQLIOSIM_REQUIRE_FUSE=1).
//!
//! Run it with `cargo test --release --test kernel own_ring::`.

use crate::fuse_support::{describe, findings, Rig, Shape, DATA};

/// What one run showed.
struct Seen {
    code: Option<i32>,
    /// (class, page) of every finding.
    found: Vec<(String, u64)>,
    /// Requests the initial update says went through its own io_uring.
    own_requests: u64,
    /// The console header says the asynchronous actors have rings of their own.
    header_says_own: bool,
    /// Times the armed fault fired, if one was armed.
    fired: Option<u64>,
    text: String,
}

/// The count in `…, N requests on its own io_uring` of the initial update's log message.
fn own_requests(log: &str) -> u64 {
    log.lines()
        .filter(|l| l.contains("Initial update of"))
        .filter_map(|l| {
            let end = l.find(" requests on its own io_uring")?;
            l[..end].rsplit(' ').next()?.parse::<u64>().ok()
        })
        .sum()
}

fn run(name: &str, fault: Option<&str>, env: &[(&str, &str)]) -> Seen {
    let rig = Rig::new(name, Shape::default());
    let id = fault.map(|f| rig.inject(f));
    let out = rig.finish(rig.spawn_with_env(env));
    let log = std::fs::read_to_string(rig.log_dir().join("sqliosim.log.xml")).unwrap_or_default();
    let stdout = String::from_utf8_lossy(&out.stdout);
    Seen {
        code: out.status.code(),
        found: findings(&out, rig.log_dir())
            .into_iter()
            .map(|f| (f.class, f.page))
            .collect(),
        own_requests: own_requests(&log),
        header_says_own: stdout.contains("asynchronous actors on io_uring rings of their own"),
        fired: id.map(|id| rig.fired(id)),
        text: format!("{}\n--- log\n{log}", describe(&out)),
    }
}

/// At least one finding, and every one a lost write of page 10 (a page may be reported by
/// more than one reader).
fn only_lost_page_10(found: &[(String, u64)]) -> bool {
    !found.is_empty() && found.iter().all(|(c, p)| c == "lost_write" && *p == 10)
}

#[test]
fn the_own_ring_path_is_taken_on_io_uring_and_catches_a_lost_write_without_false_alarms() {
    if !faultfs::fuse_or_skip("own_ring") {
        return;
    }
    let lost = format!("lost file={DATA} page=10");

    let on = [("SQLIOSIM_OWN_RINGS", "1")];
    let clean = run("own-clean", None, &on);
    assert_eq!(clean.code, Some(0), "clean run: {}", clean.text);
    assert!(clean.found.is_empty(), "false alarm: {}", clean.text);
    assert!(clean.header_says_own, "header: {}", clean.text);
    // One request per page (no scatter/gather), all 1,023 data pages but the header.
    assert!(
        clean.own_requests >= 1000,
        "own ring not used: {}",
        clean.text
    );

    let faulty = run("own-lost", Some(&lost), &on);
    assert!(
        faulty.own_requests >= 1000,
        "own ring not used: {}",
        faulty.text
    );
    assert!(
        faulty.fired >= Some(1),
        "fault never fired: {}",
        faulty.text
    );
    assert_eq!(faulty.code, Some(1), "{}", faulty.text);
    assert!(only_lost_page_10(&faulty.found), "{}", faulty.text);

    let shared = run("shared-lost", Some(&lost), &[]);
    assert_eq!(shared.own_requests, 0, "off by default: {}", shared.text);
    assert!(!shared.header_says_own, "{}", shared.text);
    assert!(
        shared.fired >= Some(1),
        "fault never fired: {}",
        shared.text
    );
    assert_eq!(shared.code, Some(1), "{}", shared.text);
    assert!(only_lost_page_10(&shared.found), "{}", shared.text);
}
