//! Hostile and broken environments met the way a user meets them, through the real binary:
//! stdout that is a closed pipe or a full device, thread and memory limits (`ulimit -u`,
//! `ulimit -v`), a filesystem far smaller than the data file, `ulimit -f`, and the messages
//! for unreadable devices and directories. None of them may panic (exit 101), abort (134) or
//! hang: each ends quietly (a closed pipe) or with a clear message and exit 2.
//!
//! Cases that need root (a tmpfs mount, running as another user) skip with a SKIPPED line
//! unless SQLIOSIM_REQUIRE_LOOP=1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sqliosim"));
    c.stdin(Stdio::null());
    c
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A pipe whose reading end is already closed: the first write to it fails with EPIPE, as
/// stdout does under `| head -1` once head has gone.
fn closed_pipe() -> Stdio {
    let (reader, writer) = rustix::pipe::pipe().expect("pipe");
    drop(reader);
    Stdio::from(writer)
}

fn dev_full() -> Stdio {
    Stdio::from(std::fs::File::create("/dev/full").expect("open /dev/full"))
}

/// A one-second run of one 2 MB data file and a 1 MB log, buffered (any filesystem).
const TINY: &str = "[CONFIG]
ErrorFile=sqliosim.log.xml
MaxMemoryMB=4
TestCycles=1
TestCycleDuration=1
NoBuffering=FALSE
DeleteFilesAtStartup=TRUE
[RandomUser]
UserCount=1
[AuditUser]
UserCount=0
[ReadAheadUser]
UserCount=0
[BulkUpdateUser]
UserCount=0
[File1]
FileName=sqliosim.mdx
InitialSize=2
MaxSize=2
Increment=0
Shrinkable=FALSE
LogFile=FALSE
[File2]
FileName=sqliosim.ldx
InitialSize=1
MaxSize=1
Increment=0
Shrinkable=FALSE
LogFile=TRUE
";

/// Writes `text` as a config in `dir`; returns its path.
fn config(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("t.cfg.ini");
    std::fs::write(&p, text).expect("write config");
    p
}

fn assert_no_panic(out: &Output) {
    let err = stderr(out);
    assert!(
        !err.contains("panicked") && out.status.code() != Some(101),
        "panicked\n{}",
        describe(out)
    );
}

#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    for args in [
        &["completions", "bash"][..],
        &["run", "-h"],
        &["--help"],
        &["man"],
        &["bench", "--help"],
        &["report", "--help"],
    ] {
        let out = bin()
            .args(args)
            .stdout(closed_pipe())
            .output()
            .expect("run sqliosim");
        assert_no_panic(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}\n{}", describe(&out));
        assert!(
            stderr(&out).is_empty(),
            "{args:?} not quiet\n{}",
            describe(&out)
        );
    }
}

/// `sqliosim … 2>&1 | head -1`: once the reader is gone, stderr is a closed pipe too. An
/// error or warning that cannot be printed must not turn the exit status into a panic's 101
/// (each of these exited 101 before: `eprintln!` panics when stderr fails).
#[test]
fn a_closed_stderr_pipe_keeps_the_exit_status() {
    let tmp = scratch();
    let missing = tmp.path().join("missing");
    let cfg = missing.join("x.cfg.ini");
    for args in [
        vec![
            "run".to_string(),
            "--config".into(),
            cfg.display().to_string(),
        ],
        vec![
            "verify".into(),
            "--dir".into(),
            missing.display().to_string(),
        ],
        vec!["run".into(), "--no-such-flag".into()],
        vec![
            "bench".into(),
            "--file".into(),
            missing.join("f").display().to_string(),
            "--rw".into(),
            "read".into(),
        ],
    ] {
        let out = bin()
            .args(&args)
            .stdout(closed_pipe())
            .stderr(closed_pipe())
            .output()
            .expect("run sqliosim");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {:?}", out.status);
    }
}

/// `sqliosim run … | head -1`: the reader goes after the first line. The run carries on and
/// leaves its evidence, and its exit status is its verdict (it used to stop at the header's
/// next line and exit 0: a pass that tested nothing).
#[test]
fn a_run_whose_stdout_reader_goes_still_runs() {
    let dir = scratch();
    let cfg = config(dir.path(), TINY);
    let data = dir.path().join("d");
    let mut c = bin();
    run_args(&mut c, &cfg, &data);
    let out = c
        .args(["--json", &data.join("run.json").display().to_string()])
        .stdout(closed_pipe())
        .output()
        .expect("run sqliosim");
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let json = std::fs::read_to_string(data.join("run.json")).expect("the run's JSON summary");
    assert!(json.contains("\"completed\""), "{json}");
}

