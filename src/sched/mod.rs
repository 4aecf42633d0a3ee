//! Scheduler: threads, test cycles, stop signal, seed derivation, throttling.

pub mod plan;
pub mod stop;
pub mod throttle;
