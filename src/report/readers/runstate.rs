//! Whether the run a report reads finished, is still going, or ended without finishing: a run
//! in progress or unfinished is never a pass (`sqliosim report` exits 2 for both, as the fleet
//! report does).
//!
//! A JSON summary that says `outcome: "running"` is RUNNING when its writer process still lives
//! (read on the machine that wrote it: same machine id, its `pid` a live `sqliosim`, which
//! also covers a run still creating large files, whose heartbeat is silent), or, read
//! elsewhere, when its heartbeat is recent (the run rewrites it every 10 s, [`HEARTBEAT`]
//! allows three of those). Anything else that did not finish — killed, cut
//! short, stopped by a signal or an environment error, an XML log without its final summary —
//! is UNFINISHED, with the reason.

use std::time::Duration;

use crate::report::readers::load::RunEvidence;
use crate::report::sinks::json::{HostInfo, JsonReport};

/// The longest silence of a live run's JSON summary (three of its 10 s rewrites).
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// Where the run of a report stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// It ran to its end and wrote its final summary.
    Finished,
    /// It is still going: its heartbeat is `ago_s` seconds old.
    Running {
        /// Seconds since the JSON summary's last rewrite.
        ago_s: u64,
    },
    /// It ended without finishing, for this reason.
    Unfinished(String),
}

/// The state of the run `l` describes, `now_us` microseconds after the epoch.
pub fn of(l: &RunEvidence, now_us: u64) -> RunState {
    // An error that stopped the run, or kept part of it from being done, is never a pass,
    // even when the run then ran to its end (the run itself says NOT CLEAN, exit 2).
    if let Some((e, doc)) = l
        .json
        .as_ref()
        .and_then(|d| Some((d.environment_error.as_ref()?, d)))
    {
        let stopped = doc
            .stop
            .as_ref()
            .is_some_and(|s| s.reason == "environment_error");
        return RunState::Unfinished(if stopped {
            format!("stopped on an environment error: {e}")
        } else {
            format!("errors kept part of the run from being done: {e}")
        });
    }
    if l.complete {
        return RunState::Finished;
    }
    if l.truncated {
        return RunState::Unfinished("the run did not finish: the file was cut short".into());
    }
    if let Some(by) = &l.stopped_by {
        return RunState::Unfinished(format!("stopped by {by}"));
    }
    let Some(doc) = &l.json else {
        return RunState::Unfinished(
            "the run did not finish: the XML log has no final summary (killed, or still going)"
                .into(),
        );
    };
    let ago_s = now_us.saturating_sub(doc.updated_us) / 1_000_000;
    if doc.outcome != "running" || doc.ended_us.is_some() {
        return RunState::Unfinished("the run did not finish: no final summary".into());
    }
    match writer_alive(doc) {
        Some(true) => RunState::Running { ago_s },
        None if ago_s <= HEARTBEAT.as_secs() => RunState::Running { ago_s },
        Some(false) => RunState::Unfinished(format!(
            "the run did not finish: its process is gone, last heartbeat {ago_s} s ago"
        )),
        None => RunState::Unfinished(format!(
            "the run did not finish: last heartbeat {ago_s} s ago (written on another machine)"
        )),
    }
}

/// Whether the writer of `doc` is a `sqliosim` process alive on this machine; `None` when
/// that cannot be told here (another machine, or no pid recorded): the heartbeat decides.
fn writer_alive(doc: &JsonReport) -> Option<bool> {
    let (pid, host) = (doc.pid?, doc.host.as_ref()?);
    let here = HostInfo::capture();
    let same = match (&host.machine_id, &here.machine_id) {
        (Some(a), Some(b)) => a == b,
        (None, None) => host.hostname == here.hostname,
        _ => false,
    };
    if !same {
        return None;
    }
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    Some(comm.trim() == "sqliosim")
}

/// The verdict line: CLEAN, FAILED, RUNNING or UNFINISHED, and why.
pub fn verdict_line(l: &RunEvidence, state: &RunState) -> String {
    let n = l.integrity_errors();
    match (state, n) {
        (RunState::Finished, 0) => "Verdict: CLEAN: no integrity errors".into(),
        (RunState::Finished, n) => format!("Verdict: FAILED: {n} integrity error(s)"),
        (RunState::Running { ago_s }, 0) => format!(
            "Verdict: RUNNING: no integrity errors so far (the run is still going, last heartbeat {ago_s} s ago; not a final verdict)"
        ),
        (RunState::Running { ago_s }, n) => format!(
            "Verdict: FAILED: {n} integrity error(s) so far (the run is still going, last heartbeat {ago_s} s ago)"
        ),
        (RunState::Unfinished(why), 0) => format!(
            "Verdict: UNFINISHED: no integrity errors found before it ended ({why}; not a pass)"
        ),
        (RunState::Unfinished(why), n) => {
            format!("Verdict: FAILED: {n} integrity error(s) ({why})")
        }
    }
}
