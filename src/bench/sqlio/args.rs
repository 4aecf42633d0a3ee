//! SQLIO v1.5 switches as written in existing scripts (`-kW -t4 -s60 -o8 -b64 -frandom -BH
//! -LS -Fparam.txt file.dat`), the `-F` parameter file, and the drive-letter rule that maps
//! `E:\testfile.dat` onto a Linux directory.
//!
//! Drive rule: `X:\dir\name` becomes `<dir of X>/dir/name`, where the directory of drive X
//! comes from `--drive-map X=/path` (repeatable, ours) or else the environment variable
//! `SQLIOSIM_DRIVE_X`. A path without a drive letter is used as is (backslashes become `/`).

use crate::bench::switches::{
    is_ignored, split_letter, sw, unknown, Effect, Switch, ENGINE, FORCE,
};
use crate::bench::units::{bad, BadArg};
use crate::io::safefile::{Kind, Use};
use std::collections::BTreeMap;
use std::path::PathBuf;
use Effect::{Ignored, Ours, Refused, Used};

/// One test file as the script names it, and where it lives here.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlioFile {
    /// The name as written (shown in the output, so parsers see the same text).
    pub shown: String,
    /// The Linux path after drive mapping.
    pub path: PathBuf,
    /// Threads from the parameter file, if any.
    pub threads: Option<u32>,
    /// Size in MB from the parameter file, if any.
    pub size_mb: Option<u64>,
}

/// The parsed SQLIO command line, with SQLIO's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlioArgs {
    /// `-kW`.
    pub write: bool,
    /// `-t`.
    pub threads: u32,
    /// `-s`.
    pub secs: u64,
    /// `-o` (at least 1: `-o0` runs one I/O at a time).
    pub outstanding: u32,
    /// `-o` given with a value above 0: SQLIO then prints its "enabling multiple I/Os" line.
    pub outstanding_given: bool,
    /// `-b`, KB.
    pub block_kb: u32,
    /// `-fsequential` (numeric stripe factors run random).
    pub sequential: bool,
    /// `-B` mode letter: N, Y, H or S.
    pub buffering: char,
    /// `-B` given: SQLIO prints its "buffering set to" line only then.
    pub buffering_given: bool,
    /// `-LS` / `-LP`.
    pub latency: bool,
    /// `-F` file name, as written.
    pub param_file: Option<String>,
    /// Test files.
    pub files: Vec<SqlioFile>,
    /// Switches accepted for compatibility but without effect here.
    pub ignored: Vec<String>,
    /// `--engine` (ours).
    pub engine: String,
    /// `--force` (ours).
    pub force: bool,
}

/// Drive letter → directory, from `--drive-map` and `SQLIOSIM_DRIVE_<LETTER>`.
#[derive(Debug, Clone, Default)]
pub struct DriveMap {
    map: BTreeMap<char, PathBuf>,
}

impl DriveMap {
    /// Adds `X=/dir`.
    pub fn add(&mut self, spec: &str) -> Result<(), BadArg> {
        let (l, d) = spec
            .split_once('=')
            .ok_or_else(|| bad("--drive-map", spec, "LETTER=DIRECTORY, e.g. E=/mnt/data"))?;
        let mut c = l.chars();
        match (c.next(), c.next()) {
            (Some(x), None) if x.is_ascii_alphabetic() => {
                self.map.insert(x.to_ascii_uppercase(), PathBuf::from(d));
                Ok(())
            }
            _ => Err(bad(
                "--drive-map",
                spec,
                "LETTER=DIRECTORY, e.g. E=/mnt/data",
            )),
        }
    }

    /// Maps a Windows-style name; unmapped drive letters are an error naming the variable.
    pub fn resolve(&self, name: &str) -> Result<PathBuf, String> {
        let b = name.as_bytes();
        if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
            let letter = (b[0] as char).to_ascii_uppercase();
            let rest = name[2..].trim_start_matches(['\\', '/']).replace('\\', "/");
            let dir = self
                .map
                .get(&letter)
                .cloned()
                .or_else(|| std::env::var_os(format!("SQLIOSIM_DRIVE_{letter}")).map(PathBuf::from))
                .ok_or_else(|| {
                    format!("{name}: drive {letter}: is not mapped; set SQLIOSIM_DRIVE_{letter}=/some/dir or pass --drive-map {letter}=/some/dir")
                })?;
            return Ok(dir.join(rest));
        }
        Ok(PathBuf::from(name.replace('\\', "/")))
    }
}

fn num<T: std::str::FromStr>(switch: &str, v: &str, expected: &'static str) -> Result<T, BadArg> {
    v.parse().map_err(|_| bad(switch, v, expected))
}

