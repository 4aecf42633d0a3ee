//! The host's tools that the evidence asks (`lsblk`, `smartctl`, `nvme`, `journalctl`), run
//! with a bound on their time.
//!
//! They are asked at the start and at the end of a run. A drive that is failing is exactly the
//! one whose `smartctl` hangs in the kernel, and an unbounded wait there would hold the run
//! before it starts, or hold its final summary and bundle for ever after 48 hours of work. So
//! each tool gets [`timeout`] (20 s, or `SQLIOSIM_TOOL_TIMEOUT` seconds): past it the tool is
//! killed and the evidence says it did not answer. A tool stuck in uninterruptible sleep may
//! outlive the kill; it is then left behind rather than waited for (its output readers are
//! detached threads), and the run goes on.
//!
//! `wait-timeout` gives the bounded wait on the child; the standard library has none.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

/// How long a tool may take when `SQLIOSIM_TOOL_TIMEOUT` does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// The bound on one tool's time: `SQLIOSIM_TOOL_TIMEOUT` (whole seconds, at least 1) or
/// [`DEFAULT_TIMEOUT`].
pub fn timeout() -> Duration {
    std::env::var("SQLIOSIM_TOOL_TIMEOUT")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
}

/// What a tool that ended printed.
#[derive(Debug)]
pub struct Answer {
    /// Its exit status.
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: Vec<u8>,
    /// Its standard error.
    pub stderr: Vec<u8>,
}

/// Why a tool gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum NoAnswer {
    /// Not on the PATH.
    #[error("{0} is not installed")]
    NotFound(String),
    /// It could not be started.
    #[error("{0} could not be run: {1}")]
    Spawn(String, std::io::Error),
    /// It did not end in time and was killed.
    #[error("{0} did not answer in {1} s and was killed (a device that hangs its queries?)")]
    TimedOut(String, u64),
}

/// Runs `tool args` with no input, for at most [`timeout`].
pub fn run(tool: &str, args: &[&str]) -> Result<Answer, NoAnswer> {
    run_for(tool, args, timeout())
}

/// Runs `tool args` with no input, for at most `limit`.
pub fn run_for(tool: &str, args: &[&str], limit: Duration) -> Result<Answer, NoAnswer> {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => NoAnswer::NotFound(tool.into()),
            _ => NoAnswer::Spawn(tool.into(), e),
        })?;
    let start = Instant::now();
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let timed_out = || NoAnswer::TimedOut(tool.into(), limit.as_secs());
    let status = match child.wait_timeout(limit) {
        Ok(Some(s)) => s,
        Ok(None) | Err(_) => {
            let _ = child.kill();
            // Reaped if the kill took; a tool in uninterruptible sleep is left behind.
            let _ = child.wait_timeout(Duration::from_millis(200));
            return Err(timed_out());
        }
    };
    // A child of the tool may hold its pipes open after the tool ended: bounded too.
    let left = limit
        .saturating_sub(start.elapsed())
        .max(Duration::from_secs(1));
    let stdout = out.recv_timeout(left).map_err(|_| timed_out())?;
    let stderr = err.recv_timeout(left).unwrap_or_default();
    Ok(Answer {
        status,
        stdout,
        stderr,
    })
}

/// Reads `pipe` to its end on a thread of its own; the bytes arrive on the channel.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut p) = pipe {
        // Without a thread the channel is closed at once: read as no output.
        let _ = std::thread::Builder::new()
            .name("tool output".into())
            .spawn(move || {
                let mut buf = Vec::new();
                let _ = p.read_to_end(&mut buf);
                let _ = tx.send(buf);
            });
    } else {
        let _ = tx.send(Vec::new());
    }
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_that_answers_gives_its_output_and_status() {
        let a = run_for(
            "sh",
            &["-c", "echo out; echo err >&2; exit 3"],
            DEFAULT_TIMEOUT,
        )
        .expect("sh answers");
        assert_eq!(a.stdout, b"out\n");
        assert_eq!(a.stderr, b"err\n");
        assert_eq!(a.status.code(), Some(3));
    }

    #[test]
    fn a_tool_that_hangs_is_killed_and_named() {
        let e = run_for("sleep", &["600"], Duration::from_secs(1)).expect_err("it hangs");
        assert!(
            matches!(e, NoAnswer::TimedOut(ref t, 1) if t == "sleep"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "sleep did not answer in 1 s and was killed (a device that hangs its queries?)"
        );
    }

    #[test]
    fn a_missing_tool_is_not_installed() {
        let e = run_for("sqliosim-no-such-tool", &[], DEFAULT_TIMEOUT).expect_err("missing");
        assert_eq!(e.to_string(), "sqliosim-no-such-tool is not installed");
    }

    #[test]
    fn a_tool_whose_child_keeps_its_output_open_is_bounded_too() {
        // The shell ends at once; its background sleep holds stdout open. It says its PID, so
        // that the test ends it: nothing a test starts outlives it (it held a pipe for 600 s).
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("pid");
        let script = format!(
            "sleep 600 & echo $! > '{}'; echo started",
            pid_file.display()
        );
        let e = run_for("sh", &["-c", &script], Duration::from_secs(1))
            .expect_err("the pipe stays open");
        let pid = std::fs::read_to_string(&pid_file).expect("the sleep's PID");
        let killed = Command::new("kill").arg(pid.trim()).status().expect("kill");
        assert!(matches!(e, NoAnswer::TimedOut(..)), "{e}");
        assert!(
            killed.success(),
            "the background sleep had ended: nothing held the pipe"
        );
    }
}
