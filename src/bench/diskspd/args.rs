//! DiskSpd switches (the common subset: `-c -d -W -C -r -s -w -t -F -o -b -S -L -D -Z -g -z
//! -R -B -f`, sizes with K/M/G suffixes) and the settings they mean. Switches that only tune
//! Windows (affinity, priority, ETW) are accepted and reported as without effect. Switches
//! that would change what is measured and are not implemented (`-si`, a `-s` stride, `-X`
//! profiles) are refused, never run as something else.
//!
//! As on Windows, a switch may start with `/` (`/b8K` is `-b8K`). On Linux `/` also starts
//! every absolute path, so an argument is taken as a `/` switch only when the letter after the
//! `/` is a DiskSpd switch letter, it holds no other `/`, and no such file exists: `/mnt/x.dat`
//! and an existing `/data.dat` are targets, `/d60` is `-d60`. A target directly under `/` that
//! does not exist yet and starts with a switch letter is written `//name`.

use crate::bench::error::BenchError;
use crate::bench::switches::{
    is_ignored, is_letter, split_letter, sw, unknown, Effect, Switch, ENGINE, FORCE,
};
use crate::bench::units::{bad, parse_size, BadArg};
use Effect::{Ignored, Refused, Used};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `-Rtext` (default).
    Text,
    /// `-Rxml`.
    Xml,
}

/// Parsed DiskSpd command line, with DiskSpd's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskspdArgs {
    /// `-c`: create targets of this size.
    pub create: Option<u64>,
    /// `-d` seconds.
    pub duration: f64,
    /// `-W` seconds.
    pub warmup: f64,
    /// `-C` seconds.
    pub cooldown: f64,
    /// `-r`: random, with this alignment (0 = block size).
    pub random: Option<u64>,
    /// `-w` percentage of writes.
    pub write_pct: u8,
    /// `-t` threads per target.
    pub threads: u32,
    /// `-F` total threads (overrides `-t`, spread over targets).
    pub total_threads: Option<u32>,
    /// `-o` outstanding per thread.
    pub outstanding: u32,
    /// `-b` block size.
    pub block: u64,
    /// `-Su` / `-Sh`: no software cache (O_DIRECT).
    pub no_cache: bool,
    /// `-Sw` / `-Sh`: write-through (O_DSYNC).
    pub write_through: bool,
    /// `-L`.
    pub latency: bool,
    /// `-D` interval in ms, for the IOPS standard deviation.
    pub iops_interval_ms: Option<u64>,
    /// `-Z`: zero-filled write buffers.
    pub zeros: bool,
    /// `-g`: (value, in IOPS rather than bytes per ms).
    pub throughput: Option<(f64, bool)>,
    /// `-z` seed.
    pub seed: u64,
    /// `-B`: base offset of the I/O region.
    pub base_offset: u64,
    /// `-f<size>`: only the first `size` bytes of each target are used.
    pub max_offset: Option<u64>,
    /// `-R`.
    pub format: Format,
    /// Targets as written.
    pub targets: Vec<String>,
    /// Accepted switches without effect here.
    pub ignored: Vec<String>,
    /// `--engine` (ours).
    pub engine: String,
    /// `--force` (ours).
    pub force: bool,
    /// The command line, for the "Command Line:" echo.
    pub command_line: String,
}

impl DiskspdArgs {
    /// Target `i` as the report names it: as typed (`D:\testfile.dat`), as DiskSpd does,
    /// whatever directory its drive maps to; `resolved` when there is no such target.
    pub fn shown<'a>(&'a self, i: usize, resolved: &'a str) -> &'a str {
        self.targets.get(i).map_or(resolved, String::as_str)
    }
}

fn defaults() -> DiskspdArgs {
    DiskspdArgs {
        create: None,
        duration: 10.0,
        warmup: 5.0,
        cooldown: 0.0,
        random: None,
        write_pct: 0,
        threads: 1,
        total_threads: None,
        outstanding: 2,
        block: 64 << 10,
        no_cache: false,
        write_through: false,
        latency: false,
        iops_interval_ms: None,
        zeros: false,
        throughput: None,
        seed: 0,
        base_offset: 0,
        max_offset: None,
        format: Format::Text,
        targets: Vec::new(),
        ignored: Vec::new(),
        engine: "uring".into(),
        force: false,
        command_line: String::new(),
    }
}

fn count(sw: &str, v: &str) -> Result<u32, BadArg> {
    v.parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| bad(sw, v, "a positive whole number"))
}

fn secs(sw: &str, v: &str) -> Result<f64, BadArg> {
    v.parse::<u32>()
        .map(f64::from)
        .map_err(|_| bad(sw, v, "whole seconds"))
}