fn defaults() -> SqlioArgs {
    SqlioArgs {
        write: false,
        threads: 1,
        secs: 30,
        outstanding: 1,
        outstanding_given: false,
        block_kb: 2,
        sequential: false,
        buffering: 'N',
        buffering_given: false,
        latency: false,
        param_file: None,
        files: Vec::new(),
        ignored: Vec::new(),
        engine: "uring".into(),
        force: false,
    }
}

/// SQLIO v1.5's switches and ours: what the parser accepts, `-?`, the man page and the
/// completions list (see [`crate::bench::switches`]).
pub const SWITCHES: &[Switch] = &[
    sw("-k", "R|W", "read (R, the default) or write (W)", Used),
    sw("-t", "<threads>", "threads per file, 1 to 256 (default 1)", Used),
    sw("-s", "<secs>", "duration in seconds (default 30)", Used),
    sw("-o", "<n>", "outstanding I/Os per thread (default 1; 0 runs one at a time)", Used),
    sw("-b", "<KB>", "I/O size in KB (default 2)", Used),
    sw("-f", "random|sequential|<stripe>", "access pattern; a numeric stripe factor runs random", Used),
    sw("-B", "N|Y|H|S", "buffering: N none (the default: O_DIRECT, write-through), Y all, H hardware only (O_DIRECT), S software only (write-through)", Used),
    sw("-L", "S|P", "latency histogram (system or processor timer, optionally followed by i)", Used),
    sw("-F", "<paramfile>", "parameter file: <file> <threads> [<mask> [<size MB>]] per line, # comments", Used),
    sw("-d", "<drives>", "drive letters: the file name on each drive (X:\\name)", Used),
    sw("-p", "<cpu>", "processor affinity", Ignored),
    sw("-a", "<mask>", "processor affinity mask", Ignored),
    sw("-i", "<n>", "I/Os per run", Ignored),
    sw("-U", "", "report processor use", Ignored),
    sw("-S", "<blocks>", "start that many blocks into the file", Ignored),
    sw("-v", "", "SQLIO 1.1 parameter file format", Ignored),
    sw("-64", "", "64-bit memory operations", Ignored),
    sw("-R", "<drives>", "raw drives: name the device as the file instead, e.g. /dev/sdb (a device without a sqliosim header is only read; -kW needs --force)", Refused),
    sw("-m", "<blocks>", "multi-block I/O", Refused),
    sw("--drive-map", "X=/dir", "map drive letter X to a directory (else SQLIOSIM_DRIVE_X=/dir)", Ours),
    ENGINE,
    FORCE,
];

/// Applies one `-X…` switch.
fn switch(a: &mut SqlioArgs, s: &str, drives: &mut Vec<char>) -> Result<(), BadArg> {
    let (k, v) = split_letter(&s[1..]);
    match k {
        'k' => match v.to_ascii_uppercase().as_str() {
            "R" => a.write = false,
            "W" => a.write = true,
            _ => return Err(bad("-k", v, "R (read) or W (write)")),
        },
        't' => a.threads = num("-t", v, "a thread count from 1 to 256").ok().filter(|t| (1..=256).contains(t)).ok_or_else(|| bad("-t", v, "a thread count from 1 to 256"))?,
        's' => a.secs = num("-s", v, "seconds")?,
        'o' => {
            let n = num::<u32>("-o", v, "outstanding I/Os per thread")?;
            a.outstanding = n.max(1);
            a.outstanding_given = n > 0;
        }
        'b' => a.block_kb = num::<u32>("-b", v, "an I/O size in KB").ok().filter(|b| *b > 0).ok_or_else(|| bad("-b", v, "an I/O size in KB"))?,
        'f' => match v.to_ascii_lowercase().as_str() {
            "random" => a.sequential = false,
            "sequential" => a.sequential = true,
            n if n.parse::<u32>().is_ok() => a.sequential = false,
            _ => return Err(bad("-f", v, "random, sequential or a stripe factor")),
        },
        'B' => match v.to_ascii_uppercase().as_str() {
            m @ ("N" | "Y" | "H" | "S") => {
                a.buffering = m.chars().next().unwrap_or('N');
                a.buffering_given = true;
            }
            _ => return Err(bad("-B", v, "N (none), Y (all), H (hardware) or S (software)")),
        },
        'L' => match v.chars().next().map(|c| c.to_ascii_uppercase()) {
            Some('S' | 'P') => a.latency = true,
            _ => return Err(bad("-L", v, "S (system timer) or P (processor timer), optionally followed by i")),
        },
        'F' if v.is_empty() => return Err(bad("-F", v, "a parameter file name, e.g. -Fparam.txt")),
        'F' => a.param_file = Some(v.to_string()),
        'd' => match v {
            v if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphabetic()) => drives.extend(v.chars()),
            _ => return Err(bad("-d", v, "drive letters, e.g. -dEF")),
        },
        c if is_ignored(SWITCHES, c) => a.ignored.push(s.to_string()),
        'R' => return Err(bad("-R", v, "nothing here: raw drives are named as the file instead, e.g. /dev/sdb (a device without a sqliosim header is only read; -kW needs --force)")),
        _ => return Err(unknown(SWITCHES, s)),
    }
    Ok(())
}

