//! A rerun never destroys the evidence of the run before it (issue #20 §3). After a
//! `kill -9`, the same command refuses (exit 2), says to `verify`, `--resume` or
//! `--discard-previous-run`, and leaves every file of the killed run byte for byte as it was
//! (data files, log, JSON, journal, lock records), however often it is tried; with
//! `--discard-previous-run` it starts afresh and keeps the old log, JSON and journal under the
//! old run's id. A rerun after a run that found corruption keeps that run's log, JSON and
//! dumps under its id, and the dumps of each run sit in a directory named by its run id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::crash_support::*;

/// Every file under `dir` (recursively) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                all.insert(p.clone(), std::fs::read(&p).expect("read"));
            }
        }
    }
    all
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Starts a run, waits until its journal holds a checkpoint's worth, and kills it with SIGKILL.
fn killed_run(config: &Path, dir: &Path) {
    let mut run = start_run(config, dir, 11);
    let journal = dir.join("sqliosim.journal");
    let json = dir.join("sqliosim.log.json");
    let t = Instant::now();
    while !(journal.metadata().is_ok_and(|m| m.len() > 4096) && json.exists()) {
        assert!(
            run.try_wait().expect("try_wait").is_none(),
            "the run ended early"
        );
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no journal after 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    run.kill().expect("SIGKILL");
    run.wait().expect("wait");
}

#[test]
fn a_rerun_after_kill_9_is_refused_and_loses_nothing_until_discarded() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    killed_run(&config, dir.path());
    // Once the killed run's last direct writes have landed (they may after `wait`): compared
    // with a snapshot taken before, its own data file would read as changed by the rerun.
    let before = settled(|| snapshot(dir.path()));
    for name in [
        "sqliosim.mdx",
        "sqliosim.log.xml",
        "sqliosim.log.json",
        "sqliosim.journal",
    ] {
        assert!(
            before.contains_key(&dir.path().join(name)),
            "{name} missing"
        );
    }
    for attempt in 0..2 {
        let out = run_cmd(&config, dir.path())
            .args(["--duration", "1", "--cycles", "1", "--seed", "12"])
            .output()
            .expect("rerun");
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.contains("did not end cleanly"), "{err}");
        for what in [
            "sqliosim verify --dir",
            "--resume",
            "--discard-previous-run",
        ] {
            assert!(
                err.contains(what),
                "attempt {attempt}: no `{what}` in: {err}"
            );
        }
        let after = snapshot(dir.path());
        let changed: Vec<_> = before
            .keys()
            .chain(after.keys())
            .filter(|p| before.get(*p) != after.get(*p))
            .collect();
        assert!(
            changed.is_empty(),
            "attempt {attempt}: files of the killed run changed: {changed:?}"
        );
    }
    let old_id = run_id_of(&before[&dir.path().join("sqliosim.log.json")]);
    let out = run_cmd(&config, dir.path())
        .args(["--duration", "1", "--cycles", "1", "--seed", "13"])
        .arg("--discard-previous-run")
        .output()
        .expect("discarding rerun");
    assert_success(&out);
    let err = stderr(&out);
    assert!(err.contains("its evidence is kept"), "{err}");
    for (old, kept) in [
        ("sqliosim.log.xml", format!("sqliosim.log.{old_id}.xml")),
        ("sqliosim.log.json", format!("sqliosim.log.{old_id}.json")),
        ("sqliosim.journal", format!("sqliosim.{old_id}.journal")),
    ] {
        let kept = std::fs::read(dir.path().join(&kept)).expect(&kept);
        assert!(
            kept == before[&dir.path().join(old)],
            "{old} was not kept as it was"
        );
    }
    let new_id = run_id_of(&std::fs::read(dir.path().join("sqliosim.log.json")).expect("json"));
    assert_ne!(new_id, old_id, "a new run, with its own id");
}

/// The run id in a JSON summary, as 16 hex digits.
fn run_id_of(json: &[u8]) -> String {
    let doc: serde_json::Value = serde_json::from_slice(json).expect("json");
    let id = doc["run_id"].as_u64().expect("run_id in the JSON summary");
    format!("{id:016X}")
}

fn corrupting_run(dir: &Path, seed: &str) -> Output {
    let cfg = dir.join("fi.cfg.ini");
    std::fs::write(
        &cfg,
        "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\n[AuditUser]\nUserCount=1\n[RandomUser]\nUserCount=1\n\
         RandomUserReadWriteRatio=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n",
    )
    .expect("config");
    bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .arg("--dir")
        .arg(dir)
        .args([
            "--duration",
            "1",
            "--seed",
            seed,
            "--fault-injection",
            "flip@20",
        ])
        .output()
        .expect("run")
}

