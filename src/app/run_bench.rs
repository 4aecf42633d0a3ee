//! `sqliosim run --bench "ARGS"`: a capacity run in the same process, beside the simulation.
//! The bench options are checked before the simulation starts; the bench runs in its own
//! thread, is waited for before the run's evidence is finished (its figures go in the JSON
//! summary's `bench`, so in the bundle and the fleet report too), and its report is printed
//! after the simulation's.

use std::ffi::OsString;
use std::thread::JoinHandle;

use crate::bench::cmd::args::BenchArgs;
use crate::bench::cmd::{parse, plan};
use crate::exit::Outcome;
use crate::report::sinks::bench_figures::BenchFigures;

/// What the bench thread gives back: its outcome and JSON document, and its console report.
type BenchResult = (
    anyhow::Result<(Outcome, Option<serde_json::Value>)>,
    Vec<u8>,
);

/// A capacity run going on beside the simulation.
pub struct Beside {
    args: String,
    handle: JoinHandle<BenchResult>,
}

/// A capacity run that ended: its result, its console report and its figures.
pub struct Ended {
    args: String,
    result: anyhow::Result<Outcome>,
    out: Vec<u8>,
    /// What the JSON summary keeps of it.
    pub figures: BenchFigures,
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
    let handle = std::thread::Builder::new()
        .name("bench beside".into())
        .spawn(move || {
            let mut out = Vec::new();
            let r = crate::bench::cmd::run_with_document(&args, &mut out).map_err(super::bench_error);
            (r, out)
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "--bench: cannot start its thread: {e}; raise the limit on processes and threads (ulimit -u) or on memory (ulimit -v)"
            )
        })?;
    Ok(Beside {
        args: spec.to_string(),
        handle,
    })
}

impl Beside {
    /// Waits for the bench to finish.
    pub fn wait(self) -> anyhow::Result<Ended> {
        let (result, out) = self.handle.join().map_err(|_| {
            crate::exit::Internal("the capacity run beside the simulation panicked".into())
        })?;
        let (result, figures) = match result {
            Ok((outcome, doc)) => {
                let word = if outcome == Outcome::Findings {
                    "findings"
                } else {
                    "clean"
                };
                let doc = doc.unwrap_or(serde_json::Value::Null);
                (Ok(outcome), BenchFigures::of(&self.args, word, doc))
            }
            Err(e) => {
                let text = format!("{e:#}");
                (Err(e), BenchFigures::failed(&self.args, text))
            }
        };
        Ok(Ended {
            args: self.args,
            result,
            out,
            figures,
        })
    }
}

impl Ended {
    /// Prints the bench's report; its outcome joins the run's.
    pub fn finish(self) -> anyhow::Result<Outcome> {
        crate::exit::outln!(
            "\nCapacity run beside the simulation (sqliosim bench {}):",
            self.args
        )?;
        crate::exit::out!("{}", String::from_utf8_lossy(&self.out))?;
        self.result
    }
}
