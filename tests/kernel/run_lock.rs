//! One run per file set: while `sqliosim run` works on a directory, a second `run`, a
//! `run --resume` and a `verify` there refuse (exit 2) naming the running process, and the
//! first run is left to finish clean; a run killed with SIGKILL leaves a lock that a fresh
//! run refuses to take over (exit 2: `verify`, `--resume` or `--discard-previous-run`), and
//! that `--resume` or `verify` takes over, saying so. The lock holds for a second run started in another
//! network namespace (a container sharing the filesystem) and through a FUSE mount (faultfs).

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::crash_support::*;

/// Waits until the run has taken its lock (its lock file names it).
fn wait_for_lock(dir: &Path, child: &mut Child) {
    let lock = dir.join("sqliosim.mdx.lock");
    let want = format!("pid={}", child.id());
    let t = Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.contains(&want)) {
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the run ended early"
        );
        assert!(t.elapsed() < Duration::from_secs(30), "no lock after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a run with `seed`, lets it create its files once it holds its lock (so that it can
/// be resumed), kills it with SIGKILL and reaps it; its PID.
fn killed_run(config: &Path, dir: &Path, seed: u64) -> u32 {
    let mut run = start_run(config, dir, seed);
    wait_for_lock(dir, &mut run);
    std::thread::sleep(Duration::from_millis(1500));
    let pid = run.id();
    run.kill().expect("SIGKILL");
    run.wait().expect("wait");
    pid
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_refused(out: &Output, pid: u32, what: &str) {
    assert_exit(out, 2);
    let err = stderr(out);
    assert!(
        err.contains(&format!("PID {pid} on host")) && err.contains("in use by"),
        "{what}: {err}"
    );
}

#[test]
fn a_second_run_and_a_verify_refuse_while_a_run_works() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 8, false);
    let mut first = start_run(&config, dir.path(), 1);
    wait_for_lock(dir.path(), &mut first);
    let pid = first.id();
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "2"])
        .output()
        .expect("second run");
    assert_refused(&out, pid, "a second run");
    let out = run_cmd(&config, dir.path())
        .args(["--resume", "--seed", "3"])
        .output()
        .expect("resume");
    assert_refused(&out, pid, "a resume");
    assert_refused(&verify(dir.path()), pid, "verify");
    let forced = bin()
        .args(["verify", "--force", "--dir"])
        .arg(dir.path())
        .output()
        .expect("verify --force");
    assert!(
        stderr(&forced).contains("cannot be trusted"),
        "{}",
        stderr(&forced)
    );
    let out = first.wait_with_output().expect("first run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the first run was left alone: {}",
        stderr(&out)
    );
    assert_exit(&verify(dir.path()), 0);
}

#[test]
fn a_lock_left_by_a_killed_run_is_taken_over() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let pid = killed_run(&config, dir.path(), 4);
    // A fresh run would destroy what the killed one left: refused, naming the dead holder.
    let out = run_cmd(&config, dir.path())
        .args(["--cycles", "1", "--duration", "1"])
        .output()
        .expect("fresh run");
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("did not end cleanly") && err.contains(&format!("PID {pid} on host")),
        "{err}"
    );
    let out = run_cmd(&config, dir.path())
        .args([
            "--resume",
            "--cycles",
            "1",
            "--duration",
            "1",
            "--seed",
            "5",
        ])
        .output()
        .expect("resume");
    assert_exit(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("took over the lock") && err.contains(&format!("PID {pid} on host")),
        "{err}"
    );
    let pid = killed_run(&config, dir.path(), 6);
    let out = verify(dir.path());
    assert_exit(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("took over the lock") && err.contains(&format!("PID {pid} on host")),
        "{err}"
    );
}

