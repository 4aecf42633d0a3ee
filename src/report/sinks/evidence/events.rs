//! What the events other than findings do to the evidence: messages, the facts of the machine
//! and the I/O, the ticks, the stop, and the per-file summary lines.

use std::time::Instant;

use super::{State, JSON_EVERY};
use crate::events::{Facts, Stopped};
use crate::findings::{Message, Severity};
use crate::report::facts::io_service::{ALIGN_FUNC, LOG_FUNC};
use crate::report::sinks::json::HostInfo;

/// What the events other than findings do to the evidence.
impl State {
    pub(super) fn message(&mut self, m: &Message) {
        if m.severity == Severity::Error {
            if self.admit("error_message") {
                self.log_message(m);
            }
            return;
        }
        self.summary_logged |= m.func == crate::stats::SQLIOSIM_SUMMARY_FUNC;
        self.log_message(m);
    }

    /// The system information (log entries and JSON), what carries the I/O (a log entry and
    /// the JSON), or one file's direct-I/O unit (a log entry, `Func` [`ALIGN_FUNC`]).
    pub(super) fn facts(&mut self, facts: Facts) {
        let info = |text| Message::new(Severity::Info, "System", "SystemInfo", text);
        match facts {
            Facts::System(sys) => {
                for line in crate::report::facts::sysinfo::describe(&sys) {
                    self.log_message(&info(line));
                }
                if let Some(line) = self.doc.host.as_ref().map(HostInfo::identity_line) {
                    self.log_message(&info(line));
                }
                self.capture_before(&sys);
                self.doc.system = Some(sys);
            }
            Facts::IoService(io) => {
                self.in_memory = io.used == "memory";
                let text = format!("I/O engine: {}", io.describe());
                self.log_message(&Message {
                    func: LOG_FUNC.into(),
                    ..info(text)
                });
                self.doc.io_engine = Some(io);
            }
            Facts::Unit(u) => {
                let m = Message {
                    func: ALIGN_FUNC.into(),
                    ..info(crate::report::facts::io_service::unit_line(&u))
                };
                self.log_message(&m);
                return;
            }
        }
        self.rewrite_json();
    }

    /// Keeps the JSON summary current while the run goes on: its status now, the whole
    /// document every [`JSON_EVERY`].
    pub(super) fn tick(&mut self, t: &crate::events::Tick) {
        let first = self.doc.status.is_none();
        self.doc.status = Some(crate::report::sinks::status::RunStatus::of(
            t,
            self.doc.stats.as_ref(),
        ));
        if first || self.last_json.elapsed() >= JSON_EVERY {
            self.rewrite_json();
            self.last_json = Instant::now();
        }
    }

    /// How the run stopped (JSON `stop`, and `environment_error` when one stopped it); a
    /// signal stop is also logged as a warning (`Func` [`crate::report::sinks::log_entries::STOP_SIGNAL_FUNC`]).
    pub(super) fn stopped(&mut self, s: Stopped) {
        if let Some(text) = s.environment_error {
            self.doc.environment_error = Some(text);
        }
        if s.info.reason == "signal" {
            let func = crate::report::sinks::log_entries::STOP_SIGNAL_FUNC;
            self.log_message(&Message::new(Severity::Warning, "System", func, s.text));
        }
        self.doc.stop = Some(s.info);
    }

    /// The per-file summaries of the statistics received, as SQLIOSim logs them.
    pub(super) fn log_summary_lines(&mut self) {
        let Some(stats) = self.doc.stats.take() else {
            return;
        };
        for f in &stats.files {
            for line in crate::stats::file_summary_lines(f) {
                let func = crate::stats::SQLIOSIM_SUMMARY_FUNC;
                self.log_message(&Message::new(Severity::Info, "Display Monitor", func, line));
            }
        }
        self.doc.stats = Some(stats);
    }
}
