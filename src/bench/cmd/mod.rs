//! `sqliosim bench`: parses the command line, runs every combination of the matrix (and
//! every pass), prints the reports, and keeps the JSON, CSV and HTML files up to date.

pub mod args;
pub mod plan;
mod settled;

use crate::bench::error::BenchError;
use crate::bench::out::{export, html, text};
use crate::bench::run::{self, RunResult};
use crate::bench::summary::BenchSummary;
use crate::bench::sweep::{self, CellResult};
use crate::bench::{signals, sqlio};
use crate::exit::Outcome;
use args::BenchArgs;
use clap::Parser;
use plan::Plan;
use settled::Settled;
use std::ffi::OsString;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Parses `args` with clap; `Ok(None)` when help or version was printed.
pub fn parse<T: Parser>(args: &[OsString], out: &mut dyn Write) -> Result<Option<T>, BenchError> {
    match T::try_parse_from(args) {
        Ok(a) => Ok(Some(a)),
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            // A closed pipe (`| head`) is not an error for help text.
            let _ = write!(out, "{}", e.render());
            Ok(None)
        }
        Err(e) => Err(BenchError::Usage(
            e.render().to_string().trim_end().to_string(),
        )),
    }
}

/// Runs `sqliosim bench` with `args`, writing the console report to `out`.
pub fn run_with(args: &[OsString], out: &mut dyn Write) -> Result<Outcome, BenchError> {
    let Some(a) = parse::<BenchArgs>(args, out)? else {
        return Ok(Outcome::Clean);
    };
    run_parsed(&a, out)
}

/// Runs `sqliosim bench` with parsed options, writing the console report to `out`.
pub fn run_parsed(a: &BenchArgs, out: &mut dyn Write) -> Result<Outcome, BenchError> {
    run_parsed_document(a, out).map(|(outcome, _)| outcome)
}

/// Runs `sqliosim bench` with `args` like [`run_with`], and also returns the JSON document
/// `--json` would write (tool, combinations, saturation): what `run --bench` puts in the run's
/// JSON summary. `None` when help or version was printed.
pub fn run_with_document(
    args: &[OsString],
    out: &mut dyn Write,
) -> Result<(Outcome, Option<serde_json::Value>), BenchError> {
    let Some(a) = parse::<BenchArgs>(args, out)? else {
        return Ok((Outcome::Clean, None));
    };
    let (outcome, doc) = run_parsed_document(&a, out)?;
    Ok((outcome, Some(doc)))
}

fn run_parsed_document(
    a: &BenchArgs,
    out: &mut dyn Write,
) -> Result<(Outcome, serde_json::Value), BenchError> {
    let plan = plan::plan(a)?;
    // A planted name under an output is refused before the measurement, not after it.
    for p in [&a.json, &a.csv, &a.html].into_iter().flatten() {
        crate::io::safefile::check_replaceable(p)?;
    }
    let stop = signals::stop_flag();
    execute(&plan, a, &stop, out)
}

