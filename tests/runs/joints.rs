//! Where the run's newer files meet a restart (issue #35), the way a user meets it: a restore's
//! copy standing beside a lost data file, the streams of a killed run judged by `run --resume`
//! as `verify` judges them (removed, END block cut, a block zeroed, cut short), a data file cut
//! short and a damaged journal under `--resume`, `verify --dir COPY` with the copy's data file
//! missing or headless or its streams missing while the original still holds them, a resume refused or cut where it moves the killed run's streams aside,
//! a directory where nothing was acknowledged, and a name planted mid-run that stops an actor.
//! Each was a false alarm, a missed loss or a false CLEAN before.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::crash_support::{assert_exit, bin, read_page, run_cmd, small_config, verify};

/// The small crash config with a Backup User: full backups every `delay_ms`, log backups
/// every 100 ms, 256 KB transfers.
fn backup_config(dir: &Path, cycle_s: u32, delay_ms: u32) -> PathBuf {
    let path = small_config(dir, 1, cycle_s, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(&format!(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay={delay_ms}\nLogBackupInterval=100\n"
    ));
    std::fs::write(&path, text).expect("write config");
    path
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// The findings printed (`ERROR #n: CLASS on PATH …`) as (class, file name), sorted.
fn classes(out: &Output) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("ERROR #")?;
            let (_, rest) = rest.split_once(": ")?;
            let (class, rest) = rest.split_once(" on ")?;
            let path = rest.split([' ', ',', ':']).next()?;
            let name = Path::new(path).file_name()?.to_string_lossy().into_owned();
            Some((class.to_string(), name))
        })
        .collect();
    v.sort();
    v
}

/// Waits until the run's XML log in `dir` holds every one of `marks`; panics after 60 s.
fn wait_for_log(dir: &Path, marks: &[&str]) {
    let xml = dir.join("sqliosim.log.xml");
    let t = Instant::now();
    while !std::fs::read_to_string(&xml).is_ok_and(|l| marks.iter().all(|m| l.contains(m))) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run never logged {marks:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a run of `config` in `dir` with `seed` and kills it (SIGKILL) `after_ms` after its
/// XML log holds every one of `marks`.
fn kill_after(config: &Path, dir: &Path, seed: u64, marks: &[&str], after_ms: u64) {
    let mut child = crate::crash_support::start_run(config, dir, seed);
    wait_for_log(dir, marks);
    std::thread::sleep(Duration::from_millis(after_ms));
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
}

/// A small run killed 1.5 s into its main phase: its directory, its config.
fn killed_small(seed: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 60, true);
    let mark = ["Phase 'initial checkpoint' done"];
    kill_after(&config, dir.path(), seed, &mark, 1500);
    (dir, config)
}

/// A run with backups killed (SIGKILL) once two full backups and three log backups finished:
/// its directory, its config.
fn killed_with_streams(seed: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg.path(), 60, 300);
    let config = {
        let kept = dir.path().join("joints.cfg.ini");
        std::fs::copy(&config, &kept).expect("keep config");
        kept
    };
    // The XML text begins each message: ">backup 2: " is the full backup's line alone, where
    // "backup 2: " is also in "log backup 2: ", which a loaded machine logs first.
    let marks = [">backup 2: ", ">log backup 3: "];
    kill_after(&config, dir.path(), seed, &marks, 50);
    (dir, config)
}

/// `run --resume` for one short cycle.
fn resume(config: &Path, dir: &Path, seed: u64) -> Output {
    resume_cmd(config, dir, seed).output().expect("resume")
}

/// A resume of one 1 s cycle of the set in `dir`, for the caller to add to.
fn resume_cmd(config: &Path, dir: &Path, seed: u64) -> std::process::Command {
    let mut cmd = run_cmd(config, dir);
    cmd.args(["--resume", "--cycles", "1", "--duration", "1"])
        .args(["--seed", &seed.to_string()]);
    cmd
}

/// Makes `d` a directory every user may write, owned by `nobody`, and has `nobody` (when the
/// test runs as root; the test's own user otherwise) replace `at` in it by what `make` makes
/// (`mkfifo` or `mkdir`): a stranger's name where the run will look.
fn plant_as_nobody(d: &Path, at: &Path, make: &str) {
    let root = rustix::process::geteuid().is_root();
    if root {
        std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .expect("chmod");
        std::os::unix::fs::chown(d, Some(65534), Some(65534)).expect("chown");
    }
    let script = format!("rm -f '{0}' && {make} '{0}'", at.display());
    let mut cmd = std::process::Command::new("setpriv");
    if root {
        cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"]);
    }
    let planted = cmd.args(["sh", "-c", &script]).output().expect("plant");
    assert!(planted.status.success(), "plant: {}", text(&planted));
}

fn cut_end_block(path: &Path) {
    let len = std::fs::metadata(path).expect("stream").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(len - 16384))
        .expect("cut the END block");
}

fn zero_at(path: &Path, offset: u64, len: usize) {
    use std::os::unix::fs::FileExt;
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.write_all_at(&vec![0u8; len], offset))
        .expect("zero");
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|f| f.set_len(len))
        .expect("truncate");
}

