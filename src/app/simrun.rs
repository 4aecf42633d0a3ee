//! `sqliosim run` after the configuration is resolved: choose the storage backend and the
//! I/O service (or none) that carries its I/O, fan the events out to the outputs (console,
//! evidence, progress line: each a sink), simulate, and map the outcome.

use std::path::PathBuf;
use std::sync::Arc;

use super::console::{summary_text, ConsoleSink, ProgressSink};
use super::run_backend::{choose_backend, Chosen};
use super::run_outputs::{json_to_stdout, live_outputs, open_evidence, warn_failed, write_bundle};
use crate::config::RunSettings;
use crate::events::{Event, EventSink, Facts, Fanout, FileUnit, Stopped};
use crate::exit::{Internal, Outcome};
use crate::findings::{Message, Severity};
use crate::io::Backend;
use crate::report::{Evidence, IoServiceInfo};
use crate::sim::plan::from_settings::plan_from;
use crate::sim::plan::SimPlan;

/// Runs the simulation for resolved settings; `adjusted` are the configuration's warnings (keys
/// lowered, split, mapped or ignored), said on stderr already and kept in the log and JSON.
pub fn run(settings: &RunSettings, adjusted: &[String]) -> anyhow::Result<Outcome> {
    let mut plan = plan_from(settings);
    refuse_non_utf8(&plan, settings)?;
    // A resume judges the set before it refuses a file that is not a regular file, unless the
    // run would create a file among the device nodes (a lock file) first.
    let nodes = super::targets::refuse_nodes(&plan);
    if let Err(e) = super::targets::refuse_created_in_dev(&plan, settings) {
        return Err(nodes.err().unwrap_or(e));
    }
    let nodes = match nodes {
        Err(e) if !plan.resume => return Err(e),
        nodes => nodes,
    };
    let placement = super::dirs::placement_warnings(&plan.dirs());
    make_dirs(&plan, settings)?;
    // Before anything of the set is deleted, created or opened: one run per file set.
    let mut taken = super::lock::lock_set(&file_paths(&plan), true, "run")?;
    let Chosen {
        backend,
        faulty,
        io_service,
    } = choose_backend(settings, &plan)?;
    // A resume judges the set first, as `verify` does, and refuses before anything moves.
    let mut afresh = false;
    if plan.resume {
        let dead_lock = !taken.taken_over.is_empty();
        match super::resume_first::first(&plan, settings, backend.as_ref(), dead_lock) {
            Ok(super::resume_first::First::Afresh(note)) => {
                crate::exit::errln!("{note}");
                plan.resume = false;
                afresh = true;
            }
            Ok(super::resume_first::First::Judged(found)) => plan.judged = Some(found),
            Ok(super::resume_first::First::Lost { findings, why }) => {
                // The lock records stay as found: the next attempt is refused the same way.
                taken.lock.put_back_left();
                return lost_set(&findings, &why);
            }
            Err(e) => {
                taken.lock.put_back_left();
                return Err(e);
            }
        }
    }
    // Before the guard moves a killed run's evidence aside: a refused run has moved nothing,
    // and a resume that found losses reports them (exit 1) rather than hiding them behind the
    // refusal.
    if let Err(e) = nodes.and_then(|()| refuse_planted(&plan, settings)) {
        taken.lock.put_back_left();
        return match plan.judged.as_deref() {
            Some(found) if !found.is_empty() => lost_set(found, &format!("{e:#}")),
            _ => Err(e),
        };
    }
    let guarded =
        super::previous::guard(settings, &plan, backend.as_ref(), &taken.taken_over, afresh);
    let carried = match guarded {
        Ok(carried) => carried,
        Err(e) => {
            // Leave the crashed run's lock records as found, so that the next attempt is
            // refused too.
            taken.lock.put_back_left();
            return Err(e);
        }
    };
    // What an attempt of this run found before it was stopped stays this run's finding: the
    // resume reports it with what it judged itself (once: a loss judged again is not doubled).
    if let Some(judged) = plan.judged.as_mut() {
        for f in carried {
            let again = judged
                .iter()
                .any(|g| g.path == f.path && g.page_id == f.page_id && g.class == f.class);
            if !again {
                judged.push(f);
            }
        }
    }
    for note in &taken.taken_over {
        crate::exit::errln!("sqliosim: note: {note}");
    }
    let _lock = taken.lock;
    let run_id = run_id_of(&plan, backend.as_ref());
    plan.run_id = Some(run_id);
    crate::exit::unless_closed(crate::exit::outln!(
        "I/O engine = {}",
        io_service.describe()
    ))?;
    // From the JSON's first "running" heartbeat on, SIGINT and SIGTERM are caught: one during
    // the header (a pod deleted as it starts) ends the run with its summary as the simulation
    // starts, instead of killing it with the JSON left "running". Not before: a Ctrl-C during
    // a resume's judging of a large set or the engine probe still ends the process at once.
    let signals = crate::sim::driver::Signals::catch();
    let evidence = Arc::new(open_evidence(settings, run_id)?);
    // Every output is a sink of the one event stream (ARCHITECTURE.md, "Adding things").
    let progress = Arc::new(ProgressSink::default());
    let mut sinks: Vec<Arc<dyn EventSink>> = vec![
        Arc::new(ConsoleSink::beside(progress.clone())),
        evidence.clone(),
        progress.clone(),
    ];
    let live = live_outputs(settings);
    sinks.extend(live.iter().map(|o| o.sink.clone()));
    let sink: Arc<dyn EventSink> = Arc::new(Fanout::new(sinks));
    let warnings = placement
        .into_iter()
        .chain(exposure_lines(settings))
        .chain(cpu_lines(settings));
    let said = Said {
        evidence: &evidence,
        sink: sink.as_ref(),
    };
    for text in adjusted {
        let m = Message::new(Severity::Warning, "System", ADJUSTED_FUNC, text.as_str());
        evidence.emit(Event::Message(m));
    }
    header(
        &warnings.collect::<Vec<_>>(),
        &plan,
        (backend.as_ref(), faulty.is_some()),
        io_service,
        &said,
    )?;
    for line in settings.echo().lines() {
        let m = Message::new(Severity::Info, "System", "Config::Echo", line);
        sink.emit(Event::Message(m));
    }
    progress.start();
    let seed = plan.seed;
    let beside = settings
        .bench
        .as_deref()
        .map(super::run_bench::start)
        .transpose()?;
    let result = crate::sim::driver::simulate_caught(plan, backend.as_ref(), sink.clone(), signals);
    progress.finish();
    if let Some(n) = faulty.map(|f| f.armed()).filter(|&n| n > 0) {
        crate::exit::errln!("sqliosim: warning: {n} injected fault(s) never fired: no request of their kind reached their page after they were armed (a request meets at most one armed fault)");
    }
    let outcome = result?;
    // The bench's figures belong to the run's evidence: wait for it before the final JSON.
    let bench = beside.map(super::run_bench::Beside::wait).transpose()?;
    if let Some(b) = &bench {
        evidence.bench(b.figures.clone());
    }
    // A failure to write evidence must not hide the verdict: findings still exit 1.
    sink.emit(Event::Stop(Box::new(Stopped {
        info: super::stopped::stop_info(&outcome),
        environment_error: outcome.environment.as_ref().map(|e| e.text.clone()),
        text: super::stopped::log_text(&outcome),
    })));
    let mut evidence_error = evidence.finish().err();
    if settings.json_stdout {
        evidence_error = evidence_error.or_else(|| json_to_stdout(&evidence).err());
    }
    warn_failed(&live);
    if let Some(e) = &evidence_error {
        crate::exit::errln!("sqliosim: warning: writing the evidence failed: {e}");
    }
    if let Some(out) = &settings.bundle {
        write_bundle(settings, &evidence, out)?;
    }
    let printed = print_end(settings, &outcome, seed);
    let bench = bench.map(super::run_bench::Ended::finish).transpose()?;
    // stdout failing at the end (a closed pipe, a full disk) never hides the verdict.
    crate::exit::after_printing(printed, verdict(&outcome, bench, evidence_error))
}

