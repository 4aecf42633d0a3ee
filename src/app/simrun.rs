//! `sqliosim run` after the configuration is resolved: choose the storage backend, fan the
//! events out to the reporters, show progress, simulate, and map the outcome.

use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};

use super::console::{summary_text, ConsoleSink};
use crate::config::RunSettings;
use crate::exit::{Internal, Outcome};
use crate::findings::{EventSink, Fanout};
use crate::io::{Backend, BufferedBackend, DirectBackend};
use crate::sched::from_settings::plan_from;

/// Runs the simulation for resolved settings.
pub fn run(settings: &RunSettings) -> anyhow::Result<Outcome> {
    let plan = plan_from(settings);
    for f in &plan.files {
        if let Some(dir) = f.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create the directory {}: {e}", dir.display()))?;
        }
    }
    let backend: Box<dyn Backend> = if plan.direct { Box::new(DirectBackend::new()) } else { Box::new(BufferedBackend::new()) };
    let sinks: Vec<Arc<dyn EventSink>> = vec![Arc::new(ConsoleSink::default())];
    let sink: Arc<dyn EventSink> = Arc::new(Fanout::new(sinks));
    let bar = progress_bar();
    let tick = |line: &str| {
        if let Some(b) = &bar {
            b.set_message(line.to_string());
        }
    };
    let seed = plan.seed;
    let outcome = crate::sched::simulate(plan, backend.as_ref(), sink, &tick)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    print!("{}", summary_text(&outcome, seed));
    if outcome.worker_panicked {
        return Err(Internal("a worker thread panicked; the results are incomplete".into()).into());
    }
    Ok(if outcome.findings > 0 { Outcome::Findings } else { Outcome::Clean })
}

/// A progress line on a terminal; none when stdout is not one.
fn progress_bar() -> Option<ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(bar)
}
