//! The evidence sink: every event of a run goes to the XML log, the page dumps and the JSON
//! summary, under the error cap.
//!
//! It implements [`EventSink`], so workers can emit into it directly from any thread, and it
//! learns everything from the events: findings and messages, the facts of the machine and the
//! I/O, the ticks (its periodic JSON rewrite), the stop and the summary. A failure to write evidence does not stop the run; the first one is
//! kept and handed back by [`Evidence::finish`] (or [`Evidence::take_error`]).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::events::{Event, EventSink, Facts, Stopped};
use crate::findings::{Finding, Message, Severity};

use crate::report::error::ReportError;
use crate::report::facts::io_service::{ALIGN_FUNC, LOG_FUNC};
use crate::report::sinks::clock::LogClock;
use crate::report::sinks::dump::DumpWriter;
use crate::report::sinks::error_cap::{Admit, ErrorCap, DEFAULT_ERROR_CAP};
use crate::report::sinks::json::{write_atomic, HostInfo, JsonReport};
use crate::report::sinks::log_entries::LogWriter;

/// Where the evidence goes and how much of it.
#[derive(Debug, Clone)]
pub struct EvidenceOptions {
    /// The XML log (`sqliosim.log.xml`); `None`: no log.
    pub log: Option<PathBuf>,
    /// Directory for page dumps; `None`: no dumps.
    pub dump_dir: Option<PathBuf>,
    /// The JSON summary; `None`: none.
    pub json: Option<PathBuf>,
    /// Errors logged in full before the rest are only counted.
    pub error_cap: u64,
    /// Time zone of the log's TIME and DATE.
    pub clock: LogClock,
    /// Overwrite an existing log that sqliosim did not write (`--force`).
    pub overwrite_foreign: bool,
}

impl Default for EvidenceOptions {
    fn default() -> Self {
        EvidenceOptions {
            log: Some(PathBuf::from("sqliosim.log.xml")),
            dump_dir: Some(PathBuf::from("dumps")),
            json: None,
            error_cap: DEFAULT_ERROR_CAP,
            clock: LogClock::local(),
            overwrite_foreign: false,
        }
    }
}

/// What the run tells the JSON summary about itself.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// The seed of the run.
    pub seed: Option<u64>,
    /// The run id of the file set.
    pub run_id: Option<u64>,
    /// The command line.
    pub command_line: Vec<String>,
    /// The effective configuration.
    pub config: serde_json::Value,
    /// `--host-label`: the host's name in the fleet's inventory, when given.
    pub host_label: Option<String>,
}

impl RunInfo {
    /// What an offline command (verify, restore) tells about the file set of run `run_id`:
    /// no seed, no configuration, its own command line.
    pub fn offline(run_id: Option<u64>) -> RunInfo {
        RunInfo {
            run_id,
            command_line: command_line(),
            ..RunInfo::default()
        }
    }
}

/// This process's command line as the JSON and the log record it: each argument as text, a
/// byte that is not UTF-8 (a directory named in another encoding) shown as U+FFFD. The paths
/// the run opens keep their bytes; this is only what the evidence says.
/// (`std::env::args` panics on such an argument.)
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

struct State {
    log: Option<LogWriter>,
    dumps: Option<DumpWriter>,
    cap: ErrorCap,
    doc: JsonReport,
    json: Option<PathBuf>,
    error: Option<ReportError>,
    /// The run already sent the per-file summary lines as messages.
    summary_logged: bool,
    /// The last periodic rewrite of the JSON summary (on a tick, every [`JSON_EVERY`]).
    last_json: Instant,
    /// The files are in memory (fault injection): no device holds their pages.
    in_memory: bool,
    /// The clocks at the start: the kernel log's window begins there.
    started: crate::report::facts::kmsg::Clocks,
    /// `/dev/kmsg`, positioned at the start: the kernel log's window by sequence.
    kmsg: Option<std::fs::File>,
}

/// How often the JSON summary is rewritten while the run goes on, so a killed run still leaves
/// its findings there.
const JSON_EVERY: Duration = Duration::from_secs(10);

/// The sink that writes the evidence of a run.
pub struct Evidence {
    state: Mutex<State>,
}

