//! Limits are the environment's, never findings: a run or bench under `ulimit -u`, `ulimit -n`
//! or `ulimit -v` ends with exit 0 (it completed) or 2 (a clear error), never 1 (a finding
//! blamed on the device), 101 (a panic), 134 (an abort) or a hang (killed at 120 s).

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

/// A one-second run of a 2 MB data file and a 1 MB log, buffered.
const TINY: &str = "[CONFIG]\nMaxMemoryMB=4\nTestCycles=1\nTestCycleDuration=1\nNoBuffering=FALSE\nUseScatterGather=FALSE\n\
    [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `sqliosim ARGS` under prlimit(1) with `limit`, as `nobody` when `as_nobody`; its output,
/// killed (and failed) after 120 s.
fn limited(limit: &str, as_nobody: bool, args: &[&std::ffi::OsStr]) -> Output {
    let mut c = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "prlimit",
        ]);
        c
    } else {
        Command::new("prlimit")
    };
    c.args([limit, "--", env!("CARGO_BIN_EXE_sqliosim")])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("start");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().expect("kill");
            panic!("{limit}: still running after 120 s: it hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.wait_with_output().expect("output")
}

fn run_args<'a>(cfg: &'a Path, dir: &'a Path) -> Vec<&'a std::ffi::OsStr> {
    vec![
        "run".as_ref(),
        "--config".as_ref(),
        cfg.as_os_str(),
        "--dir".as_ref(),
        dir.as_os_str(),
        "--duration".as_ref(),
        "1s".as_ref(),
    ]
}

fn config(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("tiny.cfg.ini");
    std::fs::write(&p, TINY).expect("write config");
    p
}

#[test]
fn bench_threads_past_ulimit_u_is_exit_2_not_a_panic_and_a_hang() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED bench_threads_past_ulimit_u: needs root (to run as nobody)");
        return;
    }
    let dir = scratch();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    let file = dir.path().join("b.dat");
    let args: Vec<&std::ffi::OsStr> = vec![
        "bench".as_ref(),
        "--file".as_ref(),
        file.as_os_str(),
        "--size".as_ref(),
        "16M".as_ref(),
        "--duration".as_ref(),
        "1".as_ref(),
        "-t".as_ref(),
        "16".as_ref(),
    ];
    let out = limited("--nproc=4", true, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{}", describe(&out));
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        err.contains("cannot start bench worker thread") && err.contains("ulimit -u"),
        "{}",
        describe(&out)
    );
}

/// Each `ulimit -n` from 8 up to the first that lets the run finish: every refused run is exit 2
/// naming the limit, and one of them is refused at the journal. (Where the journal falls in
/// that range depends on how many descriptors the run needs before it, which differs from one
/// machine to another: a single fixed limit passed here and ran clean on CI's machine.)
#[test]
fn a_run_that_cannot_open_its_journal_stops_with_exit_2() {
    let dir = scratch();
    let cfg = config(dir.path());
    let mut journal_refused = false;
    let mut finished = None;
    for n in 8..=64 {
        let files = dir.path().join(format!("d{n}"));
        let out = limited(&format!("--nofile={n}"), false, &run_args(&cfg, &files));
        if out.status.code() == Some(0) {
            finished = Some(n);
            break;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "ulimit -n {n}: {}",
            describe(&out)
        );
        assert!(
            err.contains("Too many open files") && !err.contains("panicked"),
            "ulimit -n {n}: {}",
            describe(&out)
        );
        journal_refused |= err.contains("cannot create the journal")
            && err.contains("sqliosim.journal")
            && err.contains("ulimit -n");
    }
    assert!(
        finished.is_some(),
        "no limit up to 64 descriptors let the run finish"
    );
    assert!(
        journal_refused,
        "no limit below {finished:?} stopped the run at its journal"
    );
}

/// A journal directory the user may not write in: exit 2 naming the journal, never a run
/// that goes on without one.
#[test]
fn a_journal_dir_that_refuses_the_user_stops_the_run_with_exit_2() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED a_journal_dir_that_refuses_the_user: needs root (to run as nobody)");
        return;
    }
    let dir = scratch();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    let cfg = config(dir.path());
    let journal_dir = dir.path().join("j");
    std::fs::create_dir(&journal_dir).expect("mkdir");
    let files = dir.path().join("d");
    let mut args = run_args(&cfg, &files);
    args.extend(["--journal-dir".as_ref(), journal_dir.as_os_str()]);
    let out = limited("--nofile=1024", true, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        err.contains("cannot create the journal") && err.contains("Permission denied"),
        "{}",
        describe(&out)
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("Verdict: CLEAN"),
        "the run went on without its journal: {}",
        describe(&out)
    );
}