/// Starts `flock -x LOCK sleep SECS` (a process a killed run had started, which still holds
/// the run's lock file: its fork before exec, or I/O in flight that the kernel ends after the
/// kill) and returns once it holds the lock.
fn hold_lock(dir: &Path, secs: &str) -> Child {
    let held = dir.join("held");
    // One process holds it, the shell become `sleep` with the lock's descriptor: killing it
    // frees the lock and leaves nothing behind (`flock FILE -c CMD` runs CMD in a child, which
    // kept the lock, and the test's output pipe, for its whole sleep after flock was killed).
    // Opened for reading: the lock file's record must stay as the killed run left it.
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"exec 9<"$1" && flock -x 9 && touch "$2" && exec sleep "$3""#)
        .arg("sh")
        .arg(dir.join("sqliosim.mdx.lock"))
        .arg(&held)
        .arg(secs)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sh and flock(1), from util-linux");
    let t = Instant::now();
    while !held.exists() {
        assert!(child.try_wait().expect("try_wait").is_none(), "flock ended");
        assert!(t.elapsed() < Duration::from_secs(30), "no lock after 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// A verify right after `kill -9` of a run, while something the dead run left still holds its
/// lock for a moment (seen in CI: "in use by … PID N", N dead): the verify waits for it and
/// judges the set. A lock still held after the wait is refused, saying the named run has
/// ended and what may still hold the file.
#[test]
fn a_lock_a_killed_run_leaves_held_for_a_moment_is_waited_for() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let pid = killed_run(&config, dir.path(), 4);
    let mut holder = hold_lock(dir.path(), "1");
    let out = verify(dir.path());
    holder.wait().expect("flock");
    assert_exit(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("took over the lock") && err.contains(&format!("PID {pid} on host")),
        "{err}"
    );
    std::fs::remove_file(dir.path().join("held")).expect("rm");
    let mut holder = hold_lock(dir.path(), "600");
    let out = verify(dir.path());
    holder.kill().expect("kill flock");
    holder.wait().expect("flock");
    assert_refused(&out, pid, "a lock held past the wait");
    assert!(stderr(&out).contains("has ended"), "{}", stderr(&out));
}

/// True when this process may create namespaces (`unshare --net` needs root); says why not.
fn can_unshare() -> bool {
    let ok = std::process::Command::new("unshare")
        .args(["--net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
            "SQLIOSIM_REQUIRE_LOOP is set (root expected): `unshare --net` failed"
        );
        eprintln!("skipped: `unshare --net` is not allowed here (needs root)");
    }
    ok
}

#[test]
fn a_run_from_another_network_namespace_is_refused() {
    if !can_unshare() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 6, false);
    let mut first = start_run(&config, dir.path(), 1);
    wait_for_lock(dir.path(), &mut first);
    let out = std::process::Command::new("unshare")
        .args(["--net", "--"])
        .arg(env!("CARGO_BIN_EXE_sqliosim"))
        .args(["run", "--config"])
        .arg(&config)
        .arg("--dir")
        .arg(dir.path())
        .args(["--seed", "2"])
        .output()
        .expect("unshare");
    assert_refused(&out, first.id(), "a run in another network namespace");
    let out = first.wait_with_output().expect("first run");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_second_run_through_a_fuse_mount_is_refused() {
    if !faultfs::fuse_or_skip("run_lock") {
        return;
    }
    let rig = crate::fuse_support::Rig::new("run-lock", crate::fuse_support::Shape::default());
    let mut first = rig.spawn();
    wait_for_lock(rig.data_dir(), &mut first);
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(cfg_dir.path(), 1, 2, false);
    let out = run_cmd(&config, rig.data_dir())
        .args(["--seed", "2"])
        .output()
        .expect("second run");
    assert_refused(&out, first.id(), "a second run through faultfs");
    let out = rig.finish(first);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::fuse_support::describe(&out)
    );
}

/// A file set without lock files (copied without them, or they were removed): a run does not
/// start over a file that a verify holds (here `flock -s`, as verify's shared flock), and leaves
/// it as it was; it starts once the file is free. It used to start mid-scan, and the verify
/// reported the run's writes as corruption.
#[test]
fn a_run_waits_for_a_verify_of_a_set_without_lock_files() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, false);
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "51"])
        .output()
        .expect("first run");
    assert_success(&out);
    for e in std::fs::read_dir(dir.path()).expect("read_dir").flatten() {
        if e.path().extension().is_some_and(|x| x == "lock") {
            std::fs::remove_file(e.path()).expect("remove the lock file");
        }
    }
    let data = dir.path().join("sqliosim.mdx");
    let before = std::fs::read(&data).expect("data");
    let mut holder = std::process::Command::new("flock")
        // -o: the lock stays with flock itself (not its sleep), so killing it frees the file.
        .args(["-s", "-o"])
        .arg(&data)
        .args(["sleep", "30"])
        .spawn()
        .expect("flock -s");
    let t = Instant::now();
    while !std::fs::read_to_string("/proc/locks")
        .expect("/proc/locks")
        .contains(&format!(" {} ", holder.id()))
    {
        assert!(t.elapsed() < Duration::from_secs(10), "flock took no lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "52"])
        .output()
        .expect("run during the verify");
    holder.kill().expect("kill flock");
    holder.wait().expect("wait flock");
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("sqliosim verify"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&data).expect("data"),
        before,
        "the file was left alone"
    );
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "53"])
        .output()
        .expect("run after the verify");
    assert_success(&out);
}

/// A verify while a run has taken its lock but not yet created its files (its engine probe
/// and start-up come first) refuses, naming the lock, where it said "no file created by
/// sqliosim found": found by the test above, whose verify came in that window.
#[test]
fn a_verify_before_the_runs_files_exist_refuses_on_its_lock() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let lock = std::fs::File::create(dir.path().join("sqliosim.mdx.lock")).expect("lock file");
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).expect("flock");
    let out = verify(dir.path());
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("in use by") && !err.contains("no file created"),
        "{err}"
    );
    drop(lock);
    // Once the lock is free, the empty directory is what it is.
    let out = verify(dir.path());
    assert!(
        stderr(&out).contains("no file created by sqliosim found"),
        "{}",
        stderr(&out)
    );
}
