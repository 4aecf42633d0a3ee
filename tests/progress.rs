//! The progress line names the phase the cycle is in. A real (short) simulation's lines,
//! collected from the callback the terminal spinner is fed by, go through every phase in
//! order, and none says "main" once the final checkpoint has begun.

mod sim_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sim_support::small_plan;
use sqliosim::findings::MemorySink;
use sqliosim::io::DirectBackend;
use sqliosim::sched::simulate;

/// The phase a line names: its text before the first figure.
fn phase_of(line: &str) -> &str {
    let end = line
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(line.len());
    line[..end].trim_end()
}

#[test]
fn progress_lines_name_every_phase_in_order() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let plan = small_plan(dir.path(), 4, Duration::from_secs(2));
    let lines = Mutex::new(Vec::<String>::new());
    let on_tick = |l: &str| lines.lock().expect("lines").push(l.to_string());
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &DirectBackend::new(), sink, &on_tick).expect("simulate");
    assert!(!out.worker_panicked);
    let lines = lines.into_inner().expect("lines");
    let mut phases: Vec<&str> = lines.iter().map(|l| phase_of(l)).collect();
    phases.dedup();
    assert_eq!(
        phases,
        [
            "initial update",
            "initial checkpoint",
            "main",
            "final checkpoint",
            "audit"
        ],
        "{lines:#?}"
    );
    let last = lines.last().expect("a line");
    assert!(last.starts_with("audit 100 %  IOPS"), "{last}");
    let first_update = lines.first().expect("a line");
    assert!(
        first_update.starts_with("initial update "),
        "{first_update}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("main 00:0")),
        "the main phase shows its clock: {lines:#?}"
    );
}