#[test]
fn a_full_stdout_is_a_clear_error() {
    for args in [&["completions", "bash"][..], &["run", "-h"], &["man"]] {
        let out = bin()
            .args(args)
            .stdout(dev_full())
            .output()
            .expect("run sqliosim");
        assert_no_panic(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}\n{}", describe(&out));
        let err = stderr(&out);
        assert!(
            err.contains("cannot write to standard output: No space left on device"),
            "{args:?}\n{}",
            describe(&out)
        );
    }
}

#[test]
fn verify_into_a_full_or_closed_stdout() {
    let dir = scratch();
    let cfg = config(dir.path(), TINY);
    let data = dir.path().join("d");
    let run = bin()
        .arg("run")
        .arg("--config")
        .arg(&cfg)
        .arg("--dir")
        .arg(&data)
        .output()
        .expect("run");
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    let full = bin()
        .arg("verify")
        .arg("--dir")
        .arg(&data)
        .stdout(dev_full())
        .output()
        .expect("verify");
    assert_no_panic(&full);
    assert_eq!(full.status.code(), Some(2), "{}", describe(&full));
    assert!(
        stderr(&full).contains("cannot write to standard output"),
        "{}",
        describe(&full)
    );
    let closed = bin()
        .arg("verify")
        .arg("--dir")
        .arg(&data)
        .stdout(closed_pipe())
        .output()
        .expect("verify");
    assert_no_panic(&closed);
    assert_eq!(closed.status.code(), Some(0), "{}", describe(&closed));
}

/// True when running as root; otherwise prints a SKIPPED line, or fails when
/// SQLIOSIM_REQUIRE_LOOP=1 says the case must run.
fn root_or_skip(name: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
        "{name}: needs root (SQLIOSIM_REQUIRE_LOOP is set)"
    );
    eprintln!("SKIPPED {name}: needs root");
    false
}

/// Waits for `cmd` at most `secs` seconds (killing it then): the case must not hang.
fn output_within(mut cmd: Command, secs: u64) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().expect("kill");
            let out = child.wait_with_output().expect("wait");
            panic!("still running after {secs} s: it hangs\n{}", describe(&out));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.wait_with_output().expect("output")
}

/// `sqliosim` under prlimit(1) with `limit` (e.g. `--nproc=8`), as user `uid` when given.
fn limited(limit: &str, uid: Option<u32>) -> Command {
    let mut c = match uid {
        Some(uid) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .args(["--clear-groups", "prlimit"]);
            c
        }
        None => Command::new("prlimit"),
    };
    c.args([limit, "--", env!("CARGO_BIN_EXE_sqliosim")])
        .stdin(Stdio::null());
    c
}

fn run_args(c: &mut Command, cfg: &Path, dir: &Path) {
    c.arg("run").arg("--config").arg(cfg).arg("--dir").arg(dir);
}

#[test]
fn too_few_threads_is_a_clear_error_not_a_hang() {
    if !root_or_skip("too_few_threads") {
        return;
    }
    let dir = scratch();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .expect("chmod");
    let cfg = config(dir.path(), TINY);
    // A user of its own, so that no other process counts against its limit of 8.
    let mut c = limited("--nproc=8", Some(64_123));
    run_args(&mut c, &cfg, &dir.path().join("d"));
    let out = output_within(c, 120);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    // Whichever thread the limit stops first: an actor's, or (when the engine probe chose
    // psync, as it does on a loaded machine) one of the psync engine's I/O helpers.
    let err = stderr(&out);
    assert!(
        (err.contains("cannot start thread") || err.contains("cannot start an I/O helper thread"))
            && err.contains("ulimit -u"),
        "{}",
        describe(&out)
    );
    // The psync engine chosen outright: its helpers are stopped by the limit, said as clearly.
    let mut c = limited("--nproc=8", Some(64_123));
    run_args(&mut c, &cfg, &dir.path().join("d"));
    c.args(["--engine", "psync"]);
    let out = output_within(c, 120);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(stderr(&out).contains("ulimit -u"), "{}", describe(&out));
}

