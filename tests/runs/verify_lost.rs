//! `sqliosim verify` when whole files are lost, as a user meets it: a short real run, then a
//! file deleted, replaced by another run's, given another file id, stripped of its header page,
//! or cut to nothing, then `verify --dir`. Each is a finding (exit 1) naming the file and what
//! the journal held durable for it; before, each said `Verdict: CLEAN` (or, for lost headers,
//! exit 2 `no file created by sqliosim found`). A journal record naming a page far beyond the
//! file (checksum recomputed) is JOURNAL DAMAGED, within a 1 GiB address-space limit, where it
//! used to allocate 2 GiB (or abort) and say CLEAN. And `DeleteFilesAtShutdown` leaves no
//! journal naming the files it deleted (no false alarm).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::crash_support::{assert_exit, bin, read_page, start_record_len, write_page, PAGE};
use sqliosim::page::FileHeader;

/// A one-second run's configuration: a 2 MB data file and a 1 MB log.
fn config(dir: &Path, delete_at_shutdown: bool) -> PathBuf {
    let text = format!(
        "[CONFIG]\nTestCycles=1\nTestCycleDuration=1\nMaxMemoryMB=4\nWriteThrough=TRUE\nDeleteFilesAtShutdown={delete_at_shutdown}\n\
         [RandomUser]\nUserCount=1\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n"
    );
    let path = dir.join("small.cfg.ini");
    std::fs::write(&path, text).expect("write config");
    path
}

/// Runs the small simulation in `dir` with `seed`.
fn run_in(dir: &Path, seed: u64) {
    std::fs::create_dir_all(dir).expect("dir");
    let out = bin()
        .args(["run", "--config"])
        .arg(config(dir, false))
        .arg("--dir")
        .arg(dir)
        .args(["--seed", &seed.to_string()])
        .output()
        .expect("run");
    assert_exit(&out, 0);
}

/// Two finished runs (seeds 1 and 2), made once and copied for each test.
fn runs() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static RUNS: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let (a, b) = (root.path().join("a"), root.path().join("b"));
        run_in(&a, 1);
        run_in(&b, 2);
        // Moved away, so that the paths the journal names are gone and each test's copy
        // stands alone (its files found by their names, as after a restore elsewhere).
        let (a2, b2) = (root.path().join("a.moved"), root.path().join("b.moved"));
        std::fs::rename(&a, &a2).expect("move");
        std::fs::rename(&b, &b2).expect("move");
        (root, a2, b2)
    })
}

/// A fresh copy of run 1's directory.
fn copy_of_run() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).expect("dir");
    for e in std::fs::read_dir(&runs().1).expect("read") {
        let p = e.expect("entry").path();
        if p.is_file() {
            std::fs::copy(&p, dir.join(p.file_name().expect("name"))).expect("copy");
        }
    }
    (tmp, dir)
}