/// Each loss of a killed run's finished stream is a finding of `verify` (exit 1) and the same
/// finding of the `run --resume` that opens the set (exit 1): before, the resume said 0 of 5,
/// exit 0, and moved the damaged stream aside.
#[test]
fn a_resume_judges_the_killed_runs_streams_as_verify_does() {
    type Damage = fn(&Path);
    let cases: [(&str, Damage); 5] = [
        ("the .bak removed", |d| {
            std::fs::remove_file(d.join("sqliosim.bak")).expect("rm")
        }),
        ("the .bak's END block cut", |d| {
            cut_end_block(&d.join("sqliosim.bak"))
        }),
        ("8 KiB of the .bak zeroed", |d| {
            zero_at(&d.join("sqliosim.bak"), 16384 + 8192, 8192)
        }),
        ("the .trn removed", |d| {
            std::fs::remove_file(d.join("sqliosim.trn")).expect("rm")
        }),
        ("the .trn cut short", |d| {
            let p = d.join("sqliosim.trn");
            let len = std::fs::metadata(&p).expect("trn").len();
            truncate(&p, len / 2);
        }),
    ];
    for (i, (what, damage)) in cases.into_iter().enumerate() {
        let (dir, config) = killed_with_streams(100 + i as u64);
        let clean = verify(dir.path());
        assert_exit(&clean, 0);
        damage(dir.path());
        let v = verify(dir.path());
        assert_eq!(v.status.code(), Some(1), "{what}: verify\n{}", text(&v));
        let r = resume(&config, dir.path(), 200 + i as u64);
        assert_eq!(r.status.code(), Some(1), "{what}: the resume\n{}", text(&r));
        assert_eq!(
            classes(&r),
            classes(&v),
            "{what}: the resume's findings are verify's\n--- verify\n{}\n--- resume\n{}",
            text(&v),
            text(&r)
        );
    }
}

/// A data file cut to half its length: `verify` finds the lost tail; so does the resume (it
/// said "existing files verified, 0 problem(s)", CLEAN, and regrew the file).
#[test]
fn a_data_file_cut_short_is_a_lost_write_for_the_resume_too() {
    let (dir, config) = killed_small(301);
    let data = dir.path().join("sqliosim.mdx");
    let len = std::fs::metadata(&data).expect("mdx").len();
    truncate(&data, len / 2);
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(1), "verify\n{}", text(&v));
    assert!(
        classes(&v).contains(&("lost_write".into(), "sqliosim.mdx".into())),
        "{}",
        text(&v)
    );
    let r = resume(&config, dir.path(), 302);
    assert_eq!(r.status.code(), Some(1), "the resume\n{}", text(&r));
    assert_eq!(classes(&r), classes(&v), "{}\n{}", text(&v), text(&r));
}

/// Every file of the set gone after a cut, the journal left: `verify` names each `lost_file`
/// (exit 1); the resume said "cannot resume: … does not exist or is empty; run without
/// --resume to create the file set" (exit 2), a usage error for what is the device's loss.
/// It now judges the set as verify does, names the same losses, exits 1, and carries nothing
/// on (the journal kept as evidence: a second attempt says the same).
#[test]
fn a_set_whose_files_are_gone_is_lost_for_the_resume_too() {
    let (dir, config) = killed_small(311);
    for f in ["sqliosim.mdx", "sqliosim.ldx"] {
        std::fs::remove_file(dir.path().join(f)).expect("remove");
    }
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(1), "verify\n{}", text(&v));
    let r = resume(&config, dir.path(), 312);
    assert_eq!(r.status.code(), Some(1), "the resume\n{}", text(&r));
    assert_eq!(classes(&r), classes(&v), "{}\n{}", text(&v), text(&r));
    assert!(
        !dir.path().join("sqliosim.mdx").exists(),
        "the resume created the set it could not carry on"
    );
    let again = resume(&config, dir.path(), 313);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert_eq!(classes(&again), classes(&v), "{}", text(&again));
}

/// A journal damaged on the device under test (a byte of a whole record flipped): an
/// integrity error for `verify`, and for the resume (it printed a WARNING and exited 0).
#[test]
fn a_damaged_journal_is_an_integrity_error_for_the_resume_too() {
    let (dir, config) = killed_small(311);
    let journal = dir.path().join("sqliosim.journal");
    let mut bytes = std::fs::read(&journal).expect("journal");
    let at = crate::crash_support::start_record_len(&bytes) + 40;
    assert!(bytes.len() > at + 4096, "the journal holds batches");
    bytes[at] ^= 0x5a;
    std::fs::write(&journal, &bytes).expect("damage the journal");
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(1), "verify\n{}", text(&v));
    assert!(text(&v).contains("JOURNAL DAMAGED"), "{}", text(&v));
    let r = resume(&config, dir.path(), 312);
    assert_eq!(r.status.code(), Some(1), "the resume\n{}", text(&r));
    assert!(text(&r).contains("JOURNAL DAMAGED"), "{}", text(&r));
}

/// One finished run with a Backup User and `sqliosim restore` of its stream (the copy
/// `sqliosim.bak.file0.restored`), its directory then moved away so that the journal's paths
/// are gone and each case's copy of it stands alone.
fn finished_with_a_copy(seed: u64) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = root.path().join("run");
    std::fs::create_dir(&dir).expect("dir");
    let config = backup_config(root.path(), 2, 300);
    let out = run_cmd(&config, &dir)
        .args(["--seed", &seed.to_string()])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let r = bin()
        .arg("restore")
        .arg(dir.join("sqliosim.bak"))
        .output()
        .expect("restore");
    assert_exit(&r, 0);
    let moved = root.path().join("moved");
    std::fs::rename(&dir, &moved).expect("move away");
    (root, moved)
}

/// A copy of `from`'s set (data, log, journal, streams) with the restore's copy under
/// `copy_name`.
fn set_with_copy(from: &Path, copy_name: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let set = [
        "sqliosim.mdx",
        "sqliosim.ldx",
        "sqliosim.journal",
        "sqliosim.bak",
        "sqliosim.trn",
    ];
    for f in set {
        std::fs::copy(from.join(f), d.path().join(f)).expect("copy");
    }
    std::fs::copy(
        from.join("sqliosim.bak.file0.restored"),
        d.path().join(copy_name),
    )
    .expect("copy");
    d
}

