//! Running a command under strace and reading back its I/O system calls: which call, on which
//! file (strace `-y` names the path), at which offset, how many bytes, and what it returned.
//! Tests that need strace skip with a printed reason when it is missing, unless
//! `SQLIOSIM_REQUIRE_STRACE=1` (CI), where a missing strace fails them.

use std::path::Path;
use std::process::{Command, Output};

/// The system calls traced.
pub const TRACED: &str =
    "trace=pwrite64,pwritev,pwritev2,pread64,preadv,preadv2,io_uring_enter,fdatasync,openat";

/// One traced call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The system call's name (`pwrite64`, `preadv2`, `fdatasync`, ...).
    pub syscall: String,
    /// The path of the file descriptor it was made on (for `openat`, the path opened).
    pub path: Option<String>,
    /// The file offset, for positioned reads and writes.
    pub offset: Option<u64>,
    /// Bytes asked for (the sum of the iovecs for a vectored call; what it returned when strace
    /// shows only the first of its iovecs).
    pub len: Option<u64>,
    /// The return value (negative for an error).
    pub result: Option<i64>,
    /// The first bytes of the data written or read, as strace shows them (`-s 8`: the first 8,
    /// escaped), for telling a log block (`SQLSIMLG`) from a zero fill.
    pub data: Option<String>,
}

impl Call {
    /// True for a positioned write of any kind.
    pub fn is_write(&self) -> bool {
        self.syscall.starts_with("pwrite")
    }

    /// True for a positioned read of any kind.
    pub fn is_read(&self) -> bool {
        self.syscall.starts_with("pread")
    }
}

/// Whether strace can be run; prints why not and fails when `SQLIOSIM_REQUIRE_STRACE=1`.
pub fn available() -> bool {
    let ok = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("SQLIOSIM_REQUIRE_STRACE").as_deref() != Ok("1"),
            "strace is required (SQLIOSIM_REQUIRE_STRACE=1) but cannot be run"
        );
        eprintln!("skipped: strace is not installed (apt-get install strace)");
    }
    ok
}

/// Runs `cmd` under `strace -f -y`, the trace written to `trace`; returns the command's output
/// and the calls traced.
pub fn run(cmd: &Command, trace: &Path) -> (Output, Vec<Call>) {
    run_tracing(cmd, trace, TRACED)
}

/// The same, tracing the calls `expr` names (strace's `-e trace=…`).
pub fn run_tracing(cmd: &Command, trace: &Path, expr: &str) -> (Output, Vec<Call>) {
    let mut st = Command::new("strace");
    st.args(["-f", "-y", "-qq", "-s", "8", "-e", expr, "-o"])
        .arg(trace)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        st.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => st.env(k, v),
            None => st.env_remove(k),
        };
    }
    let out = st.output().expect("run strace");
    let text = std::fs::read_to_string(trace).expect("read the trace");
    (out, parse(&text))
}

/// Parses strace output (with `-f`, lines start with a pid; calls split by another thread's
/// are joined back).
pub fn parse(text: &str) -> Vec<Call> {
    let mut unfinished: std::collections::HashMap<String, String> = Default::default();
    let mut calls = Vec::new();
    for line in text.lines() {
        let (pid, rest) = match line.split_once(' ') {
            Some((p, r)) if p.chars().all(|c| c.is_ascii_digit()) => (p, r.trim_start()),
            _ => ("", line),
        };
        if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            unfinished.insert(pid.to_string(), head.to_string());
            continue;
        }
        let whole = match rest.strip_prefix("<... ") {
            Some(tail) => match (unfinished.remove(pid), tail.split_once("resumed>")) {
                (Some(head), Some((_, tail))) => format!("{head}{tail}"),
                _ => continue,
            },
            None => rest.to_string(),
        };
        if let Some(call) = parse_call(&whole) {
            calls.push(call);
        }
    }
    calls
}

