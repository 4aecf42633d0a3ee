//! `sqliosim diskspd`: runs a capacity job from DiskSpd switches and prints DiskSpd's text
//! or XML result layout. Like DiskSpd, a target is opened cached unless `-Su`/`-Sh` is given;
//! our honesty warnings go to stderr.

pub mod args;
pub mod text;
pub mod topology;
pub mod xml;

use crate::bench::error::BenchError;
use crate::bench::job::{DataMode, Job, Pattern, TestFile};
use crate::bench::run::{self, RunResult};
use crate::bench::sqlio::args::DriveMap;
use crate::bench::{front, signals};
use crate::exit::Outcome;
use crate::io::aio::RingKind;
use std::ffi::OsString;
use std::io::Write;

/// What the renderers need besides the switches.
pub struct Report {
    /// The run.
    pub result: RunResult,
    /// Host name.
    pub host: String,
    /// Start time, UTC.
    pub start_time: String,
    /// Where each CPU sits (socket, NUMA node, core), for the XML layout.
    pub topology: topology::Topology,
}

impl Report {
    /// "io_uring", "psync threads" or "kernel AIO", for the input-parameter echo.
    pub fn ring_line(&self) -> &'static str {
        match self.result.ring_kind {
            RingKind::Uring => "io_uring",
            RingKind::Psync => "psync threads",
            RingKind::Kaio => "kernel AIO",
        }
    }
}

/// `sqliosim diskspd ARGS…`; `args[0]` is the display name ("sqliosim diskspd").
pub fn main(args: Vec<OsString>) -> Result<Outcome, BenchError> {
    run_with(
        &args,
        &mut crate::exit::Stdout,
        &mut std::io::stderr().lock(),
    )
}

fn size_of(path: &std::path::Path, create: Option<u64>) -> Result<u64, BenchError> {
    if let Some(c) = create {
        return Ok(c);
    }
    if crate::bench::target::is_block_device(path) {
        return Ok(crate::bench::target::default_size(path));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(m.len()),
        // A FIFO, socket, character device or directory has no size to test over.
        Ok(m) => Err(BenchError::Usage(format!(
            "{}: {}; a target must be a regular file or a block device",
            path.display(),
            kind_of(&m)
        ))),
        Err(_) => Err(BenchError::Usage(format!(
            "{}: the target does not exist; give -c<size> to create it",
            path.display()
        ))),
    }
}

/// What a target that is neither a regular file nor a block device is, for the refusal.
fn kind_of(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    match () {
        () if t.is_fifo() => "is a FIFO",
        () if t.is_dir() => "is a directory",
        () if t.is_socket() => "is a socket",
        () if t.is_char_device() => "is a character device",
        () => "is not a regular file",
    }
}

/// Builds the job from parsed switches.
pub fn job_of(a: &args::DiskspdArgs) -> Result<Job, BenchError> {
    let map = DriveMap::default();
    let mut targets = Vec::new();
    for t in &a.targets {
        let path = map.resolve(t).map_err(BenchError::Usage)?;
        targets.push(TestFile {
            size: size_of(&path, a.create)?,
            path,
        });
    }
    let per_target = match a.total_threads {
        Some(f) => (f / targets.len() as u32).max(1),
        None => a.threads,
    };
    let block_size = u32::try_from(a.block)
        .map_err(|_| BenchError::Usage(format!("-b: {} is too large", a.block)))?;
    let threads = per_target * targets.len() as u32;
    let rate_iops = a.throughput.map(|(v, iops)| {
        let per_thread = if iops {
            v
        } else {
            v * 1000.0 / f64::from(block_size)
        };
        per_thread * f64::from(threads)
    });
    let ring_kind = front::ring_kind_of(&a.engine)?;
    Ok(Job {
        targets,
        threads_per_target: per_target,
        depth: a.outstanding,
        block_size,
        read_pct: 100 - a.write_pct,
        pattern: if a.random.is_some() {
            Pattern::Random
        } else {
            Pattern::Sequential
        },
        warmup_s: a.warmup,
        duration_s: a.duration,
        cooldown_s: a.cooldown,
        direct: a.no_cache,
        write_through: a.write_through,
        data: if a.zeros {
            DataMode::Zeros
        } else {
            DataMode::Random
        },
        rate_iops,
        ring_kind,
        // DiskSpd's offsets count from the start of the target; the first MiB holds our
        // header, so a smaller base offset starts there (a note says so).
        base_offset: a.base_offset.max(crate::bench::target::DATA_OFFSET),
        max_offset: a.max_offset,
        force: a.force,
        seed: a.seed,
        ..Job::with_defaults(Default::default(), 0)
    })
}

fn host() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

fn now_utc() -> String {
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    time::OffsetDateTime::now_utc()
        .format(&f)
        .unwrap_or_default()
}

/// Runs `sqliosim diskspd` with `args`, the report to `out`, notes to `err`.
pub fn run_with(
    args: &[OsString],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, BenchError> {
    let strings = front::arg_strings(args)?;
    if strings.is_empty()
        || strings
            .iter()
            .any(|s| s == "-?" || s == "/?" || s == "--help")
    {
        let _ = write!(out, "{}", usage());
        return Ok(Outcome::Clean);
    }
    let a = args::parse(&strings)?;
    front::note_ignored(err, "diskspd", &a.ignored)?;
    if a.base_offset < crate::bench::target::DATA_OFFSET && a.base_offset > 0 {
        writeln!(
            err,
            "sqliosim diskspd: note: -B{} is below 1 MiB, which holds the target's header; \
             I/O starts at 1 MiB",
            a.base_offset
        )?;
    }
    let job = job_of(&a)?;
    let start_time = now_utc();
    let result = run::run(&job, &signals::stop_flag())?;
    let rep = Report {
        result,
        host: host(),
        start_time,
        topology: topology::Topology::read(),
    };
    match a.format {
        args::Format::Text => write!(out, "{}", text::render(&a, &rep))?,
        args::Format::Xml => write!(out, "{}", xml::render(&a, &rep)?)?,
    }
    front::warn_all(err, "diskspd", &rep.result.warnings)?;
    Ok(front::outcome_of(&rep.result.total))
}

/// What `-?` prints: the switches from [`args::SWITCHES`], the table the parser reads.
fn usage() -> String {
    format!(
        "Usage: sqliosim diskspd [switches] target [target ...]\n{}\
         Switches start with - or / (/b8K is -b8K, as on Windows); sizes take K/M/G suffixes.\n\
         Defaults (as DiskSpd): -d10 -W5 -C0 -b64K -o2 -t1, sequential, reads, cached\n",
        crate::bench::switches::usage_lines(args::SWITCHES)
    )
}
