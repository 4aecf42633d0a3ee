//! The progress line names the phase the cycle is in. A real (short) simulation's lines, made
//! from the ticks it emits (what the terminal spinner shows), go through every phase in order,
//! and none says "main" once the final checkpoint has begun. The same stream carries each
//! phase as it begins and the summary at the end. On a real terminal (a pty) the line shows
//! the cycle and leaves no spinner behind.

use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::{Event, MemorySink};
use sqliosim::io::DirectBackend;
use sqliosim::report::sinks::progress::tick_line;
use sqliosim::sim::driver::simulate;

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
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &DirectBackend::new(), sink.clone()).expect("simulate");
    assert!(!out.worker_panicked);
    let ticks = sink.ticks();
    assert!(ticks.iter().all(|t| t.cycle == 1), "{ticks:#?}");
    let lines: Vec<String> = ticks.iter().map(|t| tick_line(t, None)).collect();
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
    assert!(last.starts_with("audit 100 %  cycle 1"), "{last}");
    assert!(last.contains("  IOPS "), "{last}");
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

#[test]
fn the_stream_names_each_phase_as_it_begins_and_ends_with_the_summary() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let plan = small_plan(dir.path(), 4, Duration::from_secs(1));
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &DirectBackend::new(), sink.clone()).expect("simulate");
    let events = sink.events();
    let began: Vec<(&str, u32)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Phase(p) => Some((p.phase.name(), p.cycle)),
            _ => None,
        })
        .collect();
    let phases = [
        "initial update",
        "initial checkpoint",
        "main",
        "final checkpoint",
        "audit",
    ];
    assert_eq!(began, phases.map(|p| (p, 1)), "{began:?}");
    // Each phase's ticks follow its Phase event, and its last tick closes it.
    let closing = sink.ticks().iter().filter(|t| t.finished).count();
    assert_eq!(closing, phases.len());
    match events.last() {
        Some(Event::Summary(s)) => assert_eq!(s.total.reads, out.summary.total.reads),
        other => panic!("the last event is not the summary: {other:?}"),
    }
}

/// What a terminal shows at the end of `raw` (a pty's bytes): each line as the last carriage
/// return and the erase sequences leave it.
fn screen(raw: &str) -> Vec<String> {
    let escapes = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").expect("regex");
    raw.split('\n')
        .map(|l| {
            l.trim_end_matches('\r')
                .rsplit('\r')
                .next()
                .unwrap_or_default()
        })
        .map(|l| escapes.replace_all(l, "").into_owned())
        .collect()
}

/// On a terminal (a pty made by util-linux `script`) the progress line shows the cycle, and
/// a warning printed while it is drawn leaves no spinner glyph in front of it; at the end no
/// spinner line is left. Skipped (with a line) where `script` is missing.
#[test]
fn the_terminal_progress_line_shows_the_cycle_and_leaves_no_spinner_behind() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quick.cfg.ini");
    let typescript = dir.path().join("tty.txt");
    // A --journal-dir on the device of the data files: the run warns about it while it draws.
    let cmd = format!(
        "{} run --config {} --dir {} --journal-dir {} --duration 2",
        env!("CARGO_BIN_EXE_sqliosim"),
        cfg.display(),
        dir.path().join("d").display(),
        dir.path().join("j").display()
    );
    let out = std::process::Command::new("script")
        .args(["-qfc", &cmd])
        .arg(&typescript)
        .output();
    if !out.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: util-linux `script` does not run here");
        return;
    }
    let raw =
        String::from_utf8_lossy(&std::fs::read(&typescript).expect("typescript")).into_owned();
    // The cycle, then the main-phase time left of this planned run (2 s: "2s left" at most).
    assert!(
        raw.contains("  cycle 1/1  2s left  IOPS") || raw.contains("  cycle 1/1  1s left  IOPS"),
        "the line names the cycle and the time left: {raw:?}"
    );
    assert!(
        raw.contains("  cycle 1/1  0s left  IOPS"),
        "the time left reaches 0 at the end of the main phase: {raw:?}"
    );
    let lines = screen(&raw);
    let spinner = |l: &String| l.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c));
    let stray: Vec<&String> = lines.iter().filter(|l| spinner(l)).collect();
    assert!(stray.is_empty(), "spinner left on screen: {stray:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("WARNING: journal on the device")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("Verdict: CLEAN")),
        "{lines:#?}"
    );
}