/// The data file lost in four ways beside a restore's copy, under the name `sqliosim
/// restore` gives it and under the one the Backup User's RestoreAfterBackup gives it: each is
/// a `lost_file` on the data file (before: CLEAN, exit 0, the copy checked in its place).
#[test]
fn a_restores_copy_never_stands_in_for_a_lost_data_file() {
    let (_a, base) = finished_with_a_copy(401);
    let (_b, other) = finished_with_a_copy(402);
    type Loss = fn(&Path, &Path);
    let cases: [(&str, Loss); 4] = [
        ("removed", |d, _| {
            std::fs::remove_file(d.join("sqliosim.mdx")).expect("rm")
        }),
        ("emptied", |d, _| truncate(&d.join("sqliosim.mdx"), 0)),
        ("its header zeroed", |d, _| {
            zero_at(&d.join("sqliosim.mdx"), 0, 8192)
        }),
        ("replaced by another run's", |d, o| {
            std::fs::copy(o.join("sqliosim.mdx"), d.join("sqliosim.mdx")).expect("replace");
        }),
    ];
    for copy_name in ["sqliosim.mdx.restored", "sqliosim.bak.file0.restored"] {
        let whole = set_with_copy(&base, copy_name);
        assert_exit(&verify(whole.path()), 0);
        for (what, lose) in cases {
            let dir = set_with_copy(&base, copy_name);
            lose(dir.path(), &other);
            let v = verify(dir.path());
            assert_eq!(
                v.status.code(),
                Some(1),
                "{copy_name}, {what}\n{}",
                text(&v)
            );
            assert!(
                classes(&v).contains(&("lost_file".into(), "sqliosim.mdx".into())),
                "{copy_name}, {what}: a lost_file on sqliosim.mdx\n{}",
                text(&v)
            );
        }
    }
}

