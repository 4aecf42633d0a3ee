//! A request on a backup stream (the full backup's `.bak` or the log backup's `.trn`) that
//! failed: a finding against the device when the device failed it, else a stop of the run for
//! the environment. Shared by the Backup User's two streams (`backup`, `log_backup`).

use super::context::Run;
use super::worker::Worker;
use crate::findings::{FindingClass, Severity};
use crate::io::oserr::{self, ErrorClass};
use crate::page::Verdict;
use crate::sim::engine::backup::scan::StreamProblem;

/// The `Func` of the lines said here, for either stream, and of the backup's own lines.
const FUNC: &str = "BackupUser::Backup";

/// A write (or flush) of the stream at `path` (the full backup's or the log backup's) failed.
/// When the device failed it (EIO and its kin, as `io::oserr` tells them from a request
/// refused for how it was made), that is a `write_error` finding of the Backup User on the
/// stream at the offset written; either way the backup is abandoned, and the stream keeps
/// the last finished one.
pub(super) fn stream_failed_on(
    w: &Worker<'_>,
    path: &std::path::Path,
    what: &str,
    at: Option<u64>,
    e: &std::io::Error,
) {
    let run = w.run;
    if let (Some(offset), ErrorClass::Device) = (at, oserr::classify(e)) {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        let p = StreamProblem {
            offset,
            len: 0,
            block_no: 0,
            page: None,
            verdict: Some(Verdict::IoError { errno }),
            what: format!("the backup device failed a {what} at or after offset {offset}: {e}"),
        };
        let mut f = p.finding(run.plan.seed, path, w.id);
        f.class = FindingClass::WriteError;
        f.errno = Some(errno);
        run.report(f);
    } else {
        environment(w, path, what, e);
        return;
    }
    say(
        run,
        Severity::Error,
        format!(
            "cannot {what} the backup stream {}: {e}; this backup is abandoned",
            path.display()
        ),
    );
}

/// A request on the stream at `path` that the platform refused or could not serve (a limit:
/// EFBIG under `ulimit -f`, ENOMEM, EMFILE; a full filesystem; a device gone): the
/// environment's doing, never the device's, so the run stops with exit 2 (it used to go on, or
/// file a finding against the device).
fn environment(w: &Worker<'_>, path: &std::path::Path, what: &str, e: &std::io::Error) {
    let class = oserr::classify(e);
    let text = format!(
        "cannot {what} the backup stream {}: {e}; {}",
        path.display(),
        oserr::advice(e.raw_os_error())
    );
    let internal = class == ErrorClass::ToolBug;
    super::failure::stop(w.run, super::failure::EnvStop { text, internal });
}

/// A stream that could not be read back by its verify-only pass: when the device failed the
/// read, a `backup_corruption` finding over the whole stream at `path`, with the error;
/// otherwise (no memory for the buffer, a limit) the run stops as for the environment.
pub(super) fn unreadable(w: &Worker<'_>, path: &std::path::Path, len: u64, e: &std::io::Error) {
    if oserr::classify(e) != ErrorClass::Device {
        return environment(w, path, "read back", e);
    }
    let p = StreamProblem {
        offset: 0,
        len,
        block_no: 0,
        page: None,
        verdict: Some(Verdict::IoError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
        }),
        what: format!("the stream could not be read back: {e}"),
    };
    w.run.report(p.finding(w.run.plan.seed, path, w.id));
}

/// Says what a finding stopped in the Backup User's backup ([`Run::message_of_finding`]). A
/// stop that no finding of the run explains stays an error of its own, so that such a run
/// is never CLEAN.
pub(super) fn say_of_finding(run: &Run<'_>, text: String) {
    let user = crate::page::ActorKind::BackupUser.name();
    if run.finding_count() == 0 {
        return run.message(Severity::Error, user, FUNC, text);
    }
    run.message_of_finding(Severity::Error, user, FUNC, text);
}

/// Says a line of the Backup User's backup (its `Func`: [`FUNC`]).
pub(super) fn say(run: &Run<'_>, severity: Severity, text: String) {
    run.message(
        severity,
        crate::page::ActorKind::BackupUser.name(),
        FUNC,
        text,
    );
}
