//! Command-line arguments of the `faultfs` binary → validated options. No I/O.

use std::path::PathBuf;

use crate::spec::{parse_fault, FaultSpec};

/// Usage text printed for `--help` and after a usage error.
pub const USAGE: &str = "\
usage: faultfs BACKING_DIR MOUNTPOINT [--threads N] [--seed N] [--fault SPEC]... [--verbose]
               [--refuse-direct] [--ignore-dsync] [--volatile-cache] [--cache-max MIB]

Mounts a FUSE filesystem at MOUNTPOINT whose files pass through to BACKING_DIR and
which injects storage faults on command. Control: MOUNTPOINT/.faultfs-control
(write `inject KIND key=value...`, `clear [ID]`, `seed N`; read for status).
--fault SPEC arms a fault at mount time; SPEC is the text after `inject`,
e.g. --fault 'lost file=data.mdf page=5'. --refuse-direct fails every open with O_DIRECT
(EINVAL), like a filesystem without direct I/O. --volatile-cache holds writes in memory until
an fsync (or an O_DSYNC write), like a disk's write cache; `power-cut` drops them,
`lie on` acknowledges flushes without persisting. --cache-max bounds it (MiB, default 64).
--ignore-dsync makes only an fsync durable, not a write's O_DSYNC flag (as some FUSE daemons).
See faultfs/README.md.";

/// Validated settings of one daemon run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Directory whose files the mount shows.
    pub backing: PathBuf,
    /// Where to mount.
    pub mountpoint: PathBuf,
    /// FUSE worker threads (default 2, so one delayed request does not stall all).
    pub threads: usize,
    /// Seed for every random choice of the faults (default 0).
    pub seed: u64,
    /// Faults armed before the first request.
    pub faults: Vec<FaultSpec>,
    /// Log fault firings and rejected requests to stderr.
    pub verbose: bool,
    /// Fail opens with O_DIRECT with EINVAL.
    pub refuse_direct: bool,
    /// Ignore the O_DSYNC flag of writes: only an fsync makes data durable.
    pub ignore_dsync: bool,
    /// Start with the volatile write cache on.
    pub volatile_cache: bool,
    /// Bound of the volatile cache in MiB.
    pub cache_max_mib: u64,
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Run the daemon.
    Run(Options),
    /// Print the usage and exit 0.
    Help,
}

/// Parses the arguments after the program name.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, String> {
    let mut positional = Vec::new();
    let (mut threads, mut seed, mut faults, mut verbose) = (2, 0, Vec::new(), false);
    let (mut refuse_direct, mut ignore_dsync) = (false, false);
    let (mut volatile_cache, mut cache_max_mib) = (false, crate::cache::DEFAULT_MAX_MIB);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "-v" | "--verbose" => verbose = true,
            "--refuse-direct" => refuse_direct = true,
            "--ignore-dsync" => ignore_dsync = true,
            "--volatile-cache" => volatile_cache = true,
            "--cache-max" => cache_max_mib = number(&value("--cache-max")?, "--cache-max")?,
            "--threads" => threads = number(&value("--threads")?, "--threads")?,
            "--seed" => seed = number(&value("--seed")?, "--seed")?,
            "--fault" => {
                let spec = value("--fault")?;
                faults.push(parse_fault(&spec).map_err(|e| format!("--fault {spec:?}: {e}"))?);
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let [backing, mountpoint]: [PathBuf; 2] = positional
        .try_into()
        .map_err(|_| "expected BACKING_DIR and MOUNTPOINT".to_string())?;
    if !(1..=64).contains(&threads) {
        return Err("--threads must be 1..=64".into());
    }
    if !(1..=1 << 20).contains(&cache_max_mib) {
        return Err("--cache-max must be 1..=1048576 (MiB)".into());
    }
    let threads = threads as usize;
    Ok(Parsed::Run(Options {
        backing,
        mountpoint,
        threads,
        seed,
        faults,
        verbose,
        refuse_direct,
        ignore_dsync,
        volatile_cache,
        cache_max_mib,
    }))
}

fn number(text: &str, name: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("{name}: {text:?} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Parsed, String> {
        parse_args(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn full_command_line_parses() {
        let parsed = args(&[
            "b",
            "m",
            "--threads",
            "3",
            "--seed",
            "9",
            "--fault",
            "lost page=1",
            "-v",
        ]);
        let Ok(Parsed::Run(o)) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!((o.backing, o.mountpoint), ("b".into(), "m".into()));
        assert_eq!(
            (o.threads, o.seed, o.faults.len(), o.verbose),
            (3, 9, 1, true)
        );
    }

    #[test]
    fn cache_options_parse() {
        let parsed = args(&["b", "m", "--volatile-cache", "--cache-max", "8"]);
        let Ok(Parsed::Run(o)) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!((o.volatile_cache, o.cache_max_mib), (true, 8));
        let Ok(Parsed::Run(o)) = args(&["b", "m"]) else {
            panic!("defaults")
        };
        assert_eq!((o.volatile_cache, o.cache_max_mib), (false, 64));
    }

    #[test]
    fn mistakes_are_reported() {
        assert!(args(&["b"]).is_err());
        assert!(args(&["b", "m", "x"]).is_err());
        assert!(args(&["b", "m", "--threads", "0"]).is_err());
        assert!(args(&["b", "m", "--fault", "melt"])
            .unwrap_err()
            .contains("melt"));
        assert!(args(&["b", "m", "--seed"]).is_err());
        assert!(args(&["b", "m", "--cache-max", "0"]).is_err());
        assert_eq!(args(&["--help"]), Ok(Parsed::Help));
    }
}