fn verify(dir: &Path) -> Output {
    bin()
        .args(["verify", "--dir"])
        .arg(dir)
        .output()
        .expect("verify")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The `ERROR #n: CLASS on PATH …` lines.
fn errors(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("ERROR #"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_missing_data_file_is_a_lost_file_naming_the_pages_the_journal_held() {
    let (_t, dir) = copy_of_run();
    std::fs::remove_file(dir.join("sqliosim.mdx")).expect("rm");
    let out = verify(&dir);
    assert_exit(&out, 1);
    let e = errors(&out);
    assert_eq!(e.len(), 1, "{}", text(&out));
    assert!(
        e[0].contains("lost_file on ") && e[0].contains("sqliosim.mdx"),
        "{e:?}"
    );
    assert!(e[0].contains("the file is missing"), "{e:?}");
    assert!(
        e[0].contains("page(s) durable (up to page 255, generation"),
        "{e:?}"
    );
    assert!(
        text(&out).contains("1 INTEGRITY ERROR(S)"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_missing_log_file_names_the_durable_log_it_held() {
    let (_t, dir) = copy_of_run();
    std::fs::remove_file(dir.join("sqliosim.ldx")).expect("rm");
    let out = verify(&dir);
    assert_exit(&out, 1);
    let e = errors(&out);
    assert_eq!(e.len(), 1, "{}", text(&out));
    assert!(
        e[0].contains("lost_file on ") && e[0].contains("sqliosim.ldx"),
        "{e:?}"
    );
    assert!(e[0].contains("its log durable up to LSN"), "{e:?}");
}

#[test]
fn a_data_file_replaced_by_another_runs_file_is_a_lost_file() {
    let (_t, dir) = copy_of_run();
    std::fs::copy(runs().2.join("sqliosim.mdx"), dir.join("sqliosim.mdx")).expect("replace");
    let out = verify(&dir);
    assert_exit(&out, 1);
    let e = errors(&out);
    assert_eq!(e.len(), 1, "{}", text(&out));
    assert!(
        e[0].contains("lost_file") && e[0].contains("of another run"),
        "{e:?}"
    );
    assert!(e[0].contains("it was replaced"), "{e:?}");
    assert!(
        !text(&out).contains("not checked; `sqliosim verify --no-journal"),
        "the replacement is the finding, not a file merely named:\n{}",
        text(&out)
    );
}

#[test]
fn a_header_whose_file_id_changed_is_a_lost_file() {
    let (_t, dir) = copy_of_run();
    let data = dir.join("sqliosim.mdx");
    let mut h = FileHeader::decode(&read_page(&data, 0)).expect("header");
    h.file_id = 7;
    write_page(&data, 0, &h.encode());
    let out = verify(&dir);
    assert_exit(&out, 1);
    let e = errors(&out);
    assert_eq!(e.len(), 1, "{}", text(&out));
    assert!(
        e[0].contains("says it is file 7 of this run, not file 0"),
        "{e:?}"
    );
}

#[test]
fn lost_header_pages_are_findings_and_the_pages_are_still_checked() {
    let (_t, dir) = copy_of_run();
    for name in ["sqliosim.mdx", "sqliosim.ldx"] {
        write_page(&dir.join(name), 0, &vec![0u8; PAGE as usize]);
    }
    let out = verify(&dir);
    assert_exit(&out, 1);
    let e = errors(&out);
    assert_eq!(e.len(), 2, "{}", text(&out));
    assert!(e.iter().all(|l| l.contains("lost_file")
        && l.contains("its header page (page 0) is not a sqliosim header")));
    let t = text(&out);
    assert!(t.contains("sqliosim.mdx: 255 pages checked"), "{t}");
    assert!(t.contains("log blocks found"), "{t}");
}

#[test]
fn files_the_device_lost_whole_are_lost_writes_of_every_durable_page() {
    let (_t, dir) = copy_of_run();
    for name in ["sqliosim.mdx", "sqliosim.ldx"] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(name))
            .expect("open");
        f.set_len(0).expect("truncate");
    }
    let out = verify(&dir);
    assert_exit(&out, 1);
    let t = text(&out);
    let e = errors(&out);
    assert!(
        e.iter()
            .any(|l| l.contains("lost_write") && l.contains("the file ends at page 0")),
        "{t}"
    );
    assert!(e.iter().any(|l| l.contains("durable log lost")), "{t}");
    assert_eq!(
        e.iter().filter(|l| l.contains("lost_file")).count(),
        2,
        "{t}"
    );
}

#[test]
fn a_data_file_cut_short_is_a_lost_write_of_its_tail() {
    let (_t, dir) = copy_of_run();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("sqliosim.mdx"))
        .expect("open");
    f.set_len(128 * PAGE).expect("truncate");
    let out = verify(&dir);
    assert_exit(&out, 1);
    let e = errors(&out);
    assert_eq!(e.len(), 1, "{}", text(&out));
    assert!(
        e[0].contains("lost_write on ") && e[0].contains(" page 128 "),
        "{e:?}"
    );
    assert!(
        e[0].contains("128 page(s) beyond it durable (pages 128..=255"),
        "{e:?}"
    );
}

/// A Durable record for `page` of file 0, checksummed as the journal frames it.
fn durable_record(page: u64) -> Vec<u8> {
    let mut payload = 0u32.to_le_bytes().to_vec();
    payload.extend_from_slice(&1u32.to_le_bytes());
    payload.extend_from_slice(&page.to_le_bytes());
    payload.extend_from_slice(&5u64.to_le_bytes());
    let mut v = b"SQLSIMJR".to_vec();
    // Kind 2 (Durable), journal version 1 (u16), the spare byte.
    v.extend_from_slice(&[2, 1, 0, 0]);
    v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    v.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    v.extend_from_slice(&payload);
    v
}

/// `sqliosim ARGS` with its address space limited to 1 GiB.
fn limited(args: &[&str], dir: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_sqliosim"))
        .args(args)
        .arg(dir)
        .output()
        .expect("sh")
}

#[test]
fn a_journal_record_naming_a_page_far_beyond_the_file_is_journal_damage() {
    for page in [1u64 << 28, 1 << 40] {
        let (_t, dir) = copy_of_run();
        let journal = dir.join("sqliosim.journal");
        let mut bytes = std::fs::read(&journal).expect("journal");
        let at = bytes.len();
        bytes.extend_from_slice(&durable_record(page));
        std::fs::write(&journal, bytes).expect("write journal");
        let out = limited(&["verify", "--dir"], &dir);
        let t = text(&out);
        // On the device under test, a damaged journal is one integrity error against it.
        assert_exit(&out, 1);
        assert!(t.contains("JOURNAL DAMAGED: "), "{t}");
        assert!(t.contains(&format!("at offset {at}")), "{t}");
        assert!(
            t.contains(&format!(
                "page {page} of file 0 is beyond the file's largest size (256 pages)"
            )),
            "{t}"
        );
        assert!(errors(&out).is_empty(), "no data page accused:\n{t}");
    }
}

#[test]
fn run_resume_with_such_a_journal_reports_it_as_verify_does_and_carries_on() {
    let (_t, dir) = copy_of_run();
    let journal = dir.join("sqliosim.journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    bytes.extend_from_slice(&durable_record(1 << 28));
    std::fs::write(&journal, bytes).expect("write journal");
    let cfg = config(&dir, false);
    let cfg = cfg.to_str().expect("utf-8");
    let out = limited(
        &["run", "--resume", "--seed", "3", "--config", cfg, "--dir"],
        &dir,
    );
    let t = text(&out);
    // The resume's verdict is verify's (issue #35): the journal damaged on the device under
    // test is an integrity error (exit 1, as verify says), and the resume still carries on.
    assert_exit(&out, 1);
    assert!(
        t.contains("is damaged") && t.contains("page 268435456"),
        "{t}"
    );
    assert!(t.contains("JOURNAL DAMAGED"), "{t}");
    assert!(
        t.contains("Run finished after"),
        "the resume carried on:\n{t}"
    );
}

#[test]
fn delete_files_at_shutdown_leaves_no_journal_naming_them() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let out = bin()
        .args(["run", "--config"])
        .arg(config(tmp.path(), true))
        .arg("--dir")
        .arg(tmp.path())
        .output()
        .expect("run");
    assert_exit(&out, 0);
    assert!(!tmp.path().join("sqliosim.journal").exists());
    let out = verify(tmp.path());
    // Nothing owed (the run's log is there, no journal and no file of the set), which is
    // not a lost file.
    assert_exit(&out, 0);
    assert!(text(&out).contains("nothing is owed"), "{}", text(&out));
    assert!(errors(&out).is_empty(), "{}", text(&out));
}

/// A run cut at its start (crash_depth's compaction cell met it on XFS: SIGKILL 165 ms in):
/// its journal holds its Start record, naming the files, and nothing else, and the files never
/// reached the device. Nothing was acknowledged, so nothing is owed: verify says so and exits
/// 0 (it used to exit 2, `none of the files the journal names was found`). The same journal
/// with a page held durable is a lost file.
#[test]
fn a_run_cut_before_its_files_existed_owes_nothing() {
    let (_tmp, dir) = copy_of_run();
    let journal = dir.join("sqliosim.journal");
    let bytes = std::fs::read(&journal).expect("journal");
    let start = start_record_len(&bytes);
    std::fs::write(&journal, &bytes[..start]).expect("cut the journal");
    for name in ["sqliosim.mdx", "sqliosim.ldx"] {
        std::fs::remove_file(dir.join(name)).expect("remove");
    }
    let out = verify(&dir);
    assert_exit(&out, 0);
    assert!(errors(&out).is_empty(), "{}", text(&out));
    assert!(
        text(&out).contains("nothing is owed; 0 pages checked"),
        "{}",
        text(&out)
    );
    let mut held = bytes[..start].to_vec();
    held.extend_from_slice(&durable_record(3));
    std::fs::write(&journal, &held).expect("journal with a durable page");
    let out = verify(&dir);
    assert_exit(&out, 1);
    assert!(
        errors(&out).iter().any(|e| e.contains("lost_file")),
        "{}",
        text(&out)
    );
}

/// A run cut right after it created its journal, before the journal's first record landed
/// (crash_depth's compaction cell on XFS: the Start goes in by replace, and the kill came
/// between; `sqliosim.journal` empty, `sqliosim.journal.new` left). The files are there: they
/// are checked by what they say, and nothing is owed. Verify used to take the empty journal
/// for another run's, skip both files as "of another run" and exit 2.
#[test]
fn an_empty_journal_beside_the_files_is_no_claim() {
    let (_tmp, dir) = copy_of_run();
    let journal = dir.join("sqliosim.journal");
    let bytes = std::fs::read(&journal).expect("journal");
    std::fs::write(dir.join("sqliosim.journal.new"), &bytes).expect("left-over .new");
    std::fs::write(&journal, b"").expect("empty the journal");
    let out = verify(&dir);
    assert_exit(&out, 0);
    let t = text(&out);
    assert!(t.contains("holds no Start record"), "{t}");
    assert!(!t.contains("another run"), "{t}");
    assert!(
        t.contains("sqliosim.mdx: ") && t.contains("pages checked"),
        "{t}"
    );
}

/// The same left-over journal with its Start record lost (zeros where it was) and whole
/// records after it is damage, never "no journal": the Start came in by the rename of a synced
/// file, so its loss is the journal's device losing an acknowledged write.
#[test]
fn a_journal_whose_start_is_lost_is_damage_not_an_empty_journal() {
    let (_tmp, dir) = copy_of_run();
    let journal = dir.join("sqliosim.journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    let start = start_record_len(&bytes);
    bytes[..start].fill(0);
    std::fs::write(&journal, &bytes).expect("lose the Start");
    let out = verify(&dir);
    let t = text(&out);
    assert!(!t.contains("holds no Start record"), "{t}");
    assert_ne!(out.status.code(), Some(0), "{t}");
}

/// `run --resume` over a journal whose Start record is lost: refused (exit 2) naming the
/// journal, which is kept byte for byte. It used to resume silently without it (holding the
/// files to nothing) and replace it.
#[test]
fn run_resume_over_a_journal_whose_start_is_lost_is_refused() {
    let (_t, dir) = copy_of_run();
    let journal = dir.join("sqliosim.journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    let start = start_record_len(&bytes);
    bytes[..start].fill(0);
    std::fs::write(&journal, &bytes).expect("lose the Start");
    let cfg = config(&dir, false);
    let out = bin()
        .args(["run", "--resume", "--seed", "3", "--config"])
        .arg(&cfg)
        .arg("--dir")
        .arg(&dir)
        .output()
        .expect("resume");
    assert_exit(&out, 2);
    assert!(
        text(&out).contains("no readable Start record"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read(&journal).expect("journal"),
        bytes,
        "the journal was kept"
    );
}