impl Evidence {
    /// Opens the log (writing `ErrorLog.xslt` next to it) and writes a first JSON summary.
    pub fn create(opts: EvidenceOptions, run: RunInfo) -> Result<Evidence, ReportError> {
        let log = match &opts.log {
            Some(p) => Some(LogWriter::create(
                p,
                opts.clock,
                run.run_id,
                opts.overwrite_foreign,
            )?),
            None => None,
        };
        let mut doc = JsonReport::new();
        doc.seed = run.seed;
        doc.run_id = run.run_id;
        doc.command_line = run.command_line;
        doc.config_hash = Some(crate::report::sinks::json::config_hash(&run.config));
        doc.config = run.config;
        doc.host = Some(HostInfo {
            label: run.host_label,
            ..HostInfo::capture()
        });
        doc.pid = Some(std::process::id());
        doc.started_us = crate::report::sinks::clock::now_us();
        doc.error_cap = opts.error_cap;
        doc.log = opts.log.clone();
        doc.dump_dir = opts.dump_dir.clone();
        let mut dumps = opts.dump_dir.map(DumpWriter::new);
        if let Some(d) = &mut dumps {
            d.check_existing()?;
        }
        let mut st = State {
            log,
            dumps,
            cap: ErrorCap::new(opts.error_cap),
            doc,
            json: opts.json,
            error: None,
            summary_logged: false,
            last_json: Instant::now(),
            in_memory: false,
            started: crate::report::facts::kmsg::Clocks::now(),
            kmsg: crate::report::facts::kmsg::open_at_end(),
        };
        st.write_json()?;
        Ok(Evidence {
            state: Mutex::new(st),
        })
    }

    /// The JSON summary as it stands (the final one after [`Evidence::finish`]), pretty-printed.
    pub fn summary_json(&self) -> Result<Vec<u8>, ReportError> {
        Ok(serde_json::to_vec_pretty(&self.state.lock().doc)?)
    }

    /// The findings logged in full so far.
    pub fn findings(&self) -> Vec<Finding> {
        self.state.lock().doc.findings.clone()
    }

    /// All findings so far, suppressed ones included.
    pub fn findings_total(&self) -> u64 {
        self.state.lock().doc.findings_total
    }

    /// Keeps the figures of the capacity run beside the simulation (`run --bench`) for the
    /// JSON summary's `bench`, written with the next rewrite (the final one at the latest).
    pub fn bench(&self, figures: crate::report::sinks::bench_figures::BenchFigures) {
        self.state.lock().doc.bench = Some(figures);
    }

    /// Keeps what an offline judgement held the files to and counted, for the JSON summary's
    /// `judgement`, written with the next rewrite (the final one at the latest).
    pub fn judgement(&self, j: crate::report::sinks::judgement::Judgement) {
        self.state.lock().doc.judgement = Some(j);
    }

    /// The directory the run's page dumps went to, as the dump writer opened it (see
    /// [`DumpWriter::opened`]); `None` when no dump was written.
    pub fn dumps_opened(&self) -> Option<crate::io::safefile::Dir> {
        self.state
            .lock()
            .dumps
            .as_ref()
            .and_then(DumpWriter::opened)
    }

    /// The first failure to write evidence, if any.
    pub fn take_error(&self) -> Option<ReportError> {
        self.state.lock().error.take()
    }

    /// Logs the per-file summaries of the [`Event::Summary`] received (unless the run already
    /// sent them as messages) and the suppressed count, closes the log and writes the final
    /// JSON. Returns the first evidence-writing failure of the run, if any.
    pub fn finish(&self) -> Result<(), ReportError> {
        let mut st = self.state.lock();
        if !st.summary_logged {
            st.log_summary_lines();
        }
        st.log_suppressed();
        st.capture_after();
        let signal = st.doc.stop.as_ref().is_some_and(|s| s.reason == "signal");
        st.doc.complete = !signal;
        st.doc.ended_us = Some(crate::report::sinks::clock::now_us());
        st.doc.outcome = if st.doc.findings_total > 0 {
            "findings"
        } else if st.doc.environment_error.is_some() {
            "environment_error"
        } else if signal {
            "interrupted"
        } else {
            "clean"
        }
        .into();
        st.rewrite_json();
        if let Some(log) = &st.log {
            if let Err(e) = log.sync().and_then(|()| log.write_view()) {
                st.keep(e);
            }
        }
        st.error.take().map_or(Ok(()), Err)
    }
}