fn caching(a: &mut DiskspdArgs, v: &str) -> Result<(), BadArg> {
    let v = if v.is_empty() { "u" } else { v };
    for c in v.chars() {
        match c {
            'u' => a.no_cache = true,
            'w' => a.write_through = true,
            'h' => (a.no_cache, a.write_through) = (true, true),
            'b' | 'r' => a.no_cache = false,
            _ => {
                return Err(bad(
                    "-S",
                    v,
                    "b, h, r, u, w or a combination such as uw (m is not supported)",
                ))
            }
        }
    }
    Ok(())
}

fn throughput(v: &str) -> Result<(f64, bool), BadArg> {
    let (n, iops) = match v.strip_suffix('i') {
        Some(n) => (n, true),
        None => (v, false),
    };
    let n: f64 = n.parse().ok().filter(|x: &f64| *x > 0.0).ok_or_else(|| {
        bad(
            "-g",
            v,
            "bytes per ms, or IOPS with a trailing i (e.g. -g500i)",
        )
    })?;
    Ok((n, iops))
}

/// The switch in `arg` when it is a `/`-prefixed one (without the `/`), by the module's rule.
fn slash_switch(arg: &str) -> Option<&str> {
    let rest = arg.strip_prefix('/')?;
    let letter = rest.chars().next()?;
    let switch =
        is_letter(SWITCHES, letter) && !rest.contains('/') && !std::path::Path::new(arg).exists();
    switch.then_some(rest)
}

/// `-s[i][stride]`: plain `-s` only. DiskSpd's `-si` shares one offset among a target's
/// threads, and a stride skips blocks; running either as plain `-s` would measure another
/// pattern under the same name, so both are refused.
fn sequential(a: &mut DiskspdArgs, v: &str) -> Result<(), BenchError> {
    match v {
        "" => a.random = None,
        v if v.starts_with('i') => return Err(BenchError::Usage(format!(
            "-s{v}: -si (one sequential offset shared by the threads of a target) is not supported; \
             use -s, with which each thread reads its own sequential range, or -s with -t1"
        ))),
        v => return Err(BenchError::Usage(format!(
            "-s{v}: a sequential stride is not supported; use -s (each I/O follows the previous one)"
        ))),
    }
    Ok(())
}

/// DiskSpd's switches and ours: what the parser accepts, `-?`, the man page and the
/// completions list (see [`crate::bench::switches`]); a `/` argument starting with one of
/// their letters is a switch (the module's rule).
pub const SWITCHES: &[Switch] = &[
    sw("-c", "<size>", "create the targets at this size (K/M/G suffixes)", Used),
    sw("-d", "<s>", "duration in seconds (default 10)", Used),
    sw("-W", "<s>", "warm-up in seconds, not measured (default 5)", Used),
    sw("-C", "<s>", "cool-down in seconds, not measured (default 0)", Used),
    sw("-r", "[align]", "random I/O, aligned to the block size or to align", Used),
    sw("-s", "", "sequential I/O, each thread its own range (the default)", Used),
    sw("-w", "<pct>", "percentage of writes, 0 to 100 (default 0)", Used),
    sw("-t", "<n>", "threads per target (default 1)", Used),
    sw("-F", "<n>", "threads in all, spread over the targets (overrides -t)", Used),
    sw("-o", "<n>", "outstanding I/Os per thread (default 2)", Used),
    sw("-O", "<n>", "taken as -o", Used),
    sw("-b", "<size>", "block size (default 64K)", Used),
    sw("-S", "[b|h|r|u|w]", "caching: u no software cache (O_DIRECT), w write-through (O_DSYNC), h both, b or r cached", Used),
    sw("-h", "", "the same as -Sh", Used),
    sw("-L", "", "latency statistics", Used),
    sw("-D", "[ms]", "IOPS standard deviation over intervals of ms (default 1000)", Used),
    sw("-Z", "[r]", "zero-filled write buffers (-Zr: random; -Z<size> is accepted without effect)", Used),
    sw("-g", "<bytes/ms>[i]", "throughput limit per thread, or IOPS with a trailing i", Used),
    sw("-z", "[seed]", "random seed (default 0)", Used),
    sw("-B", "<offset>", "base offset of the I/O region", Used),
    sw("-f", "<size>", "use only the first size bytes of each target (-fr, -fs, -ft… access hints are accepted without effect)", Used),
    sw("-R", "text|xml", "output format (default text)", Used),
    sw("-a", "<cpus>", "processor affinity", Ignored),
    sw("-n", "", "no processor affinity", Ignored),
    sw("-x", "", "I/O completion routines", Ignored),
    sw("-v", "", "verbose output", Ignored),
    sw("-P", "<n>", "progress dots", Ignored),
    sw("-I", "<priority>", "I/O priority", Ignored),
    sw("-l", "", "large pages", Ignored),
    sw("-e", "<timer>", "Windows timer or event tracing choice", Ignored),
    sw("-N", "<mode>", "Windows-only mode", Ignored),
    sw("-y", "<event>", "Windows synchronization events", Ignored),
    sw("-si", "", "one sequential offset shared by a target's threads: use -s", Refused),
    sw("-X", "<profile>", "XML profiles: give the switches on the command line", Refused),
    sw("-i", "<n>", "burst size", Refused),
    sw("-j", "<ms>", "delay between bursts", Refused),
    sw("-T", "<offset>", "stride between threads", Refused),
    ENGINE,
    FORCE,
];