#[test]
fn a_psync_service_deeper_than_its_helpers_runs() {
    let dir = scratch();
    let deep = TINY.replace("[CONFIG]\n", "[CONFIG]\nMaxOutstandingIO=140000\n");
    let cfg = config(dir.path(), &deep);
    let mut c = bin();
    run_args(&mut c, &cfg, &dir.path().join("d"));
    c.args(["--engine", "psync"]);
    let out = output_within(c, 120);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let out = output_within(deep_bench(dir.path(), "psync"), 120);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
}

/// A one-second bench of a 16 MB file in `dir` with 100,000 requests outstanding on a `kind` ring.
fn deep_bench(dir: &Path, kind: &str) -> Command {
    let mut b = bin();
    b.arg("bench")
        .arg("--file")
        .arg(dir.join("b.dat"))
        .args([
            "--size",
            "16M",
            "--duration",
            "1",
            "--outstanding",
            "100000",
        ])
        .args(["--engine", kind]);
    b
}

#[test]
fn an_io_uring_deeper_than_the_kernel_allows_says_so() {
    let dir = scratch();
    let out = output_within(deep_bench(dir.path(), "uring"), 120);
    assert_no_panic(&out);
    let err = stderr(&out);
    if err.contains("falls back") || out.status.code() == Some(0) {
        eprintln!("SKIPPED an_io_uring_deeper…: no io_uring here (psync ran)");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        err.contains("depth of 100000") && err.contains("at most 32768"),
        "{}",
        describe(&out)
    );
}

// Under 120 MB an allocation after our clear message used to abort about one run in six
// (Rust's allocation-failure handler, or glibc's "failed to register TLS destructor" as a
// thread starts); the binary's allocator now keeps 16 MiB of address space aside and gives it
// back at the first failed allocation (docs/security.md). 12 of 12 runs of this test passed
// before it was enabled.
#[test]
fn a_memory_limit_is_a_clear_error_or_a_clean_run() {
    let dir = scratch();
    let quick = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/quick.cfg.ini");
    // 200 MB of address space: too little for the quick config's threads and buffers on most
    // machines; whichever allocation fails must say so (exit 2), never panic or abort.
    for limit in ["--as=200000000", "--as=120000000"] {
        let mut c = limited(limit, None);
        // A directory per limit: a run stopped at an error may leave a journal behind.
        run_args(
            &mut c,
            &quick,
            &dir.path().join(limit.trim_start_matches("--as=")),
        );
        c.args(["--duration", "1s"]);
        let out = output_within(c, 120);
        assert_no_panic(&out);
        match out.status.code() {
            Some(0) => {}
            Some(2) => assert!(stderr(&out).contains("cannot "), "{}", describe(&out)),
            _ => panic!(
                "{limit}: neither clean nor a clear error\n{}",
                describe(&out)
            ),
        }
    }
}

#[test]
fn a_file_size_limit_is_a_clear_error_not_a_silent_kill() {
    let dir = scratch();
    let cfg = config(dir.path(), TINY);
    // 1 MB: the 2 MB data file cannot be written in full.
    let mut c = limited("--fsize=1048576", None);
    run_args(&mut c, &cfg, &dir.path().join("d"));
    let out = output_within(c, 120);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("sqliosim.mdx") && err.contains("File too large"),
        "{}",
        describe(&out)
    );
}

/// A tmpfs of `mb` megabytes, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: PathBuf, mb: u32) -> Tmpfs {
        std::fs::create_dir_all(&at).expect("mkdir");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(&at)
            .status()
            .expect("mount");
        assert!(ok.success(), "mount tmpfs");
        Tmpfs(at)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_sparse_file_larger_than_its_filesystem_stops_the_run_soon() {
    if !root_or_skip("sparse_larger_than_filesystem") {
        return;
    }
    let dir = scratch();
    let fs = Tmpfs::mount(dir.path().join("small"), 8);
    let big = TINY
        .replace("InitialSize=2\nMaxSize=2", "InitialSize=64\nMaxSize=64")
        .replace("LogFile=FALSE", "LogFile=FALSE\nSparse=TRUE");
    let cfg = config(dir.path(), &big);
    let json = dir.path().join("run.json");
    let mut c = bin();
    run_args(&mut c, &cfg, &fs.0);
    c.arg("--journal-dir")
        .arg(dir.path())
        .arg("--log")
        .arg(dir.path().join("run.log.xml"))
        .arg("--json")
        .arg(&json)
        .args(["--duration", "3s"]);
    let out = output_within(c, 120);
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("sqliosim.mdx: no space left for a write") && err.contains("run stops here"),
        "{}",
        describe(&out)
    );
    let summary = std::fs::read_to_string(&json).expect("the JSON summary is written");
    assert!(summary.contains("environment_error"), "{summary}");
    assert!(
        dir.path().join("run.log.xml").exists(),
        "the log is written"
    );
}