impl State {
    fn keep(&mut self, e: ReportError) {
        self.error.get_or_insert(e);
    }

    fn write_json(&mut self) -> Result<(), ReportError> {
        let Some(path) = &self.json else {
            return Ok(());
        };
        self.doc.updated_us = crate::report::sinks::clock::now_us();
        self.doc.suppressed = self.cap.suppressed().clone();
        write_atomic(path, &self.doc)
    }

    fn rewrite_json(&mut self) {
        if let Err(e) = self.write_json() {
            self.keep(e);
        }
    }

    /// Logs `m`; a warning is counted whether or not there is a log (the JSON's
    /// `warnings_total`: the WARNING entries of the log).
    fn log_message(&mut self, m: &Message) {
        if m.severity == Severity::Warning {
            self.doc.warnings_total += 1;
            if m.func == super::json::CONFIG_WARNING_FUNC {
                self.doc.config_warnings.push(m.text.clone());
            }
        }
        if let Some(log) = &mut self.log {
            if let Err(e) = log.message(m) {
                self.keep(e);
            }
        }
    }

    fn admit(&mut self, class: &str) -> bool {
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

    fn log_suppressed(&mut self) {
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

    fn finding(&mut self, mut f: Finding) {
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

/// The kernel's view and the drives' health, around the run.
impl State {
    /// The host facts and the drives' health before the run, for the disks under `sys`.
    fn capture_before(&mut self, sys: &crate::events::facts::SystemInfo) {
        let disks = disks_of(sys, false);
        self.doc.host_facts = Some(crate::report::facts::host::capture(&disks));
        let before = crate::report::facts::health::capture("before", &disks);
        self.doc.drive_health.extend(before);
    }

    /// The drives' health after the run and the kernel's messages of its window.
    fn capture_after(&mut self) {
        let Some(sys) = &self.doc.system else {
            return;
        };
        let (disks, devices) = (disks_of(sys, false), disks_of(sys, true));
        let after = crate::report::facts::health::capture("after", &disks);
        self.doc.drive_health.extend(after);
        let log = crate::report::facts::kmsg::capture(self.started, devices, self.kmsg.take());
        self.doc.kernel_log = Some(log);
    }
}

/// The disks under the run's files (with their partitions and devices when `all`), known
/// ones only, each once.
fn disks_of(sys: &crate::events::facts::SystemInfo, all: bool) -> Vec<String> {
    let mut v: Vec<String> = sys
        .files
        .iter()
        .flat_map(|f| {
            let d = &f.device;
            let mut names = vec![d.disk.clone()];
            if all {
                names.push(d.name.clone());
            }
            names
        })
        .filter(|n| !n.is_empty() && n != crate::report::facts::sysinfo::UNKNOWN)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// What the events other than findings do to the evidence.
impl State {
    fn message(&mut self, m: &Message) {
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
    fn facts(&mut self, facts: Facts) {
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
    fn tick(&mut self, t: &crate::events::Tick) {
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
    fn stopped(&mut self, s: Stopped) {
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
    fn log_summary_lines(&mut self) {
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

impl EventSink for Evidence {
    fn emit(&self, event: Event) {
        let mut st = self.state.lock();
        match event {
            Event::Finding(f) => st.finding(*f),
            Event::Message(m) => st.message(&m),
            Event::Facts(f) => st.facts(*f),
            Event::Tick(t) => st.tick(&t),
            Event::Stop(s) => st.stopped(*s),
            Event::Stats(s) => {
                // The first running statistics are written at once: the heartbeat starts with
                // the run, not 10 s into it.
                let first = st.doc.stats.is_none();
                st.doc.stats = Some((*s).clone());
                if first {
                    st.rewrite_json();
                }
            }
            Event::Summary(s) => {
                st.doc.stats = Some(*s);
                st.rewrite_json();
            }
            Event::Phase(_) => {}
        }
    }
}
