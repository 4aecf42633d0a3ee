//! How a run stopped, told the same way everywhere: the JSON summary's `stop`, the XML log's
//! warning, the verdict line and the exit code. A signal that cuts a run short must never
//! read as a clean, complete run.

use crate::exit::Outcome;
use crate::report::sinks::json::StopInfo;
use crate::sim::control::stop::StopReason;
use crate::sim::driver::SimOutcome;

/// The JSON summary's `stop`.
pub fn stop_info(o: &SimOutcome) -> StopInfo {
    let reason = match o.stop.reason {
        StopReason::None => "completed",
        StopReason::Signal => "signal",
        StopReason::Error if o.worker_panicked => "internal_error",
        StopReason::Error => "findings",
        StopReason::Environment => "environment_error",
    };
    StopInfo {
        reason: reason.into(),
        signal: o.stop.signal_name(),
        after_s: o.stop.after_s,
        planned_s: o.stop.planned_s,
    }
}

/// The XML log's warning when a signal cut the run short (empty otherwise).
pub fn log_text(o: &SimOutcome) -> String {
    o.stop.phrase().map_or_else(String::new, |p| {
        format!(
            "Test {p}: the run did not complete; its results cover only the time before the stop."
        )
    })
}

/// The verdict line.
pub fn verdict(o: &SimOutcome) -> String {
    let cut = o.stop.phrase();
    match (o.findings, cut, o.stopped) {
        (0, Some(p), _) => {
            format!("Verdict: CLEAN so far — {p} (no integrity errors found before the stop).\n")
        }
        (0, None, StopReason::Environment) => {
            "Verdict: INCOMPLETE - no integrity errors found before the run stopped.\n".to_string()
        }
        (0, None, _) if o.environment.is_some() => {
            "Verdict: NOT CLEAN - no integrity errors found, but errors kept part of the run from being done (see the error log).\n".to_string()
        }
        (0, None, _) => "Verdict: CLEAN - no integrity errors found.\n".to_string(),
        (n, Some(p), _) => {
            format!("Verdict: {n} INTEGRITY ERROR(S) found — {p} - see the error log.\n")
        }
        (n, None, _) => format!("Verdict: {n} INTEGRITY ERROR(S) found - see the error log.\n"),
    }
}

/// The outcome of a run that found nothing: interrupted (130, 143) after a signal, else clean.
pub fn clean_or_interrupted(o: &SimOutcome) -> Outcome {
    o.stop
        .exit_code()
        .map_or(Outcome::Clean, Outcome::Interrupted)
}