/// `verify --dir COPY` of a copy of a finished set, the original still at the journal's
/// paths: the copy's data file missing, or its header zeroed, is a finding (before: CLEAN,
/// "not in the directories given, not checked").
#[test]
fn verify_of_a_copy_judges_every_file_the_journal_names_in_it() {
    let orig = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(orig.path(), 1, 1, true);
    let out = run_cmd(&config, orig.path())
        .args(["--seed", "411"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let copy = |name: &str| {
        let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        for f in ["sqliosim.mdx", "sqliosim.ldx", "sqliosim.journal"] {
            std::fs::copy(orig.path().join(f), d.path().join(f)).expect(name);
        }
        d
    };
    let whole = copy("whole");
    assert_exit(&verify(whole.path()), 0);
    let missing = copy("missing");
    std::fs::remove_file(missing.path().join("sqliosim.mdx")).expect("rm");
    let v = verify(missing.path());
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(
        classes(&v).contains(&("lost_file".into(), "sqliosim.mdx".into())),
        "{}",
        text(&v)
    );
    let headless = copy("headless");
    zero_at(&headless.path().join("sqliosim.mdx"), 0, 8192);
    let v = verify(headless.path());
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(
        text(&v).contains(&*headless.path().join("sqliosim.mdx").to_string_lossy()),
        "the copy's own file is named\n{}",
        text(&v)
    );
}

/// A resume refused (the config names a file the set lacks) changes nothing: `verify` is still
/// clean (before: the streams were moved aside first, and verify reported both `lost_file`).
#[test]
fn a_refused_resume_moves_nothing_and_verify_stays_clean() {
    let (dir, config) = killed_with_streams(501);
    let mut text_cfg = std::fs::read_to_string(&config).expect("config");
    text_cfg.push_str(
        "[File3]\nFileName=extra.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n",
    );
    let wrong = dir.path().join("wrong.cfg.ini");
    std::fs::write(&wrong, text_cfg).expect("wrong config");
    let r = resume(&wrong, dir.path(), 502);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    for name in ["sqliosim.bak", "sqliosim.trn"] {
        assert!(dir.path().join(name).is_file(), "{name} left in place");
    }
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
}

/// A resume cut after it moved the killed run's streams aside and before its own journal
/// replaced the old one: the old journal still names the streams at their names. The state
/// such a cut leaves (the streams under the names the resume gives them), and kill -9s of a
/// real resume at moments across its start: `verify` is clean every time.
#[test]
fn a_resume_cut_where_it_moves_the_streams_aside_leaves_verify_clean() {
    let (dir, config) = killed_with_streams(511);
    let journal = std::fs::read(dir.path().join("sqliosim.journal")).expect("journal");
    let header =
        sqliosim::page::FileHeader::decode(&read_page(&dir.path().join("sqliosim.mdx"), 0))
            .expect("header");
    let tag = format!("{:016X}", header.run_id);
    for (from, to) in [
        ("sqliosim.bak", format!("sqliosim.{tag}.bak")),
        ("sqliosim.trn", format!("sqliosim.{tag}.trn")),
    ] {
        std::fs::rename(dir.path().join(from), dir.path().join(to)).expect("move aside");
    }
    assert_eq!(
        std::fs::read(dir.path().join("sqliosim.journal")).expect("journal"),
        journal
    );
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    // And real cuts of a resume of a fresh killed set.
    for (i, ms) in [0u64, 5, 15, 30, 60, 120].into_iter().enumerate() {
        let (dir, config) = killed_with_streams(520 + i as u64);
        let mut child = run_cmd(&config, dir.path())
            .args(["--resume", "--duration", "10", "--seed", "530"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("resume");
        std::thread::sleep(Duration::from_millis(ms));
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        let v = verify(dir.path());
        assert_eq!(
            v.status.code(),
            Some(0),
            "kill {ms} ms into the resume\n{}",
            text(&v)
        );
    }
    let _ = config;
}

/// A directory where a run was cut before any file of its set or its journal existed (only
/// its lock files and its log are there): nothing was acknowledged, so nothing is owed.
/// `verify` says so, exit 0 (it was exit 2, "no file created by sqliosim found"), and
/// `--resume` starts the run afresh, saying so.
#[test]
fn a_cut_before_any_file_existed_owes_nothing() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, true);
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "601"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    for f in ["sqliosim.mdx", "sqliosim.ldx", "sqliosim.journal"] {
        std::fs::remove_file(dir.path().join(f)).expect("rm");
    }
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    assert!(text(&v).contains("nothing is owed"), "{}", text(&v));
    let r = resume(&config, dir.path(), 602);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    assert!(text(&r).contains("afresh"), "{}", text(&r));
    // A directory with nothing of ours is still the user's mistake.
    let empty = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    assert_exit(&verify(empty.path()), 2);
}

/// A FIFO planted mid-run at the name a backup is written under stops the Backup User: the
/// run is not CLEAN (it said "Verdict: CLEAN", exit 0, JSON outcome `clean`, with errors), and
/// `report` of its JSON says so too.
#[test]
fn a_name_planted_mid_run_that_stops_an_actor_is_not_a_clean_run() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(dir.path(), 4, 300);
    let json = dir.path().join("run.json");
    let child = run_cmd(&config, dir.path())
        .args(["--seed", "701", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run");
    wait_for_log(dir.path(), &[">backup 1: "]);
    // Planted between two backups (mkfifo fails while a backup has the name).
    let partial = dir.path().join("sqliosim.bak.partial");
    let t = Instant::now();
    while !std::process::Command::new("mkfifo")
        .arg(&partial)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("mkfifo")
        .success()
    {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no moment between backups"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().expect("wait");
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(!t.contains("Verdict: CLEAN"), "{t}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("parse");
    assert_ne!(summary["outcome"], "clean", "{summary}");
    // And `report` agrees with the run (it said "Verdict: CLEAN", exit 0).
    let r = bin().arg("report").arg(&json).output().expect("report");
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(!text(&r).contains("Verdict: CLEAN"), "{}", text(&r));
}

/// Whether the journal in `dir` holds a durable log position for `log`: `verify` with the log
/// moved aside names the LSN it was durable up to (a log the journal holds nothing durable
/// for owes nothing). The log is put back.
fn log_owed(dir: &Path, log: &Path) -> bool {
    let aside = dir.join("ldx.aside");
    std::fs::rename(log, &aside).expect("move the log aside");
    let v = verify(dir);
    std::fs::rename(&aside, log).expect("put the log back");
    text(&v).contains("its log durable up to LSN")
}

/// A log file left 1,024 bytes short of the size made durable when it was created (what 5 of
/// 8 honest power cuts left under LazyFS): the verdict names the bytes lost and judges the
/// blocks that are there (it said "durable log lost … 0 log blocks found", the area taken
/// from the short length). With the length given back (zeros), no size is lost any more; what
/// the lost bytes held is judged as any block is.
#[test]
fn a_log_file_short_of_its_size_is_judged_by_the_blocks_it_holds() {
    // The size is owed once the journal holds a durable log position. How soon after the
    // initial checkpoint a journal batch holds one depends on the machine (on a loaded one
    // the journal's fdatasync took over a second): the kill comes later until it does.
    let (dir, log) = [1000, 3000, 9000]
        .iter()
        .find_map(|&after_ms| {
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
            let config = small_config(dir.path(), 1, 60, true);
            let mark = ["Phase 'initial checkpoint' done"];
            kill_after(&config, dir.path(), 801, &mark, after_ms);
            let log = dir.path().join("sqliosim.ldx");
            log_owed(dir.path(), &log).then_some((dir, log))
        })
        .expect("no journal batch held a durable log position 9 s after the initial checkpoint");
    let len = std::fs::metadata(&log).expect("ldx").len();
    truncate(&log, len - 1024);
    let v = verify(dir.path());
    let t = text(&v);
    assert_eq!(v.status.code(), Some(1), "{t}");
    assert!(
        t.contains("1024 bytes short"),
        "the size lost is named\n{t}"
    );
    let blocks: usize = t
        .lines()
        .find(|l| l.contains("sqliosim.ldx: ") && l.contains(" log blocks found"))
        .and_then(|l| l.split("sqliosim.ldx: ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no log line\n{t}"));
    assert!(blocks > 0, "the blocks there are judged\n{t}");
    truncate(&log, len);
    let v = verify(dir.path());
    assert!(!text(&v).contains("bytes short"), "{}", text(&v));
}

/// A finished stream the journal holds, replaced by a FIFO, a directory or a symlink (issue #36
/// §9): a `lost_file`, as a data file replaced so is (it was "not checked", CLEAN, 6 of 6; a
/// symlink to a file was followed and read), and the FIFO never stalls verify.
#[test]
fn a_journaled_stream_replaced_by_a_non_file_is_a_lost_file() {
    let (_root, base) = finished_with_a_copy(901);
    type Plant = fn(&Path);
    let cases: [(&str, Plant); 4] = [
        ("a FIFO", |p| {
            let made = std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .expect("mkfifo");
            assert!(made.success());
        }),
        ("a directory", |p| std::fs::create_dir(p).expect("mkdir")),
        ("a symlink to a directory", |p| {
            std::os::unix::fs::symlink("/", p).expect("symlink")
        }),
        ("a symlink to a file", |p| {
            std::os::unix::fs::symlink("/etc/passwd", p).expect("symlink")
        }),
    ];
    for (what, plant) in cases {
        let dir = set_with_copy(&base, "sqliosim.bak.file0.restored");
        let bak = dir.path().join("sqliosim.bak");
        std::fs::remove_file(&bak).expect("rm");
        plant(&bak);
        let mut child = bin()
            .args(["verify", "--dir"])
            .arg(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("verify");
        let t = Instant::now();
        while child.try_wait().expect("wait").is_none() {
            if t.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("{what}: verify hung");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let v = child.wait_with_output().expect("output");
        assert_eq!(v.status.code(), Some(1), "{what}\n{}", text(&v));
        assert!(
            classes(&v).contains(&("lost_file".into(), "sqliosim.bak".into())),
            "{what}: a lost_file on the stream\n{}",
            text(&v)
        );
    }
}

/// `verify FILE.bak` of a finished stream cut short, its journal beside it (issue #36 §10): the
/// journal holds the backup finished, so the cut stream is a `lost_write` (it said
/// "unfinished", CLEAN, exit 0). Whole, it is "as journaled"; a stream given by name with no
/// journal beside it is judged by itself, as before.
#[test]
fn a_stream_given_by_name_is_held_to_the_journal_beside_it() {
    let (_root, base) = finished_with_a_copy(911);
    let dir = set_with_copy(&base, "sqliosim.bak.file0.restored");
    let bak = dir.path().join("sqliosim.bak");
    let whole = bin().arg("verify").arg(&bak).output().expect("verify");
    assert_exit(&whole, 0);
    assert!(text(&whole).contains(": as journaled"), "{}", text(&whole));
    let len = std::fs::metadata(&bak).expect("bak").len();
    truncate(&bak, len / 2);
    let cut = bin().arg("verify").arg(&bak).output().expect("verify");
    assert_eq!(cut.status.code(), Some(1), "{}", text(&cut));
    assert!(
        classes(&cut).contains(&("lost_write".into(), "sqliosim.bak".into())),
        "{}",
        text(&cut)
    );
    let alone = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    std::fs::copy(&bak, alone.path().join("sqliosim.bak")).expect("copy");
    let by_itself = bin()
        .arg("verify")
        .arg(alone.path().join("sqliosim.bak"))
        .output()
        .expect("verify");
    assert_exit(&by_itself, 0);
}

/// Another user's files never vouch for the run (as root, with `nobody` the other user): a copy
/// of the journaled `.bak` that `nobody` left under the name a resume gives a stream it moves
/// aside does not stand in for a `.bak` the device lost (it would have read "moved aside by a
/// resume", CLEAN), and `nobody`'s lock file in an empty directory does not make it "nothing
/// owed" (still exit 2, nothing of ours there).
#[test]
fn another_users_files_never_vouch_for_the_run() {
    use std::os::unix::fs::chown;
    if !rustix::process::geteuid().is_root() {
        assert!(
            std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
            "SQLIOSIM_REQUIRE_LOOP is set: this test needs root"
        );
        eprintln!("skipped: needs root");
        return;
    }
    let (_root, base) = finished_with_a_copy(921);
    let dir = set_with_copy(&base, "sqliosim.bak.file0.restored");
    let header =
        sqliosim::page::FileHeader::decode(&read_page(&dir.path().join("sqliosim.mdx"), 0))
            .expect("header");
    let kept = dir
        .path()
        .join(format!("sqliosim.{:016X}.bak", header.run_id));
    std::fs::rename(dir.path().join("sqliosim.bak"), &kept).expect("move aside");
    assert_exit(&verify(dir.path()), 0);
    chown(&kept, Some(65534), Some(65534)).expect("chown");
    let v = verify(dir.path());
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(
        classes(&v).contains(&("lost_file".into(), "sqliosim.bak".into())),
        "{}",
        text(&v)
    );
    let empty = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let lock = empty.path().join("sqliosim.mdx.lock");
    std::fs::write(&lock, b"pid 1 host x\n").expect("lock");
    chown(&lock, Some(65534), Some(65534)).expect("chown");
    let v = verify(empty.path());
    assert_eq!(v.status.code(), Some(2), "{}", text(&v));
}

/// The findings of a JSON summary, as (class, file name, offset), and their total.
fn summary_findings(json: &Path) -> (std::collections::BTreeSet<(String, String, u64)>, u64) {
    let text = std::fs::read_to_string(json).unwrap_or_else(|e| panic!("{}: {e}", json.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON summary");
    let listed = doc["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let name = Path::new(f["path"].as_str().unwrap_or(""))
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let class = f["class"].as_str().unwrap_or("").to_string();
            (class, name, f["offset"].as_u64().unwrap_or(0))
        })
        .collect();
    (listed, doc["findings_total"].as_u64().unwrap_or(0))
}

/// A copy of the directory `from` (`cp -a`), in a new temporary directory.
fn copy_set(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let out = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to.path())
        .output()
        .expect("cp");
    assert!(out.status.success(), "cp -a: {}", text(&out));
    to
}

/// One verdict: on copies of one cut set, `verify` and the `run --resume` that opens it give
/// the same findings (class, file, offset; and the same total) and the same exit code, for a
/// killed set with backup streams as it was left and with each kind of damage the resume once
/// judged less than verify did.
#[test]
fn the_resume_and_verify_give_the_same_findings_on_copies_of_one_cut_set() {
    type Damage = fn(&Path);
    let damages: [(&str, Damage); 6] = [
        ("as the kill left it", |_| {}),
        ("a data page zeroed", |d| {
            zero_at(&d.join("sqliosim.mdx"), 5 * 8192, 8192)
        }),
        ("the .bak's END block cut", |d| {
            cut_end_block(&d.join("sqliosim.bak"))
        }),
        ("the .trn removed", |d| {
            std::fs::remove_file(d.join("sqliosim.trn")).expect("remove the .trn")
        }),
        ("the data file cut to half", |d| {
            let len = std::fs::metadata(d.join("sqliosim.mdx"))
                .expect("mdx")
                .len();
            truncate(&d.join("sqliosim.mdx"), len / 2);
        }),
        // Every block past the header page: the log wraps, so one block at a fixed offset may
        // be of a lap no longer owed (backed up and reused); the durable tail always is owed.
        ("the log zeroed past its header", |d| {
            let ldx = d.join("sqliosim.ldx");
            let len = std::fs::metadata(&ldx).expect("ldx").len();
            zero_at(&ldx, 8192, usize::try_from(len - 8192).expect("len"));
        }),
    ];
    for (i, (what, damage)) in damages.into_iter().enumerate() {
        let (dir, _) = killed_with_streams(700 + i as u64);
        damage(dir.path());
        let (a, b) = (copy_set(dir.path()), copy_set(dir.path()));
        let v_json = a.path().join("verify.json");
        let v = bin()
            .args(["verify", "--dir"])
            .arg(a.path())
            .arg("--json")
            .arg(&v_json)
            .output()
            .expect("verify");
        let r_json = b.path().join("resume.json");
        let r = resume_cmd(&b.path().join("joints.cfg.ini"), b.path(), 710)
            .arg("--json")
            .arg(&r_json)
            .output()
            .expect("resume");
        let ctx = || format!("{what}\n--- verify\n{}\n--- resume\n{}", text(&v), text(&r));
        let (verified, resumed) = (summary_findings(&v_json), summary_findings(&r_json));
        assert_eq!(verified, resumed, "{}", ctx());
        assert_eq!(v.status.code(), r.status.code(), "{}", ctx());
        if i > 0 {
            assert!(verified.1 > 0, "the damage was not found: {}", ctx());
            assert_eq!(v.status.code(), Some(1), "{}", ctx());
        } else {
            assert_eq!(v.status.code(), Some(0), "{}", ctx());
        }
    }
}

/// A set copied (or moved) elsewhere is judged in the copy alone: a finished stream the
/// journal holds and the copy lacks is a `lost_file` of the copy, for `verify --dir COPY` and
/// for the `run --resume` that opens the copy, even while the original directory still holds
/// that stream at the path the journal recorded. Before, both read the original's stream
/// (outside `--dir`), said "as journaled" and were CLEAN (exit 0).
#[test]
fn a_copied_set_is_never_vouched_for_by_the_original_directory() {
    let (orig, _) = killed_with_streams(760);
    for name in ["sqliosim.bak", "sqliosim.trn"] {
        assert!(orig.path().join(name).is_file(), "the kill left {name}");
    }
    let (a, b) = (copy_set(orig.path()), copy_set(orig.path()));
    for d in [a.path(), b.path()] {
        for name in ["sqliosim.bak", "sqliosim.trn"] {
            std::fs::remove_file(d.join(name)).expect("remove the copy's stream");
        }
    }
    let v = verify(a.path());
    let r = resume(&b.path().join("joints.cfg.ini"), b.path(), 761);
    let original = orig.path().to_string_lossy().into_owned();
    for (what, out) in [("verify", &v), ("resume", &r)] {
        assert_eq!(out.status.code(), Some(1), "{what}\n{}", text(out));
        let found = classes(out);
        for name in ["sqliosim.bak", "sqliosim.trn"] {
            assert!(
                found.contains(&("lost_file".into(), name.into())),
                "{what}: {name} of the copy is lost\n{}",
                text(out)
            );
        }
        assert!(
            !text(out).contains(&original),
            "{what} read the original directory {original}\n{}",
            text(out)
        );
    }
}

/// The killed run's finished stream replaced, in a directory every user may write, by a FIFO
/// or a directory (planted by `nobody` when the test runs as root): the resume's judgement
/// finds it lost, and the name stands where the resumed run would write its next stream. The
/// resume reports the loss (exit 1, the planted path named), carries nothing on and moves
/// nothing: the killed run's log, summary and journal stay as they were, `verify` finds the
/// same loss, and once the name is cleared a second resume carries the set on. Before, the
/// resume moved the evidence aside, then stopped at the name with exit 2, leaving a new JSON
/// summary "running" with no finding.
#[test]
fn a_stream_name_planted_where_the_resume_writes_is_reported_and_moves_nothing() {
    for (i, plant) in ["fifo", "dir"].into_iter().enumerate() {
        let (dir, config) = killed_with_streams(770 + i as u64);
        let d = dir.path();
        let bak = d.join("sqliosim.bak");
        plant_as_nobody(d, &bak, if plant == "fifo" { "mkfifo" } else { "mkdir" });
        let kept: Vec<(&str, Vec<u8>)> =
            ["sqliosim.log.xml", "sqliosim.log.json", "sqliosim.journal"]
                .into_iter()
                .map(|n| (n, std::fs::read(d.join(n)).expect(n)))
                .collect();
        let r =
            crate::hostile_names::run_cmd(resume_cmd(&config, d, 780)).expect("the resume ends");
        let ctx = || format!("{plant}\n{}", text(&r));
        assert_eq!(r.status.code(), Some(1), "{}", ctx());
        assert!(
            classes(&r).contains(&("lost_file".into(), "sqliosim.bak".into())),
            "{}",
            ctx()
        );
        assert!(
            String::from_utf8_lossy(&r.stderr).contains(&*bak.to_string_lossy()),
            "the planted name is named\n{}",
            ctx()
        );
        for (name, bytes) in &kept {
            assert!(
                std::fs::read(d.join(name)).ok().as_ref() == Some(bytes),
                "{name} changed\n{}",
                ctx()
            );
        }
        let v = verify(d);
        assert_eq!(v.status.code(), Some(1), "{plant}\n{}", text(&v));
        assert!(classes(&v).contains(&("lost_file".into(), "sqliosim.bak".into())));
        if plant == "fifo" {
            std::fs::remove_file(&bak).expect("clear the FIFO");
        } else {
            std::fs::remove_dir(&bak).expect("clear the directory");
        }
        let again = resume(&config, d, 781);
        assert_eq!(again.status.code(), Some(1), "{plant}\n{}", text(&again));
        assert_exit(&verify(d), 0);
    }
}

/// The stylesheet or the log's HTML view planted (a FIFO, a directory; by `nobody` when the
/// test runs as root) beside a killed run's log: `run --resume` is refused (exit 2, the name
/// said) before it moves anything, so the killed run's log and summary stay under their names
/// and no new log is begun. Before, the resume moved them aside first, then stopped at the
/// name and left a new, empty XML log that a later resume moved aside under the killed run's
/// id as if it were its evidence.
#[test]
fn a_name_planted_beside_the_log_refuses_the_resume_before_it_moves_anything() {
    for (i, (name, plant)) in [("ErrorLog.xslt", "mkfifo"), ("sqliosim.log.html", "mkdir")]
        .into_iter()
        .enumerate()
    {
        let (dir, config) = killed_with_streams(790 + i as u64);
        let d = dir.path();
        let at = d.join(name);
        plant_as_nobody(d, &at, plant);
        let names = |d: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .expect("list")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .filter(|n| !n.ends_with(".lock"))
                .collect();
            v.sort();
            v
        };
        let before = names(d);
        let log = std::fs::read(d.join("sqliosim.log.xml")).expect("log");
        let r =
            crate::hostile_names::run_cmd(resume_cmd(&config, d, 792)).expect("the resume ends");
        let ctx = || format!("{name}\n{}", text(&r));
        assert_eq!(r.status.code(), Some(2), "{}", ctx());
        assert!(
            String::from_utf8_lossy(&r.stderr).contains(&*at.to_string_lossy()),
            "{}",
            ctx()
        );
        assert_eq!(names(d), before, "{}", ctx());
        assert!(
            std::fs::read(d.join("sqliosim.log.xml")).ok() == Some(log),
            "the killed run's log changed\n{}",
            ctx()
        );
        assert_exit(&verify(d), 0);
    }
}

/// The killed run's finished `.bak` damaged where its magic is (its first block zeroed, as a
/// device that lost that write leaves it): the resume judges it lost, keeps the damaged
/// stream aside under the killed run's id byte for byte, reports the loss in its summary and
/// carries on (exit 1). Before, the guard kept aside only streams whose magic it could read,
/// so setup met the damaged one at the name the run writes, stopped with exit 2 ("not a
/// backup stream of sqliosim … or pass --force", and `--force` would have written over it),
/// and left a new JSON summary "running" with no finding.
#[test]
fn a_damaged_stream_the_journal_holds_is_kept_aside_and_reported_by_the_resume() {
    let (dir, config) = killed_with_streams(800);
    let d = dir.path();
    let bak = d.join("sqliosim.bak");
    zero_at(&bak, 0, 16384);
    let damaged = std::fs::read(&bak).expect("stream");
    let header =
        sqliosim::page::FileHeader::decode(&read_page(&d.join("sqliosim.mdx"), 0)).expect("header");
    let json = d.join("resume.json");
    let r = resume_cmd(&config, d, 801)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("resume");
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    let (found, total) = summary_findings(&json);
    assert!(
        total > 0 && found.iter().any(|(_, name, _)| name == "sqliosim.bak"),
        "{found:?}\n{}",
        text(&r)
    );
    let kept = d.join(format!("sqliosim.{:016X}.bak", header.run_id));
    assert!(
        std::fs::read(&kept).ok() == Some(damaged),
        "the damaged stream is kept as {}\n{}",
        kept.display(),
        text(&r)
    );
}

/// A page flipped at rest (fault injection) while the Backup User runs WITH CHECKSUM: every
/// backup stops at the page, as SQL Server's does (its ERROR is logged), and the page is the
/// run's finding (exit 1). Before, each "backup stopped" ERROR also counted as an error of the
/// environment, so the console said "Stopped early: an environment error, not an integrity
/// finding" above "Verdict: … INTEGRITY ERROR(S)", and the JSON summary carried an
/// `environment_error` for a run that stopped for nothing but the corruption it found.
#[test]
fn a_backup_stopped_by_a_corrupt_page_is_the_finding_not_an_environment_error() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let d = dir.path();
    let config = d.join("flip.cfg.ini");
    std::fs::write(
        &config,
        "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nMaxMemoryMB=4\n\
         [RandomUser]\nUserCount=1\n[AuditUser]\nUserCount=1\n[ReadAheadUser]\nUserCount=0\n\
         [BulkUpdateUser]\nUserCount=0\n\
         [BackupUser]\nUserCount=1\nMaxTransferSize=65536\nBackupDelay=100\nLogBackupInterval=100\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n",
    )
    .expect("config");
    let json = d.join("flip.json");
    let out = run_cmd(&config, d)
        .args([
            "--duration",
            "2",
            "--seed",
            "3",
            "--fault-injection",
            "flip@200",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run");
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("backup stopped (WITH CHECKSUM, STOP_ON_ERROR) at page 200"),
        "a backup met the flipped page\n{said}"
    );
    assert!(!said.contains("environment error"), "{said}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("summary")).expect("json");
    assert_eq!(doc["outcome"], "findings", "{doc:#}");
    assert!(
        doc["environment_error"].is_null(),
        "{}",
        doc["environment_error"]
    );
}

/// The killed run's data file replaced by `nobody` (0777 directory) with a FIFO or a
/// directory: `verify` reports it lost (`lost_file`, exit 1), and so does the `run --resume`
/// that opens the set, naming the planted path, moving nothing and beginning no new log.
/// Before, the resume stopped at its first check with exit 2 ("… is a FIFO (named pipe), not
/// a regular file: … Name a file on a mounted filesystem"), an environment error that said
/// nothing of the 1,000 pages the journal holds durable there, while `verify` of the same set
/// said they were lost.
#[test]
fn a_data_file_replaced_by_a_non_file_is_lost_for_the_resume_too() {
    for (i, plant) in ["fifo", "dir"].into_iter().enumerate() {
        let (dir, config) = killed_small(810 + i as u64);
        let d = dir.path();
        let mdx = d.join("sqliosim.mdx");
        plant_as_nobody(d, &mdx, if plant == "fifo" { "mkfifo" } else { "mkdir" });
        let v = verify(d);
        assert_eq!(v.status.code(), Some(1), "{plant}\n{}", text(&v));
        assert!(classes(&v).contains(&("lost_file".into(), "sqliosim.mdx".into())));
        let kept: Vec<(&str, Vec<u8>)> =
            ["sqliosim.log.xml", "sqliosim.log.json", "sqliosim.journal"]
                .into_iter()
                .map(|n| (n, std::fs::read(d.join(n)).expect(n)))
                .collect();
        let mut resume_cmd = run_cmd(&config, d);
        resume_cmd.args(["--resume", "--cycles", "1", "--duration", "1"]);
        let r = crate::hostile_names::run_cmd(resume_cmd).expect("the resume ends");
        let ctx = || format!("{plant}\n{}", text(&r));
        assert_eq!(r.status.code(), Some(1), "{}", ctx());
        assert!(
            classes(&r).contains(&("lost_file".into(), "sqliosim.mdx".into())),
            "{}",
            ctx()
        );
        assert!(
            String::from_utf8_lossy(&r.stderr).contains(&*mdx.to_string_lossy()),
            "the planted name is named\n{}",
            ctx()
        );
        for (name, bytes) in &kept {
            assert!(
                std::fs::read(d.join(name)).ok().as_ref() == Some(bytes),
                "{name} changed\n{}",
                ctx()
            );
        }
        let file_type = std::fs::symlink_metadata(&mdx)
            .expect("planted")
            .file_type();
        assert!(
            file_type.is_fifo() || file_type.is_dir(),
            "the planted name was left as it was"
        );
    }
}

/// A resume that reported a loss (the killed run's `.bak` lost its first block) is killed in
/// turn; the next resume keeps its log and summary aside and carries the run on. The loss was
/// found by this same run, so the run's verdict keeps it: the next resume reports it again
/// (exit 1, the finding in its own JSON summary, which is what `collect` and the fleet
/// report read) and its note says the attempt it keeps aside found it. Before, the note said
/// only "did not end cleanly", and the loss lived on in a kept-aside summary nobody was told
/// to read, under a final "Verdict: CLEAN", exit 0: a missed loss for the fleet.
#[test]
fn a_resume_over_a_killed_resume_that_found_a_loss_says_so() {
    let note = resume_after_a_stopped_resume_that_found_a_loss(830, "KILL");
    assert!(
        note.contains("did not end cleanly, and found 1 integrity error"),
        "the note says what the killed resume found: {note}"
    );
}

/// The same with the resume stopped by SIGTERM (a node drained, `systemctl stop`): it ended
/// with its summary written and exit 1, and the next resume still reports the loss, since the
/// fleet reads only the last attempt's summary.
#[test]
fn a_resume_over_a_stopped_resume_that_found_a_loss_reports_it_again() {
    let note = resume_after_a_stopped_resume_that_found_a_loss(840, "TERM");
    assert!(
        note.contains("found errors"),
        "the note says the stopped resume found errors: {note}"
    );
}

/// A killed run with streams whose `.bak` lost its first block, resumed; that resume reports
/// the loss, and is then sent `signal`; a second resume must report the loss again (exit 1,
/// in its JSON summary). Returns the second resume's note of the evidence it kept aside.
fn resume_after_a_stopped_resume_that_found_a_loss(seed: u64, signal: &str) -> String {
    let (dir, config) = killed_with_streams(seed);
    let d = dir.path();
    zero_at(&d.join("sqliosim.bak"), 0, 16384);
    let mut first = run_cmd(&config, d)
        .args([
            "--resume",
            "--duration",
            "30",
            "--seed",
            &(seed + 1).to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("resume");
    let json = d.join("sqliosim.log.json");
    let t = Instant::now();
    while !std::fs::read_to_string(&json).is_ok_and(|j| j.contains("\"lost_write\"")) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the resume never reported the loss"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), first.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal}");
    first.wait().expect("wait");
    let again = resume(&config, d, seed + 2);
    let err = String::from_utf8_lossy(&again.stderr).into_owned();
    let note = err
        .lines()
        .find(|l| l.contains("its evidence is kept"))
        .unwrap_or_else(|| panic!("no note of the kept evidence\n{}", text(&again)))
        .to_string();
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    let (found, total) = summary_findings(&json);
    assert!(
        total == 1
            && found
                .iter()
                .any(|(class, name, _)| class == "lost_write" && name == "sqliosim.bak"),
        "the run's summary carries the loss its stopped attempt found: {found:?}\n{}",
        text(&again)
    );
    note
}