/// The end-of-run summary and where the evidence went, on stdout.
fn print_end(
    settings: &RunSettings,
    outcome: &crate::sim::driver::SimOutcome,
    seed: u64,
) -> Result<(), crate::exit::StdoutError> {
    crate::exit::out!("{}", summary_text(outcome, seed))?;
    crate::exit::outln!("Error log: {}", settings.error_log.display())?;
    let view = crate::report::views::log_view::beside_log(&settings.error_log);
    if view.is_file() {
        crate::exit::outln!("Log view: {} (opens in a browser)", view.display())?;
    }
    if let Some(json) = &settings.json {
        crate::exit::outln!("JSON summary: {}", json.display())?;
    }
    if let Some(out) = &settings.bundle {
        crate::exit::outln!("Evidence bundle: {}", out.display())?;
    }
    if let Some(json) = &settings.json {
        crate::exit::outln!(
            "Charts and findings in one page: sqliosim report {} --html sqliosim-report.html",
            shell_word(&json.display().to_string())
        )?;
    }
    Ok(())
}

/// `word` as a shell reads it back: as is when it holds only characters no shell treats
/// specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The exit status of a finished run.
fn verdict(
    outcome: &crate::sim::driver::SimOutcome,
    bench: Option<Outcome>,
    evidence_error: Option<impl std::fmt::Display>,
) -> anyhow::Result<Outcome> {
    if outcome.worker_panicked {
        return Err(Internal("a worker thread panicked; the results are incomplete".into()).into());
    }
    // Errors met while working set the exit status at the end: a tool bug (3) before
    // integrity findings (1), which come before an environment error (2).
    if let Some(env) = outcome.environment.as_ref().filter(|e| e.internal) {
        return Err(Internal(env.text.clone()).into());
    }
    if outcome.findings > 0 || bench == Some(Outcome::Findings) {
        return Ok(Outcome::Findings);
    }
    if let Some(env) = &outcome.environment {
        return Err(anyhow::anyhow!("{}", env.text));
    }
    match evidence_error {
        Some(e) => Err(anyhow::anyhow!("writing the evidence failed: {e}")),
        None => Ok(super::stopped::clean_or_interrupted(outcome)),
    }
}

