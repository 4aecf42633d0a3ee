//! A writer killed with SIGKILL mid-run leaves a log and a JSON summary that `sqliosim report`
//! reads. The writer is this test binary re-run as a child that logs findings until killed
//! (the simulation's own kill test drives a real run).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sqliosim::events::{Event, EventSink};

use super::fixtures;

const CHILD_ENV: &str = "SQLIOSIM_TEST_EVIDENCE_CHILD";

/// In the child: log findings forever. In the parent (no env var): nothing.
#[test]
fn evidence_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let ev =
        sqliosim::report::Evidence::create(fixtures::options(&dir, 100_000), fixtures::run_info())
            .unwrap();
    fixtures::startup(&ev);
    let all = fixtures::every_class();
    for i in 0.. {
        let mut f = all[i % all.len()].clone();
        f.seq = i as u64 + 1;
        ev.emit(Event::Finding(Box::new(f)));
        if i % 8 == 0 {
            ev.emit(Event::Summary(Box::new(fixtures::summary())));
        }
    }
}

fn findings_logged(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.matches("<FINDING ").count())
}

#[test]
fn killed_writer_leaves_readable_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "killed::evidence_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = dir.path().join("sqliosim.log.xml");
    let deadline = Instant::now() + Duration::from_secs(60);
    while findings_logged(&log) < 40 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let l = sqliosim::report::readers::load::load(&log).unwrap();
    assert!(
        l.integrity_errors() >= 40,
        "{} findings read",
        l.integrity_errors()
    );
    assert!(!l.complete);
    let j = sqliosim::report::readers::load::load(&dir.path().join("summary.json")).unwrap();
    let doc = j.json.as_ref().unwrap();
    assert!(!doc.complete && doc.outcome == "running");
    // The JSON is rewritten right after each log entry: it may lag one finding behind.
    assert!(
        doc.findings.len() >= 39,
        "{} findings in the JSON",
        doc.findings.len()
    );
    assert!(doc.stats.is_some());
    for input in [&log, &dir.path().join("summary.json")] {
        let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
            .arg("report")
            .arg(input)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("the run did not finish"), "{said}");
    }
}