#[test]
fn a_rerun_after_corruption_keeps_the_evidence_under_the_old_run_id() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let first = corrupting_run(dir.path(), "21");
    assert_exit(&first, 1);
    let log = std::fs::read(dir.path().join("sqliosim.log.xml")).expect("log");
    let json = std::fs::read(dir.path().join("sqliosim.log.json")).expect("json");
    let id = run_id_of(&json);
    let dumps = dir.path().join("dumps").join(&id);
    let dumped = snapshot(&dumps);
    assert!(!dumped.is_empty(), "the finding was dumped in dumps/{id}/");
    let second = corrupting_run(dir.path(), "22");
    assert_exit(&second, 1);
    let err = stderr(&second);
    assert!(
        err.contains("found errors") && err.contains("its evidence is kept"),
        "{err}"
    );
    let kept_log =
        std::fs::read(dir.path().join(format!("sqliosim.log.{id}.xml"))).expect("kept log");
    let kept_json =
        std::fs::read(dir.path().join(format!("sqliosim.log.{id}.json"))).expect("kept json");
    assert!(
        kept_log == log && kept_json == json,
        "the old log and JSON were changed"
    );
    assert!(snapshot(&dumps) == dumped, "the old dumps were changed");
    let new_id = run_id_of(&std::fs::read(dir.path().join("sqliosim.log.json")).expect("json"));
    assert_ne!(new_id, id);
    assert!(
        !snapshot(&dir.path().join("dumps").join(&new_id)).is_empty(),
        "the new run's dumps are apart from the old run's"
    );
}

/// A run that stopped at an error in its setup (`ulimit -v` too low: `cannot allocate … I/O
/// buffers`, exit 2) exited by itself, its locks released, its journal begun and holding no
/// acknowledged write. Rerunning the same command once the limit is raised runs: there is no
/// loss to preserve (it used to refuse, `its journal has no End record`). Shown with a
/// finished run's journal cut back to its Start record, as such a run leaves it.
#[test]
fn a_rerun_after_a_setup_error_that_acknowledged_nothing_runs() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let out = run_cmd(&config, dir.path())
        .args(["--duration", "1", "--cycles", "1", "--seed", "21"])
        .output()
        .expect("first run");
    assert_success(&out);
    let journal = dir.path().join("sqliosim.journal");
    let bytes = std::fs::read(&journal).expect("journal");
    let start = start_record_len(&bytes);
    std::fs::write(&journal, &bytes[..start]).expect("cut the journal to its Start");
    let out = run_cmd(&config, dir.path())
        .args(["--duration", "1", "--cycles", "1", "--seed", "22"])
        .output()
        .expect("rerun");
    assert_success(&out);
    assert!(
        !stderr(&out).contains("did not end cleanly"),
        "{}",
        stderr(&out)
    );
}

/// A rerun over a file set whose journal is damaged (its Start lost, whole records after it)
/// is refused: the journal is the evidence of what its device did. It used to be skipped as a
/// journal of no run, and the rerun replaced it.
#[test]
fn a_rerun_over_a_damaged_journal_is_refused() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let out = run_cmd(&config, dir.path())
        .args(["--duration", "1", "--cycles", "1", "--seed", "31"])
        .output()
        .expect("first run");
    assert_success(&out);
    let journal = dir.path().join("sqliosim.journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    let start = start_record_len(&bytes);
    bytes[..start].fill(0);
    std::fs::write(&journal, &bytes).expect("lose the Start");
    let out = run_cmd(&config, dir.path())
        .args(["--duration", "1", "--cycles", "1", "--seed", "32"])
        .output()
        .expect("rerun");
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("is damaged"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&journal).expect("journal"),
        bytes,
        "the journal was kept"
    );
}

/// A resume over a journal damaged after a good Start carries the run on, and keeps the
/// damaged journal's bytes as evidence under the old run's id: the resume writes a new
/// journal in its place. It used to replace it, and the bytes after the damage were lost.
#[test]
fn a_resume_over_a_damaged_journal_keeps_its_bytes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let out = run_cmd(&config, dir.path())
        .args(["--duration", "1", "--cycles", "1", "--seed", "41"])
        .output()
        .expect("first run");
    assert_success(&out);
    let journal = dir.path().join("sqliosim.journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    let start = start_record_len(&bytes);
    assert!(
        bytes.len() > start + 64,
        "a journal with records after its Start"
    );
    bytes[start..start + 16].fill(0xA5);
    std::fs::write(&journal, &bytes).expect("damage the journal after its Start");
    let out = run_cmd(&config, dir.path())
        .args([
            "--duration",
            "1",
            "--cycles",
            "1",
            "--seed",
            "42",
            "--resume",
        ])
        .output()
        .expect("resume");
    let said = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
    assert_ne!(out.status.code(), Some(3), "{said}");
    let kept: Vec<PathBuf> = snapshot(dir.path())
        .into_iter()
        .filter(|(_, b)| *b == bytes)
        .map(|(p, _)| p)
        .collect();
    assert_eq!(kept.len(), 1, "the damaged journal is kept once: {said}");
    let name = kept[0]
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(said.contains(&name), "the kept copy is named: {said}");
}
