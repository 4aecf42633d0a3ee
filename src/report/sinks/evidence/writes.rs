//! What the evidence sink writes: a finding under the error cap (its dump, its log entry, its
//! place in the JSON summary), a message, the count of what the cap suppressed, and the JSON
//! summary rewritten; the first failure to write is kept.

use super::State;
use crate::findings::{Finding, Message, Severity};
use crate::report::error::ReportError;
use crate::report::sinks::error_cap::Admit;
use crate::report::sinks::json::write_atomic;

impl State {
    pub(super) fn keep(&mut self, e: ReportError) {
        self.error.get_or_insert(e);
    }

    pub(super) fn write_json(&mut self) -> Result<(), ReportError> {
        let Some(path) = &self.json else {
            return Ok(());
        };
        self.doc.updated_us = crate::report::sinks::clock::now_us();
        self.doc.suppressed = self.cap.suppressed().clone();
        write_atomic(path, &self.doc)
    }

    pub(super) fn rewrite_json(&mut self) {
        if let Err(e) = self.write_json() {
            self.keep(e);
        }
    }

    /// Logs `m`; a warning is counted whether or not there is a log (the JSON's
    /// `warnings_total`: the WARNING entries of the log).
    pub(super) fn log_message(&mut self, m: &Message) {
        if m.severity == Severity::Warning {
            self.doc.warnings_total += 1;
            if m.func == crate::report::sinks::json::CONFIG_WARNING_FUNC {
                self.doc.config_warnings.push(m.text.clone());
            }
        }
        if let Some(log) = &mut self.log {
            if let Err(e) = log.message(m) {
                self.keep(e);
            }
        }
    }

    pub(super) fn admit(&mut self, class: &str) -> bool {
        self.doc.errors_total += 1;
        match self.cap.admit(class) {
            Admit::Yes => true,
            Admit::FirstSuppressed => {
                let text = format!(
                    "Error cap of {} reached: further errors are counted but neither logged in full nor dumped.",
                    self.cap.cap()
                );
                self.log_message(&Message::new(Severity::Warning, "System", "ErrorCap", text));
                false
            }
            Admit::Suppressed => false,
        }
    }

    pub(super) fn log_suppressed(&mut self) {
        let n = self.cap.suppressed_total();
        if n == 0 {
            return;
        }
        let by: Vec<String> = self
            .cap
            .suppressed()
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let text = format!(
            "{n} further errors were suppressed after the error cap of {} ({}).",
            self.cap.cap(),
            by.join(", ")
        );
        self.log_message(&Message::new(Severity::Warning, "System", "ErrorCap", text));
    }

    pub(super) fn finding(&mut self, mut f: Finding) {
        self.doc.findings_total += 1;
        if !self.admit(f.class.as_str()) {
            return;
        }
        if f.location.is_none() {
            f.location = Some(self.locate(&f));
        }
        let dump = match (&mut self.dumps, f.persistent) {
            (Some(d), true) if f.received.is_some() || f.expected_image.is_some() => {
                Some(d.write(&f))
            }
            _ => None,
        };
        let dump = match dump {
            Some(Ok(files)) => Some(files.text),
            Some(Err(e)) => {
                self.keep(e);
                None
            }
            None => None,
        };
        f.dump = dump.clone().or(f.dump);
        if let Some(log) = &mut self.log {
            let r = log
                .finding(&f)
                .and_then(|_| dump.map_or(Ok(()), |d| log.dump_written(&d)));
            if let Err(e) = r {
                self.keep(e);
            }
        }
        f.received = None;
        f.expected_image = None;
        self.doc.findings.push(f);
        // Each rewrite serialises every finding: with a raised cap, rewrite at powers of two
        // past 256 and leave the rest to the periodic update, so a flood stays linear.
        let n = self.doc.findings.len();
        if n <= 256 || n.is_power_of_two() {
            self.rewrite_json();
        }
    }
}

impl State {
    /// Where the page of `f` lies on the device (its first page for a multi-page request).
    fn locate(&self, f: &Finding) -> crate::findings::DeviceLocation {
        if self.in_memory {
            return crate::findings::DeviceLocation {
                note: Some(
                    "the files are in memory (fault injection): no device holds them".into(),
                ),
                ..Default::default()
            };
        }
        let page = crate::page::PAGE_SIZE as u64;
        crate::report::facts::lba::locate(&f.path, f.offset, page)
    }
}
