//! The durability promise across a restart (issue #21 §1, §2), the way a user meets it: a
//! `run --resume` cut before its main phase, by SIGINT or SIGKILL, leaves a journal that
//! `verify` holds the files to without a false alarm; and pages the device rolls back while a
//! resume is starting (verifying and rewriting the files) are still held to what the run before
//! journaled, so `verify` names each one.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::crash_support::*;
use rustix::process::Signal;
use sqliosim::page::layout::read_stamp;
use sqliosim::sim::engine::journal::{decode_all, Record};

/// Data pages of the configuration below (64 MB: the initial update takes a few hundred ms).
const PAGES: u64 = 8192;

/// The shape of configs/deep-checkpoint.cfg.ini (random users only, a fixed-size data file,
/// WriteThrough off, StopOnError on), small enough to run in seconds.
/// MaxOutstandingIO=2 keeps a resume's initial update at two 64-page requests in flight, the
/// pace it had when the I/O frames (two per request of the depth) bounded it: the cuts below
/// are timed to land inside it, and 64 requests in flight rewrote the whole file before them.
fn config(dir: &Path) -> PathBuf {
    let text = "[CONFIG]\nStopOnError=TRUE\nTestCycles=1\nTestCycleDuration=1\nMaxMemoryMB=8\n\
         WriteThrough=FALSE\nMaxOutstandingIO=2\n\
         [RandomUser]\nUserCount=2\nMinIOChainLength=1\nMaxIOChainLength=64\nSleepAfter=0\n\
         [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [ShrinkUser]\nMinShrinkInterval=100000\nMaxShrinkInterval=100000\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=64\nMaxSize=64\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";
    let path = dir.join("resume.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

fn start_resume(config: &Path, dir: &Path) -> Child {
    run_cmd(config, dir)
        .args(["--resume", "--duration", "10s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sqliosim run --resume")
}

/// Waits until the journal is the resumed run's own (written, not ended: the old one ended
/// with End) and has a batch, i.e. the resume has begun its journal and is verifying or
/// rewriting the files.
fn wait_for_resumed_journal(dir: &Path, child: &mut Child) {
    let journal = dir.join("sqliosim.journal");
    let t = Instant::now();
    loop {
        let (records, _) = decode_all(&std::fs::read(&journal).unwrap_or_default());
        let mark = records.iter().any(|r| matches!(r, Record::Mark { .. }));
        if mark && !records.contains(&Record::End) {
            return;
        }
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the resume ended before its journal had a batch"
        );
        assert!(t.elapsed() < Duration::from_secs(30), "no resumed journal");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn signal(child: &Child, sig: Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, sig).expect("send the signal");
}

/// Verify must be clean; says what it printed when not.
fn assert_verify_clean(dir: &Path, what: &str) {
    let out = verify(dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: verify found\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_resume_cut_before_its_main_phase_leaves_no_false_log_loss() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = config(dir.path());
    assert_success(&run_cmd(&config, dir.path()).output().expect("run"));
    // Ctrl-C and SIGKILL at the moment the resume has journaled its start (the journal
    // said `durable_end` = the log's next lap there), then during its initial update.
    let cuts = [
        (Signal::KILL, 0),
        (Signal::INT, 0),
        (Signal::KILL, 150),
        (Signal::INT, 150),
    ];
    for (sig, after_ms) in cuts {
        let mut child = start_resume(&config, dir.path());
        wait_for_resumed_journal(dir.path(), &mut child);
        std::thread::sleep(Duration::from_millis(after_ms));
        signal(&child, sig);
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked"),
            "{sig:?} after {after_ms} ms: {stderr}"
        );
        assert_verify_clean(
            dir.path(),
            &format!("{sig:?} {after_ms} ms into the resume"),
        );
    }
    // And a resume after all those runs to its end with nothing to report.
    let out = run_cmd(&config, dir.path())
        .args(["--resume", "--duration", "1"])
        .output()
        .expect("resume");
    assert_success(&out);
}

fn generation(page: &[u8]) -> u64 {
    read_stamp(page).map_or(0, |s| s.generation)
}

/// Pages of the data file, 1.., as they are now.
fn pages(data: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(data).expect("read data file");
    (1..PAGES)
        .map(|p| bytes[(p * PAGE) as usize..((p + 1) * PAGE) as usize].to_vec())
        .collect()
}

/// The cut must land while the second resume has not yet rewritten at least 5 pages (its
/// start is the time between its first journal batch and its rewrites). On a quiet machine
/// 100 ms after that batch was once too late (no page left: 1 try in 5, the binary of the
/// session before as well), so each try cuts sooner than the one before.
#[test]
fn pages_rolled_back_while_a_resume_starts_are_lost_writes() {
    for delay_ms in [100, 40, 10, 0] {
        if rolled_back_after_a_cut(delay_ms) {
            return;
        }
    }
    panic!("in 4 tries, the second resume rewrote every page before the cut");
}

/// One try: false when the cut came too late to leave pages to roll back.
fn rolled_back_after_a_cut(delay_ms: u64) -> bool {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = config(dir.path());
    let data = dir.path().join("sqliosim.mdx");
    // 1. A run, cut; its pages are the old images a device could give back later.
    let mut child = run_cmd(&config, dir.path())
        .args(["--duration", "10s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run");
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, Signal::KILL);
    child.wait().expect("wait");
    let old = pages(&data);
    // 2. A resume to its end: every page rewritten, and journaled durable at its end.
    let out = run_cmd(&config, dir.path())
        .args(["--resume", "--duration", "1"])
        .output()
        .expect("resume");
    assert_success(&out);
    let durable = pages(&data);
    // 3. A second resume, cut `delay_ms` into its start.
    let mut child = start_resume(&config, dir.path());
    wait_for_resumed_journal(dir.path(), &mut child);
    std::thread::sleep(Duration::from_millis(delay_ms));
    signal(&child, Signal::KILL);
    child.wait().expect("wait");
    // 4. The device gives back old images of pages that resume had not rewritten yet.
    let now = pages(&data);
    let rolled: Vec<u64> = (0..now.len())
        .filter(|&i| now[i] == durable[i] && generation(&old[i]) < generation(&durable[i]))
        .step_by(97)
        .take(25)
        .map(|i| i as u64 + 1)
        .collect();
    if rolled.len() < 5 {
        eprintln!(
            "cut {delay_ms} ms into the second resume: {} page(s) left unrewritten, too few; trying sooner",
            rolled.len()
        );
        return false;
    }
    for &p in &rolled {
        write_page(&data, p, &old[p as usize - 1]);
    }
    // 5. Every one is a lost write, and nothing else is reported.
    let out = verify(dir.path());
    let mut got = findings(&out);
    got.sort_by_key(|f| f.1);
    let expected: Vec<(String, u64)> = rolled
        .iter()
        .map(|&p| ("lost_write".to_string(), p))
        .collect();
    assert_eq!(got, expected, "{}", String::from_utf8_lossy(&out.stderr));
    assert_exit(&out, 1);
    true
}