/// Where the header's lines go: the evidence alone (what the console has printed) or every sink.
struct Said<'a> {
    evidence: &'a Evidence,
    sink: &'a dyn EventSink,
}

/// The `Func` of the configuration's warnings in the log (the JSON's `config_warnings`).
pub const ADJUSTED_FUNC: &str = crate::report::sinks::json::CONFIG_WARNING_FUNC;

/// The run header: what carries the I/O, the warnings (a directory created or on the root
/// filesystem, one another user can change) and each file's direct-I/O unit on stdout, then
/// the facts (I/O service, units, system) as events. The warnings go to the log as well.
fn header(
    warnings: &[String],
    plan: &SimPlan,
    (backend, in_memory): (&dyn Backend, bool),
    io_service: IoServiceInfo,
    said: &Said,
) -> anyhow::Result<()> {
    let (evidence, sink) = (said.evidence, said.sink);
    sink.emit(Event::Facts(Box::new(Facts::IoService(io_service))));
    for line in warnings {
        crate::exit::unless_closed(crate::exit::outln!("{line}"))?;
        let m = Message::new(Severity::Warning, "System", "Dir::Exposure", line.as_str());
        evidence.emit(Event::Message(m));
    }
    for f in &plan.files {
        let unit = FileUnit {
            path: f.path.clone(),
            role: f.role,
            info: backend.direct_io_info(&f.path),
            direct: plan.direct,
            force_4k_log: plan.force_4k_log_io,
        };
        crate::exit::unless_closed(crate::exit::outln!(
            "{}",
            crate::report::facts::io_service::unit_line(&unit)
        ))?;
        sink.emit(Event::Facts(Box::new(Facts::Unit(unit))));
    }
    let system = crate::report::facts::sysinfo::capture(&file_paths(plan));
    let durability = if in_memory {
        // The files live in the faulty backend: no disk is under them, whatever is mounted
        // under their names' directory.
        let none = "Device: none: with --fault-injection the files live in memory (the injected faults play the device; no disk is written)";
        crate::exit::unless_closed(crate::exit::outln!("{none}"))?;
        let how = crate::report::facts::sysinfo::durability_how(
            plan.write_through,
            plan.durability,
            plan.flush_per_write,
        );
        format!("Durability: {how}; as the in-memory device models it (no disk: FUA and write cache do not apply)")
    } else {
        for line in crate::report::facts::sysinfo::console_lines(&system) {
            crate::exit::unless_closed(crate::exit::outln!("{line}"))?;
        }
        crate::report::facts::sysinfo::durability_line(
            plan.write_through,
            plan.durability,
            plan.flush_per_write,
            &system,
        )
    };
    crate::exit::unless_closed(crate::exit::outln!("{durability}"))?;
    let m = Message::new(Severity::Info, "System", "Durability", durability.as_str());
    evidence.emit(Event::Message(m));
    sink.emit(Event::Facts(Box::new(Facts::System(system))));
    Ok(())
}