fn execute(
    plan: &Plan,
    a: &BenchArgs,
    stop: &AtomicBool,
    out: &mut dyn Write,
) -> Result<(Outcome, serde_json::Value), BenchError> {
    let sweep = plan.cells.len() > 1;
    let mut done: Vec<CellResult> = Vec::new();
    let mut interrupted = false;
    let mut warned: Option<Vec<String>> = None;
    // The engine the first run at each kind of queue settled (and why), kept for every later
    // run at that kind: one request per thread and deeper queues are decided apart.
    let mut settled = Settled::default();
    for cell in &plan.cells {
        let mut job = cell.apply(&plan.base);
        settled.apply(&mut job);
        let mut runs: Vec<RunResult> = Vec::new();
        for _ in 0..plan.repeat {
            let r = run::run(&job, stop)?;
            settled.keep(&r.job);
            settled.apply(&mut job);
            interrupted |= r.interrupted;
            if !sweep {
                writeln!(out, "{}", text::run_report(&BenchSummary::of(&r)))?;
                if a.sqlio_output {
                    writeln!(out, "{}", sqlio::output::block_for_run(&r))?;
                }
            }
            runs.push(r);
            if interrupted {
                break;
            }
        }
        let c = CellResult::of(*cell, &runs);
        if sweep {
            sweep_row(out, &c, &runs, &mut warned)?;
        }
        done.push(c);
        write_files(a, &done, interrupted)?;
        if interrupted || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let outcome = finish(&done, plan, interrupted, out)?;
    let sat = sweep::saturation(&done);
    Ok((outcome, export::document(&done, &sat, interrupted)))
}

/// One row of a sweep's live table. The warnings of its runs that were not shown yet come
/// first (a file smaller than RAM, as a single run says), then the engine the row runs on and
/// why when no row before said it (queue depth 1 and deeper queues may differ), and before
/// the first row the column header (`warned` is `None` until then).
fn sweep_row(
    out: &mut dyn Write,
    c: &CellResult,
    runs: &[RunResult],
    warned: &mut Option<Vec<String>>,
) -> Result<(), BenchError> {
    let first = warned.is_none();
    let shown = warned.get_or_insert_with(Vec::new);
    for w in runs.iter().flat_map(|r| &r.warnings) {
        if !shown.contains(w) {
            writeln!(out, "warning: {w}")?;
            shown.push(w.clone());
        }
    }
    let engine = runs.first().and_then(|r| {
        let why = r.job.engine_why.as_deref().unwrap_or_default();
        (!why.is_empty()).then(|| format!("engine {}: {why}", r.ring_kind.name()))
    });
    if let Some(e) = engine.filter(|e| !shown.contains(e)) {
        writeln!(out, "{e}")?;
        shown.push(e);
    }
    let table = text::sweep_table(std::slice::from_ref(c));
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    if first {
        writeln!(out, "{header}")?;
    }
    if let Some(row) = lines.next() {
        writeln!(out, "{row}")?;
    }
    out.flush()?;
    Ok(())
}

fn finish(
    done: &[CellResult],
    plan: &Plan,
    interrupted: bool,
    out: &mut dyn Write,
) -> Result<Outcome, BenchError> {
    if plan.cells.len() > 1 || plan.repeat > 1 {
        writeln!(out, "\n{}", text::sweep_table(done))?;
        writeln!(out, "{}", text::saturation_report(&sweep::saturation(done)))?;
    }
    if interrupted {
        writeln!(
            out,
            "interrupted: {} of {} combination(s) measured",
            done.len(),
            plan.cells.len()
        )?;
    }
    let bad = done.iter().any(|c| c.errors > 0 || c.verify_failures > 0);
    // A sweep's table has no error column: a combination with failures is named, so that exit
    // 1 never comes without its reason (each run's own report says the first of them).
    if plan.cells.len() > 1 || plan.repeat > 1 {
        for c in done
            .iter()
            .filter(|c| c.errors > 0 || c.verify_failures > 0)
        {
            writeln!(
                out,
                "FAILED: {} B {:?} {}, {} thread(s) x {}: {} failed I/O(s), {} read(s) that did not match their stamp",
                c.cell.block_size,
                c.cell.pattern,
                c.rw_name(),
                c.cell.threads,
                c.cell.outstanding,
                c.errors,
                c.verify_failures
            )?;
        }
    }
    Ok(if bad {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// Writes the requested outputs, each through a temporary renamed over it (the files are
/// rewritten after every cell, so a stopped sweep still leaves valid ones).
fn write_files(a: &BenchArgs, done: &[CellResult], interrupted: bool) -> Result<(), BenchError> {
    let write = |p: &std::path::Path, bytes: &[u8]| {
        crate::io::safefile::replace(p, bytes).map_err(|source| BenchError::Writing {
            path: p.to_path_buf(),
            source,
        })
    };
    let sat = sweep::saturation(done);
    if let Some(p) = &a.json {
        write(p, export::json(done, &sat, interrupted).as_bytes())?;
    }
    if let Some(p) = &a.csv {
        write(p, export::csv(done).as_bytes())?;
    }
    if let Some(p) = &a.html {
        let page = html::page(done, &sat, &text::sweep_table(done)).map_err(|cause| {
            BenchError::Drawing {
                path: p.clone(),
                cause,
            }
        })?;
        write(p, page.as_bytes())?;
    }
    Ok(())
}
