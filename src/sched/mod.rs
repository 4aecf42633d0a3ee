//! Scheduler: threads, test cycles, stop signal, seed derivation, throttling.

pub mod plan;
pub mod stop;
pub mod throttle;

/// Runs the simulation described by `settings` (stub until the scheduler lands).
pub fn simulate(_settings: &crate::config::RunSettings) -> anyhow::Result<crate::exit::Outcome> {
    anyhow::bail!("the simulation is not available yet")
}