/// The files of the plan, to lock (exit 2 naming the holder when another process has one).
fn file_paths(plan: &SimPlan) -> Vec<PathBuf> {
    plan.files.iter().map(|f| f.path.clone()).collect()
}

/// The run id of this run: a resumed file set's own (its first data file's header), else a new
/// one, drawn now so that the evidence (dumps, log, JSON) carries it from the start.
fn run_id_of(plan: &SimPlan, backend: &dyn Backend) -> u64 {
    let resumed = plan
        .resume
        .then(|| plan.data_files().first().copied())
        .flatten()
        .and_then(|i| {
            crate::sim::engine::files::check_ownership(backend, &plan.files[i].path, false).ok()?
        })
        .map(|h| h.run_id);
    resumed.unwrap_or_else(|| rand::random::<u64>() | 1)
}

/// Refuses, before the run starts or moves anything, a planted name under a file the run
/// replaces or writes later: the journal (whose creation failing would only void the
/// durability check, with a warning) and its compaction temporary, the XML log, the names
/// beside it and the JSON summary, the backup streams (a FIFO
/// or a directory where a killed run's stream was: setup would stop at it only once the
/// evidence was moved aside and a new summary begun), the `--bundle` archive written at the
/// end and the `--metrics-textfile`.
fn refuse_planted(plan: &SimPlan, settings: &RunSettings) -> anyhow::Result<()> {
    use crate::io::safefile::check_replaceable;
    use crate::sim::engine::manifest::Rule;
    // The manifest's names replaced by a rename or written as streams (a run with injected
    // faults keeps its journal and streams in memory).
    let manifest = crate::sim::driver::manifest(plan);
    let replaced = manifest.entries.iter().filter(|e| {
        matches!(e.rule, Rule::Replace | Rule::Stream { .. }) && settings.fault_injection.is_none()
    });
    for e in replaced {
        check_replaceable(&e.path)?;
    }
    for out in settings.bundle.iter().chain(&settings.metrics_textfile) {
        check_replaceable(out)?;
    }
    // The XML log, its stylesheet and HTML view, and the JSON summary: checked again where
    // they are opened, but a planted name there must stop a resume before the guard moves the
    // killed run's log and summary aside.
    let log = &settings.error_log;
    let beside_log = [
        log.clone(),
        log.with_file_name(crate::report::sinks::xml::XSLT_NAME),
        crate::report::views::log_view::beside_log(log),
    ];
    for out in beside_log.iter().chain(&settings.json) {
        check_replaceable(out)?;
    }
    Ok(())
}

