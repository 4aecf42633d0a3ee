//! Scheduler: threads, test cycles, stop signal, seed derivation, throttling.

/// Runs the simulation described by `settings` (stub until the scheduler lands).
pub fn simulate(_settings: &crate::config::RunSettings) -> anyhow::Result<crate::exit::Outcome> {
    anyhow::bail!("the simulation is not available yet")
}
