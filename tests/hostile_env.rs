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
        assert!(stderr(&out).is_empty(), "{args:?} not quiet\n{}", describe(&out));
    }
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
