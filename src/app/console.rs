//! Console reporting, as two sinks of the event stream: findings and warnings to stderr as
//! they happen ([`ConsoleSink`]) and the live progress line on a terminal ([`ProgressSink`]);
//! and the end-of-run summary text.

use std::io::Write;

use indicatif::{ProgressBar, ProgressStyle};

use crate::events::{Event, EventSink};
use crate::findings::Severity;
use crate::sim::driver::SimOutcome;

/// Prints findings and warnings to stderr; informational messages stay in the log. Past the
/// error cap findings are only counted (the log says how many), so a dying disk cannot flood
/// the terminal.
#[derive(Debug, Default)]
pub struct ConsoleSink {
    printed: crate::sync::Mutex<u64>,
    /// `verify` has no seed: its findings do not name one.
    no_seed: bool,
    /// The progress line on the same terminal, cleared while a line is printed and drawn
    /// again after it, so no half-drawn spinner line is left above the message.
    progress: Option<std::sync::Arc<ProgressSink>>,
}

impl ConsoleSink {
    /// The console of `verify`, whose findings come from no seeded run.
    pub fn without_seed() -> ConsoleSink {
        ConsoleSink {
            no_seed: true,
            ..ConsoleSink::default()
        }
    }

    /// The console of a run whose progress line is `progress`.
    pub fn beside(progress: std::sync::Arc<ProgressSink>) -> ConsoleSink {
        ConsoleSink {
            progress: Some(progress),
            ..ConsoleSink::default()
        }
    }

    fn print(&self, text: &str) {
        let line = || {
            let _ = writeln!(std::io::stderr(), "{text}");
        };
        match &self.progress {
            Some(p) => p.suspend(line),
            None => line(),
        }
    }
}

impl EventSink for ConsoleSink {
    fn emit(&self, event: Event) {
        let text = match &event {
            Event::Finding(f) => format!(
                "ERROR #{}: {} on {} page {} (offset 0x{:X}), found by {} {}: {}{}{}",
                f.seq,
                f.class.as_str(),
                f.path.display(),
                f.page_id,
                f.offset,
                f.actor.name(),
                f.actor_id,
                f.detail.clone().unwrap_or_else(|| f.verdict.describe()),
                if f.retries.is_empty() {
                    String::new()
                } else if f.persistent {
                    format!("; persistent after {} re-reads", f.retries.len())
                } else {
                    format!(
                        "; transient: re-read {} returned the right page",
                        f.retries.len()
                    )
                },
                if self.no_seed {
                    String::new()
                } else {
                    format!(" [seed {}]", f.seed)
                }
            ),
            Event::Message(m) if m.severity != Severity::Info => {
                format!(
                    "{}: {}",
                    if m.severity == Severity::Error {
                        "ERROR"
                    } else {
                        "WARNING"
                    },
                    m.text
                )
            }
            _ => return,
        };
        let mut printed = self.printed.lock();
        if matches!(event, Event::Finding(_)) {
            *printed += 1;
            if *printed > crate::report::DEFAULT_ERROR_CAP {
                if *printed == crate::report::DEFAULT_ERROR_CAP + 1 {
                    self.print(&format!("ERROR: more than {} integrity errors: further ones are counted, not printed (see the error log)", crate::report::DEFAULT_ERROR_CAP));
                }
                return;
            }
        }
        self.print(&text);
    }
}

/// The live progress line: a spinner on stdout showing each [`Event::Tick`]'s line (phase,
/// cycle, rates), only when stdout is a terminal. It shows nothing until
/// [`ProgressSink::start`] (the run header is printed first) and is cleared by
/// [`ProgressSink::finish`]; the console's messages are printed around it
/// ([`ProgressSink::suspend`]), so neither leaves a broken line behind.
#[derive(Debug, Default)]
pub struct ProgressSink {
    bar: crate::sync::Mutex<Option<ProgressBar>>,
    /// The run's p99 so far (ms), from the last running statistics with I/O in them.
    p99: crate::sync::Mutex<Option<f64>>,
}