/// One complete call line: `name(args) = result`.
fn parse_call(line: &str) -> Option<Call> {
    let open = line.find('(')?;
    let syscall = line[..open].to_string();
    // strace pads short calls so that ` = RESULT` starts at a fixed column: `…, 8192)    = 8192`.
    let eq = line.rfind(" = ")?;
    let close = line[..eq].trim_end().strip_suffix(')').map(str::len)?;
    let args = split_args(&line[open + 1..close]);
    let result = line[eq + 3..]
        .split_whitespace()
        .next()
        .and_then(|r| r.split('<').next())
        .and_then(|r| r.parse().ok());
    let fd_path = |a: &str| {
        let (_, p) = a.split_once('<')?;
        Some(p.strip_suffix('>').unwrap_or(p).to_string())
    };
    let num = |i: usize| args.get(i).and_then(|a| a.trim().parse::<u64>().ok());
    let (path, offset, len) = match syscall.as_str() {
        "pwrite64" | "pread64" => (args.first().and_then(|a| fd_path(a)), num(3), num(2)),
        "pwritev" | "pwritev2" | "preadv" | "preadv2" => (
            args.first().and_then(|a| fd_path(a)),
            num(3),
            args.get(1).and_then(|a| vectored_len(a, result)),
        ),
        "openat" => (
            line[eq + 3..].split_once('<').map(|(_, p)| {
                let p = p.trim_end();
                p.strip_suffix('>').unwrap_or(p).to_string()
            }),
            None,
            None,
        ),
        _ => (args.first().and_then(|a| fd_path(a)), None, None),
    };
    let data = match syscall.as_str() {
        "pwrite64" | "pread64" | "pwritev" | "pwritev2" | "preadv" | "preadv2" => {
            args.get(1).and_then(|a| first_string(a))
        }
        _ => None,
    };
    Some(Call {
        syscall,
        path,
        offset,
        len,
        result,
        data,
    })
}

/// The text of the first quoted string in an argument.
fn first_string(arg: &str) -> Option<String> {
    let (_, rest) = arg.split_once('"')?;
    let mut out = String::new();
    let mut escaped = false;
    for c in rest.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(out),
            _ => {}
        }
        out.push(c);
    }
    Some(out)
}

/// Bytes of a vectored call: the sum of its iovecs, or, when strace cut the array short
/// (`-s 8` shows 8 elements, then `...`), what the call returned (a read or write of direct
/// I/O transfers all it asked for or fails).
fn vectored_len(arg: &str, result: Option<i64>) -> Option<u64> {
    if arg.trim_end().ends_with("...]") {
        result.and_then(|r| u64::try_from(r).ok())
    } else {
        Some(iov_total(arg))
    }
}

/// The sum of `iov_len=N` in an iovec array.
fn iov_total(arg: &str) -> u64 {
    arg.split("iov_len=")
        .skip(1)
        .filter_map(|s| {
            let n: String = s.chars().take_while(char::is_ascii_digit).collect();
            n.parse::<u64>().ok()
        })
        .sum()
}

/// Splits a call's arguments at the commas outside brackets, braces and strings.
fn split_args(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth, mut quoted, mut escaped) =
        (Vec::new(), String::new(), 0i32, false, false);
    for c in s.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' | '{' | '(' if !quoted => depth += 1,
            ']' | '}' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[test]
fn strace_lines_parse_into_calls() {
    let text = "\
101 openat(AT_FDCWD</w>, \"/w/a.ldx\", O_RDWR|O_DIRECT) = 5</w/a.ldx>
101 pwrite64(5</w/a.ldx>, \"SQLSIMLG\"..., 61440, 8192) = 61440
102 pwritev(6</w/a.mdx>, [{iov_base=\"\"..., iov_len=8192}, {iov_base=\"\"..., iov_len=8192}], 2, 16384 <unfinished ...>
101 fdatasync(5</w/a.ldx>) = 0
102 <... pwritev resumed>) = 16384
103 pread64(5</w/a.ldx>, \"\"..., 512, 8704) = -1 EIO (Input/output error)
104 pwrite64(7</w/a.bak>, \"SQLSIMPG\"..., 8192, 0)           = 8192
";
    let calls = parse(text);
    assert_eq!(
        calls.len(),
        6,
        "a call strace padded is a call too: {calls:?}"
    );
    assert_eq!(
        (
            calls[5].path.as_deref(),
            calls[5].offset,
            calls[5].len,
            calls[5].result
        ),
        (Some("/w/a.bak"), Some(0), Some(8192), Some(8192))
    );
    assert_eq!(calls[0].path.as_deref(), Some("/w/a.ldx"));
    assert_eq!(
        (calls[1].offset, calls[1].len, calls[1].result),
        (Some(8192), Some(61440), Some(61440))
    );
    assert_eq!(calls[1].data.as_deref(), Some("SQLSIMLG"));
    assert_eq!(calls[2].syscall, "fdatasync");
    let v = &calls[3];
    assert_eq!(
        (v.syscall.as_str(), v.path.as_deref(), v.offset, v.len),
        ("pwritev", Some("/w/a.mdx"), Some(16384), Some(16384))
    );
    assert_eq!(calls[4].result, Some(-1));
    assert!(calls[4].is_read() && calls[1].is_write());
}