#[test]
fn an_os_error_is_printed_once() {
    let dir = scratch();
    let missing = dir.path().join("missing.json");
    let out = bin().arg("report").arg(&missing).output().expect("report");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("(os error 2)").count(), 1, "{}", describe(&out));
    assert!(err.contains("missing.json"), "{}", describe(&out));
}

/// `sqliosim ARGS…` as user `uid` (not root), for permission cases.
fn as_user(uid: u32) -> Command {
    let mut c = Command::new("setpriv");
    c.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={uid}"))
        .args(["--clear-groups", env!("CARGO_BIN_EXE_sqliosim")])
        .stdin(Stdio::null());
    c
}

#[test]
fn verify_of_a_directory_without_search_permission_says_so() {
    if !root_or_skip("verify_without_search_permission") {
        return;
    }
    let dir = scratch();
    let cfg = config(dir.path(), TINY);
    let data = dir.path().join("d");
    let mut c = bin();
    run_args(&mut c, &cfg, &data);
    let run = c.output().expect("run");
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path, m| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    mode(dir.path(), 0o755).expect("chmod");
    // Names readable, files not reachable: r without x.
    mode(&data, 0o744).expect("chmod");
    let out = as_user(64_123)
        .args(["verify", "--no-journal", "--dir"])
        .arg(&data)
        .output()
        .expect("verify");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Permission denied") && err.contains(&data.display().to_string()),
        "{}",
        describe(&out)
    );
}

#[test]
fn bench_on_an_unreadable_device_says_permission_denied() {
    if !root_or_skip("bench_on_an_unreadable_device") {
        return;
    }
    let dir = scratch();
    let img = dir.path().join("dev.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .expect("image");
    let attach = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
        .expect("losetup");
    if !attach.status.success() {
        assert!(
            std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
            "losetup failed: {}",
            describe(&attach)
        );
        eprintln!("SKIPPED bench_on_an_unreadable_device: no loop device");
        return;
    }
    let dev = String::from_utf8_lossy(&attach.stdout).trim().to_string();
    let out = as_user(64_123)
        .args(["bench", "--rw", "read", "--duration", "1", "--file", &dev])
        .output()
        .expect("bench");
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot read the device's size: Permission denied") && !err.contains("0-byte"),
        "{}",
        describe(&out)
    );
}

/// A directory whose name is not UTF-8 (made in a Latin-1 locale: `caf\xe9`). `run --dir` there
/// is refused with exit 2 before anything is created, naming the path with the odd byte
/// escaped (it panicked reading its own command line, exit 101, after writing a lock and an
/// empty log there). A set copied into such a directory is still verified, with a JSON
/// summary: clean, exit 0, nothing lost (verify panicked the same way).
#[test]
fn a_directory_whose_name_is_not_utf8_is_refused_by_run_and_verified_by_verify() {
    use std::os::unix::ffi::OsStrExt;
    let base = scratch();
    let cfg = config(base.path(), TINY);
    let odd = base.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&odd).expect("mkdir");
    let mut c = bin();
    run_args(&mut c, &cfg, &odd);
    let out = c.output().expect("run");
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = stderr(&out);
    assert!(
        err.contains("caf\\xe9") && err.contains("not UTF-8"),
        "{}",
        describe(&out)
    );
    let left: Vec<_> = std::fs::read_dir(&odd).expect("ls").collect();
    assert!(left.is_empty(), "the refusal left {left:?}");

    let plain = base.path().join("plain");
    let mut c = bin();
    run_args(&mut c, &cfg, &plain);
    let ran = c.output().expect("run");
    assert_eq!(ran.status.code(), Some(0), "{}", describe(&ran));
    for e in std::fs::read_dir(&plain).expect("ls") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), odd.join(e.file_name())).expect("copy the set");
    }
    let json = base.path().join("verify.json");
    let out = bin()
        .arg("verify")
        .arg("--dir")
        .arg(&odd)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("verify");
    assert_no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("pages checked") && text.contains("0 bad"),
        "{text}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json")).expect("valid JSON");
    assert_eq!(summary["outcome"], "clean", "{summary}");
}