/// From 16 MB (where the refusals start: below it the loader cannot map libc) to 120 MB (where
/// the run finishes: about 70 MB on CI's machines since glibc keeps one arena under a limit),
/// so both the refusals and the finished runs are met. A thread that could not map its signal
/// stack once panicked in std ("failed to allocate an alternative stack"), and glibc aborted
/// with "failed to register TLS destructor" (134) when its per-thread arenas met the limit.
#[test]
fn twenty_runs_under_ulimit_v_16_to_120_mb_end_with_0_or_2() {
    let dir = scratch();
    let cfg = config(dir.path());
    let mut tally = std::collections::BTreeMap::<Option<i32>, Vec<u64>>::new();
    for i in 0..20u64 {
        let mb = 16 + i * 104 / 19;
        let files = dir.path().join(format!("d{mb}"));
        let out = limited(
            &format!("--as={}", mb * 1_000_000),
            false,
            &run_args(&cfg, &files),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{mb} MB: {}", describe(&out));
        match out.status.code() {
            Some(0) => assert!(
                String::from_utf8_lossy(&out.stdout).contains("CLEAN"),
                "{mb} MB: exit 0 without a clean verdict: {}",
                describe(&out)
            ),
            Some(2) => assert!(err.contains("cannot "), "{mb} MB: {}", describe(&out)),
            _ => panic!(
                "{mb} MB: neither clean nor a clear error\n{}",
                describe(&out)
            ),
        }
        tally.entry(out.status.code()).or_default().push(mb);
    }
    eprintln!("exit codes under ulimit -v (MB): {tally:?}");
    assert!(
        tally.contains_key(&Some(0)) && tally.contains_key(&Some(2)),
        "both a refusal and a finished run were to be met: {tally:?}"
    );
}

/// A backup stream that passes the file size limit (`ulimit -f` a little above the data
/// file's 2 MiB, so the set is created and the stream is not): the run stops with exit 2
/// naming the stream and EFBIG, never a `backup_corruption` finding and never exit 0 (the
/// issue saw the ERROR printed and exit 0).
#[test]
fn a_backup_stream_past_ulimit_f_stops_the_run_with_exit_2() {
    let dir = scratch();
    let cfg = dir.path().join("backup.cfg.ini");
    std::fs::write(
        &cfg,
        TINY.replace(
            "[BulkUpdateUser]",
            "[BackupUser]\nUserCount=1\n[BulkUpdateUser]",
        ),
    )
    .expect("config");
    let files = dir.path().join("d");
    let mut args = run_args(&cfg, &files);
    args.pop();
    args.push("3s".as_ref());
    let out = limited(&format!("--fsize={}", 2 * 1048576 + 12848), false, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        err.contains("sqliosim.bak") && err.contains("File too large"),
        "{}",
        describe(&out)
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("backup_corruption")
            && !err.contains("backup_corruption"),
        "{}",
        describe(&out)
    );
}

/// A resume under `ulimit -u` (as `nobody`: root is not held to it), swept from 4 to 12
/// processes: each ends with exit 0 or with exit 2 naming the limit, never a finding, a panic,
/// an abort or a hang; the set it leaves is still whole (a resume without the limit, then
/// `verify`: exit 0).
#[test]
fn a_resume_past_ulimit_u_is_exit_2_and_leaves_the_set_whole() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED a_resume_past_ulimit_u: needs root (to run as nobody)");
        return;
    }
    let dir = scratch();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    let cfg = config(dir.path());
    let data = dir.path().join("data");
    std::fs::create_dir(&data).expect("data dir");
    std::os::unix::fs::chown(&data, Some(65534), Some(65534)).expect("chown");
    // A set of nobody's, killed in its run.
    let mut first = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_sqliosim"))
        .args(["run", "--duration", "60s", "--config"])
        .arg(&cfg)
        .arg("--dir")
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let journal = || std::fs::metadata(data.join("sqliosim.journal")).map_or(0, |m| m.len());
    while journal() == 0 {
        assert!(std::time::Instant::now() < deadline, "no journal");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let started = journal();
    while journal() == started {
        assert!(std::time::Instant::now() < deadline, "no journal batch");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    first.kill().expect("kill -9");
    first.wait().expect("wait");
    let mut resume = run_args(&cfg, &data);
    resume.push("--resume".as_ref());
    let mut refused = 0;
    for n in 4..=12 {
        let out = limited(&format!("--nproc={n}"), true, &resume);
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            Some(2) if err.contains("ulimit -u") => refused += 1,
            _ => panic!("--nproc={n}: {}", describe(&out)),
        }
        assert!(!err.contains("panicked"), "--nproc={n}: {}", describe(&out));
    }
    assert!(
        refused > 0,
        "no resume met the limit: the sweep tests nothing"
    );
    let out = limited("--nproc=4096", true, &resume);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let v = limited(
        "--nproc=4096",
        true,
        &["verify".as_ref(), "--dir".as_ref(), data.as_os_str()],
    );
    assert_eq!(v.status.code(), Some(0), "{}", describe(&v));
}
