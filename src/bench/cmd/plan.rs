//! Turns [`BenchArgs`] into validated settings: a base [`Job`] and the matrix of cells
//! (block size × pattern × rw × threads × outstanding) to run it over.

use super::args::BenchArgs;
use crate::bench::error::BenchError;
use crate::bench::job::{DataMode, Job, Pattern, TestFile};
use crate::bench::sweep::Cell;
use crate::bench::target;
use crate::bench::units::{bad, parse_count_list, parse_list, parse_secs, parse_size, BadArg};
use crate::io::aio::RingKind;
use std::path::{Path, PathBuf};

/// Base job plus the matrix.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Settings shared by every cell.
    pub base: Job,
    /// Every combination, in run order.
    pub cells: Vec<Cell>,
    /// Passes per cell.
    pub repeat: u32,
}

fn pattern(switch: &str, s: &str) -> Result<Pattern, BadArg> {
    match s {
        "random" | "rand" => Ok(Pattern::Random),
        "sequential" | "seq" => Ok(Pattern::Sequential),
        _ => Err(bad(switch, s, "random or sequential")),
    }
}

fn rw(read_pct: u8) -> impl Fn(&str, &str) -> Result<u8, BadArg> {
    move |switch, s| match s {
        "read" => Ok(100),
        "write" => Ok(0),
        "mix" => Ok(read_pct),
        _ => Err(bad(switch, s, "read, write or mix")),
    }
}

fn block(switch: &str, s: &str) -> Result<u32, BadArg> {
    let v = parse_size(switch, s)?;
    u32::try_from(v)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| bad(switch, s, "a block size up to 4G"))
}

/// Size to use for `path`: `--size`, else what [`target::default_size`] finds.
fn target_size(path: &Path, size: Option<u64>) -> u64 {
    size.unwrap_or_else(|| target::default_size(path))
}

fn ring_kind(s: &str) -> Result<RingKind, BadArg> {
    RingKind::from_name(s).ok_or_else(|| bad("--engine", s, "uring, psync or libaio"))
}

fn data(s: &str) -> Result<DataMode, BadArg> {
    match s {
        "random" => Ok(DataMode::Random),
        "zeros" | "zero" => Ok(DataMode::Zeros),
        _ => Err(bad("--data", s, "random or zeros")),
    }
}

fn targets(a: &BenchArgs) -> Result<Vec<TestFile>, BenchError> {
    let size = a
        .size
        .as_deref()
        .map(|s| parse_size("--size", s))
        .transpose()?;
    let paths: Vec<PathBuf> = match &a.dir {
        Some(d) => vec![d.join("sqliosim-bench.dat")],
        None => a.files.clone(),
    };
    if paths.is_empty() {
        return Err(BenchError::Usage(
            "no test file: give --file PATH or --dir DIR".into(),
        ));
    }
    Ok(paths
        .into_iter()
        .map(|p| TestFile {
            size: target_size(&p, size),
            path: p,
        })
        .collect())
}

/// Validates the arguments into a plan.
pub fn plan(a: &BenchArgs) -> Result<Plan, BenchError> {
    if a.read_pct > 100 {
        return Err(bad("--read-pct", &a.read_pct.to_string(), "0 to 100").into());
    }
    if a.repeat == 0 {
        return Err(bad("--repeat", "0", "at least 1").into());
    }
    let base = Job {
        targets: targets(a)?,
        warmup_s: parse_secs("--warmup", &a.warmup)?,
        duration_s: parse_secs("--duration", &a.duration)?,
        cooldown_s: parse_secs("--cooldown", &a.cooldown)?,
        direct: !a.buffered,
        write_through: a.write_through,
        data: data(&a.data)?,
        verify: a.verify,
        rate_iops: a.rate_iops,
        ring_kind: ring_kind(a.engine.as_deref().unwrap_or("uring"))?,
        engine_probe: true,
        engine_named: a.engine.is_some(),
        submit_batch: a.submit_batch,
        base_offset: parse_size("--offset", &a.offset)?,
        max_offset: a
            .max_offset
            .as_deref()
            .map(|s| parse_size("--max-offset", s))
            .transpose()?,
        force: a.force,
        seed: a.seed,
        ..Job::with_defaults(PathBuf::new(), 0)
    };
    let cells = matrix(a)?;
    for c in &cells {
        c.apply(&base).validate()?;
    }
    Ok(Plan {
        base,
        cells,
        repeat: a.repeat,
    })
}

fn matrix(a: &BenchArgs) -> Result<Vec<Cell>, BenchError> {
    let blocks = parse_list("--block-size", &a.block_size, block)?;
    let patterns = parse_list("--pattern", &a.pattern, pattern)?;
    let rws = parse_list("--rw", &a.rw, rw(a.read_pct))?;
    let threads = parse_count_list("--threads", &a.threads)?;
    let outs = parse_count_list("--outstanding", &a.outstanding)?;
    let mut cells = Vec::new();
    for &block_size in &blocks {
        for &pattern in &patterns {
            for &read_pct in &rws {
                for &t in &threads {
                    for &o in &outs {
                        cells.push(Cell {
                            block_size,
                            pattern,
                            read_pct,
                            threads: t,
                            outstanding: o,
                        });
                    }
                }
            }
        }
    }
    Ok(cells)
}