/// Parses SQLIO's switches (after the display name) plus our `--drive-map`, `--engine`,
/// `--force`; then reads the parameter file and maps drive letters.
pub fn parse(args: &[String]) -> Result<SqlioArgs, String> {
    let mut a = defaults();
    let mut drives = Vec::new();
    let mut names = Vec::new();
    let mut map = DriveMap::default();
    let mut it = args.iter();
    while let Some(s) = it.next() {
        match s.as_str() {
            "--drive-map" => map
                .add(it.next().map(String::as_str).unwrap_or(""))
                .map_err(|e| e.to_string())?,
            "--engine" => a.engine = it.next().cloned().unwrap_or_default(),
            "--force" => a.force = true,
            x if x.starts_with("--drive-map=") => map.add(&x[12..]).map_err(|e| e.to_string())?,
            x if x.starts_with('-') && x.len() > 1 => {
                switch(&mut a, x, &mut drives).map_err(|e| e.to_string())?
            }
            x => names.push(x.to_string()),
        }
    }
    let listed = match &a.param_file {
        Some(p) => read_param_file(&map, p)?,
        None => Vec::new(),
    };
    a.files = if listed.is_empty() {
        plain_files(&map, &names, &drives)?
    } else {
        listed
    };
    Ok(a)
}

fn plain_files(
    map: &DriveMap,
    names: &[String],
    drives: &[char],
) -> Result<Vec<SqlioFile>, String> {
    let names = if names.is_empty() {
        vec!["testfile.dat".to_string()]
    } else {
        names.to_vec()
    };
    let mut shown = Vec::new();
    for n in &names {
        if drives.is_empty() {
            shown.push(n.clone());
        } else {
            shown.extend(
                drives
                    .iter()
                    .map(|d| format!("{d}:\\{}", n.trim_start_matches('\\'))),
            );
        }
    }
    shown
        .into_iter()
        .map(|s| {
            Ok(SqlioFile {
                path: map.resolve(&s)?,
                shown: s,
                threads: None,
                size_mb: None,
            })
        })
        .collect()
}

/// Reads `param.txt`: `<file> <threads> [<mask> [<size MB>]]` per line, `#` comments.
pub fn read_param_file(map: &DriveMap, name: &str) -> Result<Vec<SqlioFile>, String> {
    let path = map.resolve(name)?;
    // A FIFO is refused, not waited on; a file past the limit is refused unread.
    let bytes = crate::io::safefile::read_bounded(&path, Use::Input, Kind::ParamFile)
        .map_err(|e| format!("-F{name}: cannot read it: {e}"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("-F{name}: {} is not UTF-8 text", path.display()))?;
    parse_param_text(map, name, &text)
}

/// Parses the text of a parameter file.
pub fn parse_param_text(map: &DriveMap, name: &str, text: &str) -> Result<Vec<SqlioFile>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let at = |what: &str| {
            format!(
                "{name} line {}: {what} (expected <file> <threads> [<mask> [<size MB>]])",
                i + 1
            )
        };
        let threads: u32 = f
            .get(1)
            .and_then(|t| t.parse().ok())
            .filter(|t| (1..=256).contains(t))
            .ok_or_else(|| at("bad thread count"))?;
        let size_mb = match f.get(3) {
            Some(s) => Some(s.parse::<u64>().map_err(|_| at("bad size"))?),
            None => None,
        };
        out.push(SqlioFile {
            path: map.resolve(f[0])?,
            shown: f[0].to_string(),
            threads: Some(threads),
            size_mb,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_accepts_exactly_the_switches_of_its_table() {
        crate::bench::switches::assert_parser_reads(SWITCHES, |typed| {
            parse(&[typed.to_string()]).map(|a| a.ignored)
        });
    }

    #[test]
    fn a_non_ascii_switch_is_an_error_not_a_panic() {
        let err = parse(&["-é".to_string()]).expect_err("not a switch");
        assert!(err.contains("-é") && err.contains("-k"), "{err}");
    }
}
