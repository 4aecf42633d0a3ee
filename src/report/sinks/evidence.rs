//! The evidence sink: every event of a run goes to the XML log, the page dumps and the JSON
//! summary, under the error cap.
//!
//! It implements [`EventSink`], so workers can emit into it directly from any thread, and it
//! learns everything from the events: findings and messages, the facts of the machine and the
//! I/O, the ticks (its periodic JSON rewrite), the stop and the summary. A failure to write evidence does not stop the run; the first one is
//! kept and handed back by [`Evidence::finish`] (or [`Evidence::take_error`]).

mod events;
mod host;
mod writes;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::sync::Mutex;

use crate::events::{Event, EventSink};
use crate::findings::Finding;
use crate::report::error::ReportError;
use crate::report::sinks::clock::LogClock;
use crate::report::sinks::dump::DumpWriter;
use crate::report::sinks::error_cap::{ErrorCap, DEFAULT_ERROR_CAP};
use crate::report::sinks::json::{HostInfo, JsonReport};
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
