//! Big inputs, read through the binary. Inputs that used to take time in the square of their
//! size: an XML log entry with 100,000 attributes (`sqliosim report`), and a configuration
//! with 20,000 `[FileN]` sections (`run --dry-run`). Each must be read right — the attribute
//! after the 100,000 others is used, every file is planned, a path given twice among them is
//! refused naming both sections. How long they take is measured in docs/performance.md ("Big
//! inputs"), not asserted here.
//!
//! And the size limits (`safefile::Kind`): a 3 GiB sparse file (which costs its maker no
//! disk) given as a JSON summary, an XML log, a configuration, a host list, a `sqlio -F`
//! parameter file and a journal (`verify`, `run --resume`, one owned by another user) is
//! refused with exit 2 naming the file, its size and the limit, and the tool's peak memory
//! stays under 1 GiB (it used to read the file whole: 6.1 GiB for `report`).

#![expect(
    unsafe_code,
    reason = "wait4(2), for one child's own peak memory, has no safe wrapper in libc or rustix"
)]

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sqliosim"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_entry_with_100k_attributes_is_read_with_the_last_one() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let mut attrs = String::with_capacity(1 << 21);
    for i in 0..100_000 {
        let _ = write!(attrs, "a{i}='v' ");
    }
    // TYPE comes last: the entry counts as an error only if all the others were read past.
    let log = format!(
        "<?xml version='1.0'?>\n<LOG>\n<ENTRY {attrs}TYPE='ERROR'><EXTENDED_DESCRIPTION>disk on fire</EXTENDED_DESCRIPTION></ENTRY>\n\
         <ENTRY TYPE='INFO' TYPE='ERROR'><EXTENDED_DESCRIPTION>twice</EXTENDED_DESCRIPTION></ENTRY>\n</LOG>\n"
    );
    let path = dir.path().join("wide.log.xml");
    std::fs::write(&path, log).expect("write");
    let out = bin().arg("report").arg(&path).output().expect("report");
    let t = text(&out);
    assert!(out.status.code().is_some(), "killed: {t}");
    // A repeated attribute keeps its last value: both entries are errors.
    assert!(t.contains("Other errors: 2"), "{t}");
    assert!(t.contains("disk on fire"), "{t}");
}

/// A configuration with `n` one-megabyte files (the first is the log); `FileName` of file
/// `dup` (when given) repeats file 7's.
fn many_files(n: usize, dup: Option<usize>) -> String {
    let mut s = String::from("[CONFIG]\nTestCycles=1\nTestCycleDuration=1\n");
    for i in 1..=n {
        let name = if Some(i) == dup { 7 } else { i };
        let _ = write!(
            s,
            "[File{i}]\nFileName=f{name}.mdx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile={}\n",
            if i == 1 { "TRUE" } else { "FALSE" }
        );
    }
    s
}

fn dry_run(config: &str) -> Output {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("many.cfg.ini");
    std::fs::write(&path, config).expect("write");
    bin()
        .args(["run", "--dry-run", "--config"])
        .arg(&path)
        .arg("--dir")
        .arg(dir.path().join("files"))
        .output()
        .expect("run")
}

#[test]
fn twenty_thousand_file_sections_are_all_planned() {
    let out = dry_run(&many_files(20_000, None));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("File20000 = "), "{t:.2000}");
    assert_eq!(t.matches(", data, InitialSize = 1 MB").count(), 19_999);
}

#[test]
fn a_path_given_twice_among_twenty_thousand_is_refused_naming_both() {
    let out = dry_run(&many_files(20_000, Some(19_999)));
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t:.2000}");
    assert!(
        t.contains("[File7] and [File19999] both resolve to ") && t.contains("f7.mdx"),
        "{t:.2000}"
    );
}

/// 3 GiB: past every limit, and past what a 4 GiB `ulimit -v` allowed the tool to read.
const HUGE: u64 = 3 << 30;

/// A sparse file of [`HUGE`] bytes at `path` starting with `head`.
fn sparse(path: &Path, head: &[u8]) -> PathBuf {
    std::fs::write(path, head).expect("write");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    f.set_len(HUGE).expect("set_len");
    path.to_path_buf()
}