/// Refuses (exit 2, before anything is created) a run whose files or evidence would have a path
/// that is not UTF-8 (a directory named in Latin-1, say): the XML log, the JSON summary and the
/// reports record every path as text, and a name they cannot write would leave the run's
/// evidence half written. The path is shown with its odd bytes escaped.
fn refuse_non_utf8(plan: &SimPlan, settings: &RunSettings) -> anyhow::Result<()> {
    let manifest = crate::sim::driver::manifest(plan);
    let outputs = [
        Some(&settings.error_log),
        settings.json.as_ref(),
        settings.bundle.as_ref(),
        settings.metrics_textfile.as_ref(),
        settings.save.as_ref(),
        settings.journal_dir.as_ref(),
    ];
    let paths = manifest
        .entries
        .iter()
        .map(|e| &e.path)
        .chain(outputs.into_iter().flatten());
    for p in paths {
        if p.to_str().is_none() {
            anyhow::bail!(
                "{}: the path is not UTF-8 text; sqliosim's XML log and JSON summary record every path as text, so the files of a run must have UTF-8 names (rename the directory, or name another with --dir)",
                p.as_os_str().as_encoded_bytes().escape_ascii()
            );
        }
    }
    Ok(())
}

/// The run header's warnings about directories another user could change: `--dir` (or the
/// data directory) a symlink, or in a directory another user can write (docs/security.md).
fn exposure_lines(settings: &RunSettings) -> Vec<String> {
    let mut dirs = vec![settings.data_dir.clone()];
    dirs.extend(settings.journal_dir.clone());
    dirs.dedup();
    dirs.iter()
        .flat_map(|d| crate::io::safefile::exposure(d))
        .map(|why| format!("Warning: {why}: another user can change what this run works on"))
        .collect()
}

/// The run header's warnings about the CPU keys: an Affinity or IOAffinity mask naming no CPU
/// this process may use, and each CPU key written but not simulated (never accepted silently).
fn cpu_lines(settings: &RunSettings) -> Vec<String> {
    let g = &settings.config.general;
    let masks = [("Affinity", g.affinity), ("IOAffinity", g.io_affinity)];
    masks
        .into_iter()
        .filter_map(|(k, m)| crate::sim::control::affinity::unusable_warning(k, m))
        .chain(crate::config::unsupported_cpu_keys(&settings.config))
        .map(|w| format!("Warning: {w}"))
        .collect()
}

fn make_dirs(plan: &crate::sim::plan::SimPlan, settings: &RunSettings) -> anyhow::Result<()> {
    let dirs = plan
        .files
        .iter()
        .filter_map(|f| f.path.parent())
        .chain(settings.error_log.parent())
        .chain(settings.journal_dir.as_deref());
    for dir in dirs {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create the directory {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// A resume over a set whose files are lost: the findings as `verify` prints them, why nothing
/// is carried on, the verdict (exit 1). Nothing of the set was moved or created.
fn lost_set(findings: &[crate::findings::Finding], why: &str) -> anyhow::Result<Outcome> {
    let console = ConsoleSink::without_seed();
    for (i, f) in findings.iter().enumerate() {
        let mut f = f.clone();
        f.seq = i as u64 + 1;
        console.emit(Event::Finding(Box::new(f)));
    }
    crate::exit::errln!(
        "sqliosim: nothing carried on ({why}): the journal owes what is listed above, so the set and its journal are kept as evidence. `sqliosim verify` reports the same (with --log FILE, to an XML log); --discard-previous-run starts afresh, keeping the journal and log under the old run id"
    );
    let printed = crate::exit::outln!("Verdict: {} INTEGRITY ERROR(S) found.", findings.len());
    crate::exit::after_printing(printed, Ok(Outcome::Findings))
}
