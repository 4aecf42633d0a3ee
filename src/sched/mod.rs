//! Scheduler: threads, test cycles, stop signal, seed derivation, throttling.