/// Applies one switch (without its leading `-` or `/`).
fn switch(a: &mut DiskspdArgs, s: &str) -> Result<(), BenchError> {
    let (k, v) = split_letter(s);
    match k {
        'c' => a.create = Some(parse_size("-c", v)?),
        'd' => a.duration = secs("-d", v)?,
        'W' => a.warmup = secs("-W", v)?,
        'C' => a.cooldown = secs("-C", v)?,
        'r' if v.is_empty() => a.random = Some(0),
        'r' => {
            a.random = Some(parse_size("-r", v).map_err(|_| {
                bad(
                    "-r",
                    v,
                    "an alignment such as 4K (-rs and -rd are not supported)",
                )
            })?)
        }
        's' => sequential(a, v)?,
        'X' => {
            return Err(BenchError::Usage(format!(
            "-X{v}: XML profiles (-X) are not supported; give the switches on the command line \
             (sqliosim diskspd -? lists them)"
        )))
        }
        'w' => {
            a.write_pct = v
                .parse()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| bad("-w", v, "a write percentage from 0 to 100"))?
        }
        't' => a.threads = count("-t", v)?,
        'F' => a.total_threads = Some(count("-F", v)?),
        'o' | 'O' => a.outstanding = count("-o", v)?,
        'b' => a.block = parse_size("-b", v)?,
        'S' => caching(a, v)?,
        'h' if v.is_empty() => caching(a, "h")?,
        'L' if v.is_empty() => a.latency = true,
        'D' => {
            a.iops_interval_ms = Some(if v.is_empty() {
                1000
            } else {
                u64::from(count("-D", v)?)
            })
        }
        'Z' if v.is_empty() => a.zeros = true,
        'Z' if v == "r" => a.zeros = false,
        'Z' => a.ignored.push(format!("-{s}")),
        'g' => a.throughput = Some(throughput(v)?),
        'B' => a.base_offset = parse_size("-B", v)?,
        // -f<size> limits the region; -fr, -fs, -ft, -fd… are Windows access hints.
        'f' if v.starts_with(|c: char| c.is_ascii_digit()) => {
            a.max_offset = Some(parse_size("-f", v)?)
        }
        'f' => a.ignored.push(format!("-{s}")),
        'z' => {
            a.seed = if v.is_empty() {
                0
            } else {
                v.parse().map_err(|_| bad("-z", v, "a numeric seed"))?
            }
        }
        'R' => {
            a.format = match v.trim_start_matches('p') {
                "text" => Format::Text,
                "xml" => Format::Xml,
                _ => {
                    return Err(bad(
                        "-R",
                        v,
                        "text or xml (DiskSpd writes its results in no other form; `sqliosim bench --json FILE` writes them as JSON)",
                    )
                    .into())
                }
            }
        }
        c if is_ignored(SWITCHES, c) => a.ignored.push(format!("-{s}")),
        _ => return Err(unknown(SWITCHES, &format!("-{s}")).into()),
    }
    Ok(())
}

/// Parses DiskSpd's switches (after the display name) plus `--engine` and `--force`.
pub fn parse(args: &[String]) -> Result<DiskspdArgs, BenchError> {
    let mut a = defaults();
    a.command_line = std::iter::once("diskspd")
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let mut it = args.iter();
    while let Some(s) = it.next() {
        match s.as_str() {
            "--engine" => a.engine = it.next().cloned().unwrap_or_default(),
            "--force" => a.force = true,
            x if x.starts_with('-') && x.len() > 1 => switch(&mut a, &x[1..])?,
            x if slash_switch(x).is_some() => switch(&mut a, &x[1..])?,
            x => a.targets.push(x.to_string()),
        }
    }
    if a.targets.is_empty() {
        return Err(bad("target", "", "at least one target file, e.g. testfile.dat").into());
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(switch: &str) -> Result<DiskspdArgs, String> {
        parse(&[switch.to_string(), "t.dat".to_string()]).map_err(|e| e.to_string())
    }

    #[test]
    fn the_parser_accepts_exactly_the_switches_of_its_table() {
        crate::bench::switches::assert_parser_reads(SWITCHES, |typed| {
            parse_one(typed).map(|a| a.ignored)
        });
    }

    #[test]
    fn a_non_ascii_switch_is_an_error_not_a_panic() {
        assert!(parse_one("-é").is_err_and(|e| e.contains("-é")));
        assert!(parse_one("/é").is_ok_and(|a| a.targets == ["/é", "t.dat"]));
    }
}
