//! `sqliosim run --bench "ARGS"`: a capacity run in the same process, beside the simulation.
//! The bench options are checked before the simulation starts; the bench runs in its own
//! thread and its report is printed after the simulation's.

use std::ffi::OsString;
use std::thread::JoinHandle;

use crate::bench::cmd::args::BenchArgs;
use crate::bench::cmd::{parse, plan};
use crate::exit::Outcome;

/// A capacity run going on beside the simulation.
pub struct Beside {
    args: String,
    handle: JoinHandle<(anyhow::Result<Outcome>, Vec<u8>)>,
}

/// The bench arguments of `--bench`: whitespace-separated `sqliosim bench` options.
fn argv(spec: &str) -> Vec<OsString> {
    std::iter::once(OsString::from("sqliosim bench"))
        .chain(spec.split_whitespace().map(OsString::from))
        .collect()
}

/// Checks the options (usage errors come out before anything runs), then starts the bench.
pub fn start(spec: &str) -> anyhow::Result<Beside> {
    let args = argv(spec);
    let mut help = Vec::new();
    let parsed: Option<BenchArgs> = parse(&args, &mut help)?;
    let Some(a) = parsed else {
        anyhow::bail!(
            "--bench takes `sqliosim bench` options, not --help; see `sqliosim bench --help`"
        );
    };
    plan::plan(&a)
        .map_err(|e| anyhow::anyhow!("--bench \"{spec}\": {}", crate::exit::error_text(&e)))?;
    let handle = std::thread::spawn(move || {
        let mut out = Vec::new();
        let r = crate::bench::cmd::run_with(&args, &mut out);
        (r, out)
    });
    Ok(Beside {
        args: spec.to_string(),
        handle,
    })
}

impl Beside {
    /// Waits for the bench to finish and prints its report; its outcome joins the run's.
    pub fn finish(self) -> anyhow::Result<Outcome> {
        let (result, out) = self.handle.join().map_err(|_| {
            crate::exit::Internal("the capacity run beside the simulation panicked".into())
        })?;
        crate::exit::outln!(
            "\nCapacity run beside the simulation (sqliosim bench {}):",
            self.args
        )?;
        crate::exit::out!("{}", String::from_utf8_lossy(&out))?;
        result
    }
}