impl ProgressSink {
    /// Starts the spinner, when stdout is a terminal.
    pub fn start(&self) {
        use std::io::IsTerminal;
        if !std::io::stdout().is_terminal() {
            return;
        }
        // Drawn on stdout, the stream whose terminal was checked (indicatif's default is stderr,
        // which may be a file).
        let bar = ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stdout());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        *self.bar.lock() = Some(bar);
    }

    /// Runs `f` (which prints a line) with the progress line cleared, then draws it again.
    pub fn suspend(&self, f: impl FnOnce()) {
        match &*self.bar.lock() {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Clears the line for good.
    pub fn finish(&self) {
        if let Some(b) = self.bar.lock().take() {
            b.finish_and_clear();
        }
    }
}

impl EventSink for ProgressSink {
    fn emit(&self, event: Event) {
        let run_p99 = crate::report::sinks::status::run_p99_ms;
        match event {
            Event::Tick(t) => {
                if let Some(b) = &*self.bar.lock() {
                    let p99 = *self.p99.lock();
                    b.set_message(crate::report::sinks::progress::tick_line(&t, p99));
                }
            }
            Event::Stats(s) if run_p99(&s).is_some() => *self.p99.lock() = run_p99(&s),
            _ => {}
        }
    }
}

/// The journal's size and compactions, or that the durability check is void. When the run
/// stopped because a device went away and the journal's went with it, that was said already
/// (the error above, the journal's warning): the void check is named once more, briefly.
fn journal_line(j: &crate::sim::engine::journal::JournalSummary, device_gone: bool) -> String {
    let mut s = format!(
        "  Journal {}: {:.1} KB (at most {:.1} KB), {} batch(es) every {} ms at most, {} compaction(s) in {:.1} ms\n",
        j.path,
        j.bytes as f64 / 1024.0,
        j.max_bytes as f64 / 1024.0,
        j.batches,
        j.batch_interval_ms,
        j.compactions,
        j.compaction_ms
    );
    if let Some(w) = &j.witness {
        s.push_str(&format!(
            "  Witness {}: {} batch(es) sent, {} acknowledged{}, lag at most {} ms, {} gap(s), {} reconnect(s){}\n",
            w.addr,
            w.batches,
            w.acked,
            if w.unacked > 0 {
                format!(", {} NOT acknowledged", w.unacked)
            } else {
                String::new()
            },
            w.max_lag_ms,
            w.gaps,
            w.reconnects,
            w.error.as_deref().map(|e| format!(" (last error: {e})")).unwrap_or_default()
        ));
    }
    match &j.void {
        Some(why) if device_gone && why.contains(crate::sim::engine::journal::service::GONE) => {
            s.push_str("Durability check VOID from when the device went away (the journal went with it, see above).\n");
        }
        Some(why) => s.push_str(&format!("Durability check VOID: {why}\n")),
        None => {}
    }
    s
}

/// The end-of-run summary printed on stdout.
pub fn summary_text(o: &SimOutcome, seed: u64) -> String {
    let mut s = String::new();
    let t = &o.summary.total;
    s.push_str(&format!(
        "\nRun finished after {:.1} s ({} cycle(s)), seed {seed}: {} read(s), {} write(s), {:.0} IOPS, {:.1} MB/s\n",
        o.summary.elapsed_s,
        o.cycles,
        t.reads + t.scatter_reads,
        t.writes + t.gather_writes,
        t.iops,
        t.mb_per_s,
    ));
    for f in &o.summary.files {
        s.push_str(&format!(
            "  {}: {} reads, {} writes, {:.0} IOPS, {:.1} MB/s, latency p50 {:.0} us p99 {:.0} us max {:.0} us, throttled {}\n",
            f.path,
            f.io.reads + f.io.scatter_reads,
            f.io.writes + f.io.gather_writes,
            f.io.iops,
            f.io.mb_per_s,
            f.io.latency.p50_us,
            f.io.latency.p99_us,
            f.io.latency.max_us,
            f.throttled
        ));
    }
    if let Some(x) = &o.summary.other {
        s.push_str(&format!(
            "  {}: {} reads, {} writes, {:.0} IOPS, {:.1} MB/s, latency p50 {:.0} us p99 {:.0} us max {:.0} us\n",
            crate::stats::OTHER_FILES,
            x.reads + x.scatter_reads,
            x.writes + x.gather_writes,
            x.iops,
            x.mb_per_s,
            x.latency.p50_us,
            x.latency.p99_us,
            x.latency.max_us,
        ));
    }
    if o.no_space > 0 {
        s.push_str(&format!(
            "Out of space: {} request(s) failed for lack of space (see the warnings); a condition, not corruption.\n",
            o.no_space
        ));
    }
    if let Some(env) = &o.environment {
        s.push_str(&format!(
            "Stopped early: {}\n",
            if env.internal {
                "a request only a sqliosim bug can make failed (see the error above)"
            } else {
                "an environment error, not an integrity finding (see the error above)"
            }
        ));
    }
    if let Some(j) = &o.summary.journal {
        let gone = o.environment.as_ref().is_some_and(|e| !e.internal);
        s.push_str(&journal_line(j, gone));
    }
    s.push_str(&super::stopped::verdict(o));
    s
}
