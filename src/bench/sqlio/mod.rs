//! `sqliosim sqlio`: runs a capacity job from SQLIO v1.5 switches and prints SQLIO's output
//! block, so scripts and parsers written for SQLIO work unchanged. Our own warnings (direct
//! I/O not honoured, file smaller than RAM) go to stderr to keep the block intact.

pub mod args;
pub mod output;

use crate::bench::error::BenchError;
use crate::bench::job::{DataMode, Job, Pattern, TestFile};
use crate::bench::{front, run, signals, target};
use crate::exit::Outcome;
use std::ffi::OsString;
use std::io::Write;

/// `sqliosim sqlio ARGS…`; `args[0]` is the display name ("sqliosim sqlio").
pub fn main(args: Vec<OsString>) -> Result<Outcome, BenchError> {
    run_with(
        &args,
        &mut crate::exit::Stdout,
        &mut std::io::stderr().lock(),
    )
}

/// The file size to use: the parameter file's, else the existing file's, else 1 GiB.
fn size_of(f: &args::SqlioFile) -> (u64, bool) {
    if let Some(mb) = f.size_mb {
        return (mb << 20, true);
    }
    if target::is_block_device(&f.path) {
        return (target::default_size(&f.path), false);
    }
    match std::fs::metadata(&f.path) {
        Ok(m) if m.len() > target::DATA_OFFSET => (m.len(), false),
        _ => (1 << 30, false),
    }
}

/// Builds the job and the header lines from parsed switches.
pub fn job_of(a: &args::SqlioArgs) -> Result<(Job, output::Header), BenchError> {
    let threads = a.files.first().and_then(|f| f.threads).unwrap_or(a.threads);
    if a.files
        .iter()
        .any(|f| f.threads.unwrap_or(a.threads) != threads)
    {
        return Err(BenchError::Usage(
            "-F: every file in the parameter file must use the same thread count here".into(),
        ));
    }
    let ring_kind = front::ring_kind_of(&a.engine)?;
    let sizes: Vec<(u64, bool)> = a.files.iter().map(size_of).collect();
    let job = Job {
        targets: a
            .files
            .iter()
            .zip(&sizes)
            .map(|(f, s)| TestFile {
                path: f.path.clone(),
                size: s.0,
            })
            .collect(),
        threads_per_target: threads,
        depth: a.outstanding,
        block_size: a.block_kb * 1024,
        read_pct: if a.write { 0 } else { 100 },
        pattern: if a.sequential {
            Pattern::Sequential
        } else {
            Pattern::Random
        },
        warmup_s: 0.0,
        duration_s: a.secs as f64,
        direct: matches!(a.buffering, 'N' | 'H'),
        write_through: matches!(a.buffering, 'N' | 'S'),
        data: DataMode::Random,
        ring_kind,
        force: a.force,
        ..Job::with_defaults(Default::default(), 0)
    };
    let header = output::Header {
        param_file: a.param_file.clone(),
        files: a
            .files
            .iter()
            .zip(&sizes)
            .map(|(f, s)| (f.shown.clone(), threads, s.0 >> 20, s.1))
            .collect(),
        write: a.write,
        secs: a.secs,
        block_kb: a.block_kb,
        sequential: a.sequential,
        outstanding: a.outstanding_given.then_some(a.outstanding),
        buffering: a.buffering_given.then_some(a.buffering),
        latency: a.latency,
    };
    Ok((job, header))
}

/// Runs `sqliosim sqlio` with `args`, the block to `out`, notes to `err`.
pub fn run_with(
    args: &[OsString],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, BenchError> {
    let strings = front::arg_strings(args)?;
    if strings
        .iter()
        .any(|s| s == "-?" || s == "--help" || s == "-h")
    {
        let _ = write!(out, "{}", usage());
        return Ok(Outcome::Clean);
    }
    let a = args::parse(&strings).map_err(BenchError::Usage)?;
    front::note_ignored(err, "sqlio", &a.ignored)?;
    let (job, header) = job_of(&a)?;
    let stop = signals::stop_flag();
    let r = run::run(&job, &stop)?;
    write!(
        out,
        "{}",
        output::render(&header, &output::figures(&r.total, r.measured_s))
    )?;
    front::warn_all(err, "sqlio", &r.warnings)?;
    if let Some(e) = &r.total.first_error {
        writeln!(
            err,
            "sqliosim sqlio: {} I/O error(s); first: {e}",
            r.total.errors
        )?;
    }
    Ok(front::outcome_of(&r.total))
}

/// What `-?` prints: the switches from [`args::SWITCHES`], the table the parser reads.
fn usage() -> String {
    format!(
        "Usage: sqliosim sqlio [switches] [file ...]\n{}\
         Defaults: -kR -t1 -s30 -f64 (runs random) -b2 -BN testfile.dat\n\
         Drive letters (E:\\file.dat) map through --drive-map E=/dir or SQLIOSIM_DRIVE_E=/dir.\n",
        crate::bench::switches::usage_lines(args::SWITCHES)
    )
}
