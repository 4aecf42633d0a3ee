//! Turning messages and findings into ENTRY elements of the XML log.

use std::path::Path;

use crate::findings::{Finding, Message, Severity};

use crate::report::error::ReportError;
use crate::report::sinks::clock::LogClock;
use crate::report::sinks::entry::{current_tid, render, Entry};
use crate::report::sinks::finding_xml::{description, write_finding};
use crate::report::sinks::hresult::Status;
use crate::report::sinks::xml::XmlLog;

/// SQLIOSim's Func for validation failures.
pub const VALIDATE_FUNC: &str = "CBUF::ValidateBuffer";
/// SQLIOSim's Func for dump notices.
pub const DUMP_FUNC: &str = "ErrorDumpHandler";
/// `Func` of the warning that says a signal (SIGINT, SIGTERM) cut the run short.
pub const STOP_SIGNAL_FUNC: &str = "Stop::Signal";

/// Writes messages and findings as SQLIOSim ENTRY elements.
#[derive(Debug)]
pub struct LogWriter {
    log: XmlLog,
    run_id: Option<u64>,
}

impl LogWriter {
    /// Creates the log at `path` (see [`XmlLog::create`]); `run_id` is the expected run id
    /// shown in findings.
    pub fn create(
        path: &Path,
        clock: LogClock,
        run_id: Option<u64>,
        foreign_ok: bool,
    ) -> Result<LogWriter, ReportError> {
        Ok(LogWriter {
            log: XmlLog::create(path, clock, foreign_ok)?,
            run_id,
        })
    }

    fn write(
        &mut self,
        e: &Entry,
        detail: Option<&dyn Fn(&mut crate::report::sinks::entry::Out)>,
    ) -> Result<(), ReportError> {
        let bytes = render(e, self.log.clock(), detail);
        self.log.append(&bytes)
    }

    /// Logs a message.
    pub fn message(&mut self, m: &Message) -> Result<(), ReportError> {
        self.write(&Entry::from_message(m), None)
    }

    /// Logs an integrity finding with its structured FINDING element.
    pub fn finding(&mut self, f: &Finding) -> Result<(), ReportError> {
        let e = Entry {
            severity: Severity::Error,
            time_us: f.time_us,
            tid: current_tid(),
            user: f.actor.name().to_string(),
            file: "page/verify.rs".into(),
            func: VALIDATE_FUNC.into(),
            status: match f.errno {
                Some(e) => Status::Errno(e),
                None => Status::ValidationFailed,
            },
            text: description(f),
        };
        let run_id = self.run_id;
        self.write(&e, Some(&|w| write_finding(w, f, run_id)))
    }

    /// Logs SQLIOSim's "Dump file successfully written" notice.
    pub fn dump_written(&mut self, dump: &Path) -> Result<(), ReportError> {
        let e = Entry {
            severity: Severity::Error,
            time_us: crate::report::sinks::clock::now_us(),
            tid: current_tid(),
            user: "System".into(),
            file: "report/dump.rs".into(),
            func: DUMP_FUNC.into(),
            status: Status::Success,
            text: format!("Dump file successfully written: {}", dump.display()),
        };
        self.write(&e, None)
    }

    /// Forces the log to stable storage.
    pub fn sync(&self) -> Result<(), ReportError> {
        self.log.sync()
    }

    /// Writes the log's HTML view beside it (see [`XmlLog::write_view`]).
    pub fn write_view(&self) -> Result<(), ReportError> {
        self.log.write_view()
    }

    /// Path of the log.
    pub fn path(&self) -> &Path {
        self.log.path()
    }
}