/// Exit code, stdout + stderr, and peak resident memory (KiB) of `cmd`, which must end within
/// 60 s (more is a hang). The memory is the child's own `ru_maxrss`, from `wait4` on its pid:
/// `getrusage(RUSAGE_CHILDREN)` would also count the children of the tests running beside.
#[expect(
    clippy::zombie_processes,
    reason = "the child is waited by wait4 on its pid, for its rusage"
)]
fn measured(mut cmd: Command, dir: &Path) -> (Option<i32>, String, i64) {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let file = |p: &Path| Stdio::from(std::fs::File::create(p).expect("create"));
    let child = cmd
        .stdin(Stdio::null())
        .stdout(file(&out))
        .stderr(file(&err))
        .spawn()
        .expect("start");
    let pid = i32::try_from(child.id()).expect("pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    let (status, usage) = loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 fills it and the status for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child, not yet waited; the pointers are to live locals.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(got >= 0, "wait4: {}", std::io::Error::last_os_error());
        if got == pid {
            break (status, usage);
        }
        if Instant::now() > deadline {
            // SAFETY: a plain signal to our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("still running after 60 s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let text = format!(
        "{}{}",
        std::fs::read_to_string(out).unwrap_or_default(),
        std::fs::read_to_string(err).unwrap_or_default()
    );
    (code, text, usage.ru_maxrss)
}

/// `cmd` refused the 3 GiB `file` with exit 2, naming it, its size and `limit`, within 1 GiB.
fn refused(cmd: Command, dir: &Path, file: &str, limit: u64) -> String {
    let (code, text, rss_kib) = measured(cmd, dir);
    eprintln!("{file}: exit {code:?}, peak RSS {rss_kib} KiB");
    assert_eq!(code, Some(2), "{text}");
    for part in [file, &format!("{HUGE} bytes"), &format!("{limit}-byte")] {
        assert!(text.contains(part), "no {part:?} in: {text}");
    }
    assert!(!text.contains("panicked"), "{text}");
    assert!(rss_kib < 1 << 20, "peak RSS {rss_kib} KiB: {text}");
    text
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir")
}

#[test]
fn a_3_gib_json_summary_is_refused_unread() {
    let dir = scratch();
    let json = sparse(&dir.path().join("big.json"), b"{\"schema\": ");
    let mut c = bin();
    c.arg("report").arg(&json);
    refused(c, dir.path(), "big.json", 64 << 20);
}

#[test]
fn a_3_gib_xml_log_is_refused_unread() {
    let dir = scratch();
    let log = sparse(
        &dir.path().join("big.log.xml"),
        b"<?xml version='1.0'?><LOG>",
    );
    let mut c = bin();
    c.arg("report").arg(&log);
    refused(c, dir.path(), "big.log.xml", 128 << 20);
}

#[test]
fn a_3_gib_configuration_is_refused_unread() {
    let dir = scratch();
    let cfg = sparse(&dir.path().join("big.cfg.ini"), b"[CONFIG]\n");
    let mut c = bin();
    c.args(["run", "--dry-run", "--config"])
        .arg(&cfg)
        .arg("--dir")
        .arg(dir.path().join("files"));
    refused(c, dir.path(), "big.cfg.ini", 16 << 20);
}

#[test]
fn a_3_gib_host_list_is_refused_unread() {
    let dir = scratch();
    let hosts = sparse(&dir.path().join("hosts.txt"), b"db1\n");
    std::fs::create_dir(dir.path().join("results")).expect("mkdir");
    let mut c = bin();
    c.arg("report")
        .arg(dir.path().join("results"))
        .arg("--expect-hosts")
        .arg(&hosts);
    refused(c, dir.path(), "hosts.txt", 16 << 20);
}

#[test]
fn a_3_gib_sqlio_parameter_file_is_refused_unread() {
    let dir = scratch();
    sparse(&dir.path().join("param.txt"), b"t.dat 1 0x0 1\n");
    let mut c = bin();
    c.current_dir(dir.path())
        .args(["sqlio", "-kR", "-s1", "-Fparam.txt"]);
    refused(c, dir.path(), "param.txt", 1 << 20);
}

#[test]
fn a_3_gib_journal_is_refused_unread_by_verify() {
    let dir = scratch();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).expect("mkdir");
    sparse(&files.join("sqliosim.journal"), b"");
    let mut c = bin();
    c.arg("verify").arg("--dir").arg(&files);
    refused(c, dir.path(), "sqliosim.journal", 256 << 20);
}

/// A one-second run of a 2 MB data file and a 1 MB log, buffered.
const TINY: &str = "[CONFIG]\nErrorFile=sqliosim.log.xml\nMaxMemoryMB=4\nTestCycles=1\nTestCycleDuration=1\nNoBuffering=FALSE\nUseScatterGather=FALSE\n\
    [AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

/// A tiny run's files in `dir/files`, its journal replaced by a 3 GiB sparse file; and the
/// `run --resume` over them.
fn resume(dir: &Path) -> (Command, PathBuf) {
    let cfg = dir.join("tiny.cfg.ini");
    std::fs::write(&cfg, TINY).expect("write");
    let files = dir.join("files");
    let run = |resume: bool| {
        let mut c = bin();
        c.arg("run")
            .args(resume.then_some("--resume"))
            .args(["--duration", "1s", "--config"])
            .arg(&cfg)
            .arg("--dir")
            .arg(&files);
        c
    };
    let out = run(false).output().expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let journal = files.join("sqliosim.journal");
    std::fs::remove_file(&journal).expect("the run left a journal");
    (run(true), sparse(&journal, b""))
}

#[test]
fn a_3_gib_journal_is_refused_unread_by_resume() {
    let dir = scratch();
    let (resume, _) = resume(dir.path());
    refused(resume, dir.path(), "sqliosim.journal", 256 << 20);
}

#[test]
fn a_3_gib_journal_of_another_user_is_refused_before_it_is_read() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED a_3_gib_journal_of_another_user…: needs root");
        return;
    }
    let dir = scratch();
    let (resume, journal) = resume(dir.path());
    std::os::unix::fs::chown(&journal, Some(65534), Some(65534)).expect("chown");
    let (code, text, rss_kib) = measured(resume, dir.path());
    eprintln!("nobody's journal: exit {code:?}, peak RSS {rss_kib} KiB");
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("sqliosim.journal") && text.contains("owned by uid 65534"),
        "{text}"
    );
    assert!(rss_kib < 1 << 20, "peak RSS {rss_kib} KiB: {text}");
}
